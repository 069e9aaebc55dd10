// sta-pool: run code when a thread ends — what a per-thread pool uses to park its state
// (home/per_thread.hpp, through os/thread_slot.hpp). The rule: it runs after the
// thread's C++ thread_local destructors, so a thread_local container that frees in its
// destructor still finds the thread's pool. Tested on Linux and on mingw-w64 (under
// wine); with MSVC and clang-cl, not run here, the FLS callback may run before the
// runtime's thread_local destructors (docs/windows.md).
//
// Two shapes, one per OS family (STA_THREAD_EXIT_EVERY_THREAD says which):
//
//   call_at_thread_exit<Fn>(arg)   Linux (and any POSIX): a pthread key with a
//     destructor. glibc runs key destructors after the thread's thread_local
//     destructors; a destructor that sets the value again (a late allocation) is run
//     again, up to PTHREAD_DESTRUCTOR_ITERATIONS times. Windows with MSVC or clang-cl:
//     an FLS callback (not run here: docs/windows.md).
//
//   run_at_every_thread_exit(entry)   mingw-w64 (g++ and clang): the module's TLS
//     callback, in .CRT$XLY — the last of the image's TLS callbacks, which the loader
//     calls for every thread that ends (DLL_THREAD_DETACH), whatever created it. Before
//     it, in this order: FLS callbacks; .CRT$XLB, mingw-w64's __cxa_thread_atexit
//     destructors; .CRT$XLF, winpthreads' key destructors for a thread it did not
//     create — among them libstdc++'s thread_local destructors. A std::thread
//     (pthread_create) runs its key destructors before ExitThread, so before all TLS
//     callbacks. A pthread key or an FLS callback would run before some of these
//     (measured under wine: docs/windows.md); the TLS callback runs after every one.
#pragma once

#if defined(_WIN32) && !defined(__MINGW32__)
#define STA_THREAD_EXIT_EVERY_THREAD 0
#include "sta/detail/os/windows.hpp"
#elif defined(__MINGW32__)
#define STA_THREAD_EXIT_EVERY_THREAD 1
#include "sta/detail/atomic.hpp"
#include "sta/detail/os/windows.hpp"
#else
#define STA_THREAD_EXIT_EVERY_THREAD 0
#include <pthread.h>
#endif

namespace sta::detail {

#if !STA_THREAD_EXIT_EVERY_THREAD

using thread_exit_fn = void (*)(void*);

/// When the calling thread ends, Fn(arg) runs on it; arg == nullptr cancels. One slot per
/// Fn: a second call on the same thread replaces the argument. False when the OS has no
/// slot to give (the function will then not run).
template <thread_exit_fn Fn>
bool call_at_thread_exit(void* arg) noexcept {
#if defined(_WIN32)
    static const DWORD index = ::FlsAlloc([](void* p) { Fn(p); });
    return index != FLS_OUT_OF_INDEXES && ::FlsSetValue(index, arg) != 0;
#else
    // pthread_once, not a function-local static: the drop-in malloc links no C++
    // runtime (no __cxa_guard_acquire).
    static constinit pthread_once_t once = PTHREAD_ONCE_INIT;
    static constinit pthread_key_t key{};
    static constinit bool made = false;
    ::pthread_once(&once, [] { made = pthread_key_create(&key, Fn) == 0; });
    return made && pthread_setspecific(key, arg) == 0;
#endif
}

#else // mingw-w64: the module's TLS callback

/// What runs at every thread's exit: run() looks at the ending thread's own data and
/// says whether it did anything.
struct thread_exit_entry {
    bool (*run)() noexcept;
    thread_exit_entry* next;
};

/// The entries, newest first; never removed.
inline constinit atomic<thread_exit_entry*> thread_exit_entries{nullptr};

/// From now on, entry.run() is called on every thread of the process that ends (not on
/// the thread that calls exit). Call once per entry.
inline void run_at_every_thread_exit(thread_exit_entry& entry) noexcept {
    thread_exit_entry* head = thread_exit_entries.load(memory_order_relaxed);
    do
        entry.next = head;
    while (!thread_exit_entries.compare_exchange_weak(head, &entry, memory_order_release,
                                                      memory_order_relaxed));
}

/// Every entry, again while one of them did something (it may have given the thread
/// work for another: a late allocation), up to 4 rounds as POSIX's key destructors.
inline void NTAPI thread_exit_callback(void*, DWORD reason, void*) noexcept {
    if (reason != DLL_THREAD_DETACH)
        return;
    for (int round = 0; round < 4; ++round) {
        bool ran = false;
        for (thread_exit_entry* e = thread_exit_entries.load(memory_order_acquire); e != nullptr;
             e = e->next)
            ran = e->run() || ran;
        if (!ran)
            return;
    }
}

} // namespace sta::detail

/// The image's TLS callback: one per module, whichever translation units include this.
extern "C" __attribute__((section(".CRT$XLY"),
                          used)) inline const PIMAGE_TLS_CALLBACK sta_pool_thread_exit_callback =
    &sta::detail::thread_exit_callback;

namespace sta::detail {

#endif

} // namespace sta::detail
