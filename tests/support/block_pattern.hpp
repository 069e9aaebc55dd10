// Content for the blocks a test fills: a slice of one table per block index, so that a
// block is filled and checked with one memcpy / memcmp (ranges for the sanitizers and
// valgrind, not a loop per byte) and blocks of different indices hold different bytes.
#pragma once

#include <cstddef>
#include <cstring>
#include <vector>

namespace sta_test {

/// The largest block a test fills.
constexpr std::size_t max_patterned_bytes = 700000;

/// The pattern of block `index`: max_patterned_bytes bytes. Neighbouring indices start 7
/// apart in the table, so a block that holds another's bytes (or its own, shifted) fails.
inline const unsigned char* pattern_of(std::size_t index) {
    static const std::vector<unsigned char> table = [] {
        std::vector<unsigned char> t(max_patterned_bytes + 256);
        for (std::size_t i = 0; i < t.size(); ++i)
            t[i] = static_cast<unsigned char>(i * 7 + (i >> 8) * 13 + 1);
        return t;
    }();
    return table.data() + index % 251;
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

} // namespace sta_test
