// Content for the blocks a test fills: a slice of one table per block index, so that a
// block is filled and checked with one memcpy / memcmp (ranges for the sanitizers and
// valgrind, not a loop per byte) and blocks of neighbouring indices hold different bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace sta_test {

/// The largest block a test fills.
constexpr std::size_t max_patterned_bytes = 700000;

/// Block patterns start this many different places in the table.
constexpr std::size_t pattern_starts = 4093;

/// The pattern of block `index`: max_patterned_bytes bytes from place index %
/// pattern_starts of a table of pseudo-random bytes, so blocks whose indices differ by
/// less than pattern_starts (and a block shifted against its own pattern) agree on a
/// byte only by chance, one byte in 256.
inline const unsigned char* pattern_of(std::size_t index) {
    static const std::vector<unsigned char> table = [] {
        std::vector<unsigned char> t(max_patterned_bytes + pattern_starts);
        std::uint64_t x = 0x9E3779B97F4A7C15u; // xorshift64
        for (unsigned char& byte : t) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            byte = static_cast<unsigned char>(x >> 56);
        }
        return t;
    }();
    return table.data() + index % pattern_starts;
}

/// Fill `bytes` (<= max_patterned_bytes) of `p` with block `index`'s pattern.
inline void fill_pattern(void* p, std::size_t bytes, std::size_t index) {
    std::memcpy(p, pattern_of(index), bytes);
}

/// The first of `bytes` where `p` differs from block `index`'s pattern, or `bytes`.
inline std::size_t first_pattern_mismatch(const void* p, std::size_t bytes, std::size_t index) {
    const unsigned char* want = pattern_of(index);
    if (std::memcmp(p, want, bytes) == 0)
        return bytes;
    const auto* got = static_cast<const unsigned char*>(p);
    std::size_t i = 0;
    while (got[i] == want[i])
        ++i;
    return i;
}

/// True when all `bytes` of `p` hold block `index`'s pattern.
inline bool pattern_intact(const void* p, std::size_t bytes, std::size_t index) {
    return std::memcmp(p, pattern_of(index), bytes) == 0;
}

} // namespace sta_test
