// sta-pool: run a function when the calling thread ends — what a per-thread pool uses
// to park its state (home/per_thread.hpp).
//
// Linux (and mingw's winpthreads): a pthread key with a destructor. glibc runs key
// destructors after the thread's C++ thread_local destructors, so a thread_local
// container that frees in its destructor still finds the thread's pool; a destructor
// that sets the value again (a late allocation) is run again (up to
// PTHREAD_DESTRUCTOR_ITERATIONS times). Windows without pthreads: an FLS callback.
#pragma once

#if defined(_WIN32) && !defined(__MINGW32__)
#include "sta/detail/os/windows.hpp"
#else
#include <pthread.h>
#endif

namespace sta::detail {

using thread_exit_fn = void (*)(void*);

/// When the calling thread ends, Fn(arg) runs on it (arg != nullptr). One slot per Fn:
/// a second call on the same thread replaces the argument. False when the OS has no
/// slot to give (the function will then not run).
template <thread_exit_fn Fn>
bool call_at_thread_exit(void* arg) noexcept {
#if defined(_WIN32) && !defined(__MINGW32__)
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

} // namespace sta::detail
