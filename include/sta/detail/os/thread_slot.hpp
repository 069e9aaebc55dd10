// sta-pool: the calling thread's pointer slot — what a per-thread pool reads on every
// allocation and free to find the thread's state (home/per_thread.hpp), and what runs
// when the thread ends.
//
//   thread_slot<T, Empty, OnExit>   one pointer per thread and per instantiation
//     get()    the calling thread's value: Empty until the thread sets another
//     set(p)   store p; false when the OS has no slot to give (get() then reads as
//              before)
//     OnExit(value) runs on a thread that ends while its value is not Empty, after the
//     thread's C++ thread_local destructors (os/thread_exit.hpp: how, on each OS).
//     exit_ran()  OnExit ran on the calling thread: what the thread does from here on
//              (a later key destructor, the C library's clean-up after them) may not
//              reach it again. Always false on mingw-w64, whose module walk is the last
//              thing an ending thread runs.
//
// Where the value lives:
//   Linux, MSVC, clang-cl, clang for mingw: a constinit thread_local, reached with the
//     compiler's native TLS — %fs:offset in a Linux executable (STA_POOL_INITIAL_EXEC
//     in detail/config.hpp for a shared library); on Windows the module's TLS block,
//     gs:[0x58][_tls_index] + offset.
//   mingw-w64 g++: g++ has no native TLS on Windows; a thread_local is reached through
//     __emutls_get_address, a call on every access. Instead each slot is a TlsAlloc
//     index of its own, and on x86-64 an index below 64 is read straight from the
//     thread's TEB, gs:[0x1480 + 8 * index] (TEB.TlsSlots): one gs-relative load.
//     The slot holds p - Empty, so a slot never written, which the OS gives every
//     thread as 0, reads as Empty. The index is allocated by the first set(); until
//     then the slot's TEB offset is 0 and get() reads Empty (one branch, predicted; on
//     its other side the TEB is read by the index, without a call). An index of 64 or
//     more (the process took the 64 direct ones first) is read from
//     TEB.TlsExpansionSlots, as TlsGetValue reads it. Another processor than x86-64
//     calls TlsGetValue.
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/os/thread_exit.hpp"

#include <cstdint>

#if defined(__MINGW32__) && !defined(__clang__)
#define STA_THREAD_SLOT_TLS_INDEX 1 // mingw-w64 g++: a TlsAlloc index, not thread_local
#include "sta/detail/atomic.hpp"
#include "sta/detail/os/windows.hpp"
#else
#define STA_THREAD_SLOT_TLS_INDEX 0
#endif

namespace sta::detail {

template <class T>
using thread_slot_exit_fn = void (*)(T*) noexcept;

#if !STA_THREAD_SLOT_TLS_INDEX

/// Where a slot's value lives: a constinit thread_local.
template <class T, T* Empty>
struct thread_slot_value {
    STA_FORCE_INLINE static T* get() noexcept { return value_; }
    static bool set(T* p) noexcept {
        value_ = p;
        return true;
    }

  private:
    STA_TLS_MODEL static constinit inline thread_local T* value_ = Empty;
};

#else

/// Where a slot's value lives: a TlsAlloc index of its own, read from the TEB.
template <class T, T* Empty>
struct thread_slot_value {
    STA_FORCE_INLINE static T* get() noexcept {
#if defined(__x86_64__)
        const std::uintptr_t at = teb_offset_.load(memory_order_relaxed);
        std::uintptr_t v;
        if (at != 0) [[likely]] {
            __asm__("movq %%gs:(%1), %0" : "=r"(v) : "r"(at), "m"(order_));
        } else {
            v = value_by_index();
        }
        return decode(v);
#else
        return get_by_call();
#endif
    }

    static bool set(T* p) noexcept {
        if (!reserve())
            return false;
        const std::uintptr_t v = reinterpret_cast<std::uintptr_t>(p) - empty();
#if defined(__x86_64__)
        if (const std::uintptr_t at = teb_offset_.load(memory_order_relaxed); at != 0) {
            __asm__("movq %1, %%gs:(%2)" : "+m"(order_) : "r"(v), "r"(at));
            return true;
        }
#endif
        const DWORD error = ::GetLastError(); // a pool call leaves the last error alone
        (void)::TlsSetValue(index_.load(memory_order_acquire), reinterpret_cast<void*>(v));
        ::SetLastError(error);
        return true;
    }

  private:
    static constexpr DWORD no_index = TLS_OUT_OF_INDEXES;
    /// TEB.TlsSlots on x86-64: the 64 direct slots, 8 bytes each.
    static constexpr std::uintptr_t teb_tls_slots = 0x1480;
    static constexpr DWORD teb_direct_slots = 64;

    static std::uintptr_t empty() noexcept {
        return reinterpret_cast<std::uintptr_t>(Empty);
    }
    static T* decode(std::uintptr_t v) noexcept {
        return reinterpret_cast<T*>(v + empty());
    }

#if defined(__x86_64__)
    /// The slot's value where teb_offset_ does not lead (yet): 0 before the index exists;
    /// for an index below 64 whose offset this thread does not see yet, TEB.TlsSlots; for
    /// one of 64 or more, TEB.TlsExpansionSlots (gs:[0x1780]), the array TlsSetValue makes
    /// for a thread on its first store there (null before: 0). As TlsGetValue reads them,
    /// without the call, so the fast path around get() needs no frame.
    STA_FORCE_INLINE static std::uintptr_t value_by_index() noexcept {
        const DWORD index = index_.load(memory_order_acquire);
        std::uintptr_t v = 0;
        if (index == no_index)
            return v;
        if (index < teb_direct_slots) {
            __asm__("movq %%gs:(%1), %0"
                    : "=r"(v)
                    : "r"(teb_tls_slots + 8 * std::uintptr_t{index}), "m"(order_));
            return v;
        }
        std::uintptr_t expansion;
        __asm__("movq %%gs:0x1780, %0" : "=r"(expansion) : "m"(order_));
        if (expansion != 0)
            v = reinterpret_cast<const std::uintptr_t*>(expansion)[index - teb_direct_slots];
        return v;
    }
#else
    /// Before the first set() of the process: Empty; then TlsGetValue.
    STA_NOINLINE static T* get_by_call() noexcept {
        const DWORD index = index_.load(memory_order_acquire);
        if (index == no_index)
            return Empty;
        const DWORD error = ::GetLastError(); // TlsGetValue clears it
        void* const v = ::TlsGetValue(index);
        ::SetLastError(error);
        return decode(reinterpret_cast<std::uintptr_t>(v));
    }
#endif

    /// The slot's index, allocated once for the process by whichever thread comes first
    /// (the OS zeroes the new slot in every thread).
    static bool reserve() noexcept {
        if (index_.load(memory_order_acquire) != no_index)
            return true;
        const DWORD mine = ::TlsAlloc();
        if (mine == no_index)
            return false;
        DWORD expected = no_index;
        if (!index_.compare_exchange_strong(expected, mine, memory_order_acq_rel)) {
            ::TlsFree(mine); // another thread's came first
            return true;
        }
#if defined(__x86_64__)
        if (mine < teb_direct_slots)
            teb_offset_.store(teb_tls_slots + 8 * std::uintptr_t{mine}, memory_order_release);
#endif
        return true;
    }

    static constinit inline atomic<DWORD> index_{no_index};
    /// 0 until an index below 64 is allocated, then its offset in the TEB (never 0).
    static constinit inline atomic<std::uintptr_t> teb_offset_{0};
    /// No instruction touches it: the asm operand through which the compiler sees set()'s
    /// TEB store and get()'s TEB load as a write and a read of one object, in order.
    static constinit inline int order_ = 0;
};

#endif

template <class T, T* Empty, thread_slot_exit_fn<T> OnExit>
struct thread_slot {
    STA_FORCE_INLINE static T* get() noexcept { return value::get(); }
    static bool set(T* p) noexcept {
        if (!value::set(p))
            return false;
        arm_exit(p);
        return true;
    }

#if STA_THREAD_EXIT_EVERY_THREAD
    static bool exit_ran() noexcept {
        return false;
    }
#else
    static bool exit_ran() noexcept {
        return exit_ran_;
    }
#endif

  private:
    using value = thread_slot_value<T, Empty>;

#if STA_THREAD_EXIT_EVERY_THREAD
    /// Asked by the module's walk at every thread's exit (os/thread_exit.hpp).
    static bool run_exit() noexcept {
        T* const p = value::get();
        if (p == Empty)
            return false;
        OnExit(p);
        return true;
    }
    static void arm_exit(T* p) noexcept {
        if (p == Empty)
            return;
        static constinit thread_exit_entry entry{&run_exit, nullptr};
        static const bool listed = (run_at_every_thread_exit(entry), true);
        (void)listed;
    }
#else
    static void exit_fn(void* p) noexcept {
        exit_ran_ = true;
        OnExit(static_cast<T*>(p));
    }
    STA_TLS_MODEL static constinit inline thread_local bool exit_ran_ = false;
    /// Without a key (or FLS index) for exit_fn, OnExit does not run: the value stays the
    /// thread's.
    static void arm_exit(T* p) noexcept {
        (void)call_at_thread_exit<&exit_fn>(p != Empty ? p : nullptr);
    }
#endif
};

} // namespace sta::detail
