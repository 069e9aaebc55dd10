// sta-pool benchmarks: bench::escape, the one compiler barrier every measurement uses to
// keep an object alive and its state in memory (the standard library only: the Windows
// benchmarks use it too).
#pragma once

namespace bench {

/// Make an object reachable from code the compiler cannot see, once: every compiler
/// barrier after this (benchmark::ClobberMemory, an empty asm with a "memory" clobber)
/// may read and write it, so a peer's free-list head is stored and reloaded around each
/// call, as the pool's (a global) is. The measurements call it on each peer before its
/// loops; it emits no instruction.
template <class T>
inline void escape(T& object) noexcept {
    T* address = &object;
    __asm__ __volatile__("" : : "r"(address) : "memory");
}

} // namespace bench
