// sta-pool: a millisecond clock for the slow paths (how long a clean span has kept its
// pages: layout/span_life.hpp). Monotonic; 32 bits wrap after 49 days, so durations are
// differences taken in unsigned arithmetic. Linux: CLOCK_MONOTONIC_COARSE (the vDSO,
// no system call; ticks of 1-4 ms). Windows: GetTickCount64.
#pragma once

#include <cstdint>

#if defined(_WIN32)
#include "sta/detail/os/windows.hpp"
#else
#include <ctime>
#endif

namespace sta::detail {

inline std::uint32_t os_now_ms() noexcept {
#if defined(_WIN32)
    return static_cast<std::uint32_t>(::GetTickCount64());
#else
    timespec t{};
#if defined(CLOCK_MONOTONIC_COARSE)
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
#else
    ::clock_gettime(CLOCK_MONOTONIC, &t);
#endif
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(t.tv_sec) * 1000u +
                                      static_cast<std::uint64_t>(t.tv_nsec) / 1000000u);
#endif
}

} // namespace sta::detail
