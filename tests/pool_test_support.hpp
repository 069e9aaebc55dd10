// Helpers shared by the pool tests: the dispatch variants every test runs on, a
// fresh pool per test, page sources that fail on demand.
#pragma once

#include "sta/detail/pool_checker.hpp"
#include "sta/memory_pool.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sta_test {

using dispatch_variants =
    ::testing::Types<sta::dispatch::self_rewriting_table, sta::dispatch::inline_branch>;

struct variant_names {
    template <class T>
    static std::string GetName(int) {
        if (std::is_same_v<T, sta::dispatch::self_rewriting_table>)
            return "table";
        return "branch";
    }
};

/// A pool of its own for each (dispatch, tag): tests start from a clean state.
template <class Dispatch, class Tag>
using fresh_pool = sta::basic_memory_pool<Dispatch, Tag>;

/// A page source that hands out `budget` pages and then refuses.
template <class Tag>
struct limited_pages {
    static inline int budget = 0;
    static void* map(std::size_t bytes) noexcept {
        if (budget <= 0)
            return nullptr;
        --budget;
        return sta::detail::os_map_pages(bytes);
    }
};

inline bool aligned(const void* p, std::size_t alignment) {
    return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

inline std::size_t guaranteed_alignment(std::size_t bytes) {
    const std::size_t block = sta::detail::class_bytes_of_size(bytes);
    return block < 16 ? block : 16;
}

} // namespace sta_test
