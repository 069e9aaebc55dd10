// sta-pool: the process's secret — 64 random bits drawn once, at the first call, and the
// same for every thread and every call after it. The keys of what the library writes
// into memory a program can reach (the freed marks, pool/freed_mark.hpp; the C API's
// header tags, c_api/c_common.hpp) are derived from it, so that a program that writes
// into a freed block or past a block's end cannot write what the library will believe
// unless it has read the secret first.
//
//   Linux:   getrandom(2) (GRND_NONBLOCK); if the kernel's pool is not ready or the call is
//            refused, the clock, the process id and addresses that ASLR places mixed
//            (weaker: a guess of the start time and the layout).
//   Windows: the performance counter, the process and thread ids and ASLR's addresses
//            mixed (no system call to a random source without another DLL).
//
// Never 0 (0 is "not drawn yet"); odd (a key with bit 0 set, pool/freed_mark.hpp).
#pragma once

#include "sta/detail/atomic.hpp"

#include <cstdint>

#if defined(_WIN32)
#include "sta/detail/os/windows.hpp"
#else
#include <ctime>
#include <sys/random.h>
#include <unistd.h>
#endif

namespace sta::detail {

/// 0 until the first process_secret(); then the secret, for the life of the process.
inline constinit atomic<std::uint64_t> process_secret_bits{0};

/// A 64-bit mix (splitmix64's finalizer): each input bit flips half the output bits.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/// 64 bits from the OS's random source, or from what the process cannot predict of itself.
inline std::uint64_t os_random_bits() noexcept {
    std::uint64_t bits = 0;
    int local = 0;
    std::uint64_t seed = mix64(reinterpret_cast<std::uintptr_t>(&local)) ^
                         mix64(reinterpret_cast<std::uintptr_t>(&process_secret_bits) + 1);
#if defined(_WIN32)
    LARGE_INTEGER counter{};
    ::QueryPerformanceCounter(&counter);
    seed ^= mix64(static_cast<std::uint64_t>(counter.QuadPart)) ^
            mix64((std::uint64_t{::GetCurrentProcessId()} << 32) | ::GetCurrentThreadId());
#else
    if (::getrandom(&bits, sizeof bits, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof bits))
        return bits;
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    seed ^= mix64(static_cast<std::uint64_t>(t.tv_sec) * 1000000000u +
                  static_cast<std::uint64_t>(t.tv_nsec)) ^
            mix64(static_cast<std::uint64_t>(::getpid()));
#endif
    bits = mix64(seed);
    return bits;
}

/// The first call draws the secret; racing first calls agree on one (the first stored).
[[gnu::noinline]] inline std::uint64_t draw_process_secret() noexcept {
    std::uint64_t expected = 0;
    const std::uint64_t drawn = os_random_bits() | 1;
    if (process_secret_bits.compare_exchange_strong(expected, drawn, memory_order_acq_rel))
        return drawn;
    return expected; // another thread drew it first
}

/// The process's secret: odd, never 0, the same at every call.
inline std::uint64_t process_secret() noexcept {
    const std::uint64_t s = process_secret_bits.load(memory_order_acquire);
    return s != 0 ? s : draw_process_secret();
}

} // namespace sta::detail
