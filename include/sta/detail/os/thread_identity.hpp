// sta-pool: who is calling (checked builds, STA_POOL_CHECKS), and giving the CPU to
// another thread (spin_lock, pool/state.hpp) without <thread>'s cost to every unit.
//
// thread_key() must cost next to nothing: it is read on every pool call in a
// checked build. Linux x86-64 reads the thread pointer (%fs:0), Windows x64 the
// thread id from the TEB (gs:[0x48]). thread_number() is the id a human knows
// (gettid / GetCurrentThreadId), read only when a check fails or an owner is set.
#pragma once

#include <cstdint>

#if defined(_WIN32)
#include "sta/detail/os/windows.hpp"
#include <intrin.h>
#elif defined(__linux__)
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#include <thread>
#endif

namespace sta::detail {

inline std::uintptr_t thread_key() noexcept {
#if defined(_WIN32) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    // The thread id in the TEB (gs:[0x48]). mingw's __readgsdword trips g++ 12's
    // -Warray-bounds (a constant address), so read it directly.
    unsigned long id;
    __asm__("movl %%gs:0x48, %k0" : "=r"(id));
    return static_cast<std::uintptr_t>(id);
#elif defined(_WIN32) && defined(_M_X64)
    return static_cast<std::uintptr_t>(__readgsdword(0x48));
#elif defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    std::uintptr_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return tp;
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
    return reinterpret_cast<std::uintptr_t>(__builtin_thread_pointer());
#else
    static thread_local char marker;
    return reinterpret_cast<std::uintptr_t>(&marker);
#endif
}

inline unsigned long thread_number() noexcept {
#if defined(_WIN32)
    return static_cast<unsigned long>(::GetCurrentThreadId());
#elif defined(__linux__)
    return static_cast<unsigned long>(::syscall(SYS_gettid));
#else
    return static_cast<unsigned long>(thread_key());
#endif
}

/// Let another thread run (std::this_thread::yield).
inline void yield_thread() noexcept {
#if defined(_WIN32)
    ::SwitchToThread();
#elif defined(__linux__)
    ::sched_yield();
#else
    std::this_thread::yield();
#endif
}

} // namespace sta::detail
