// Helpers shared by the pool tests: the variants (dispatch x layout) every test runs
// on, a fresh pool per test, page sources that fail on demand.
#pragma once

#include "pool_checker.hpp"
#include "sta/memory_pool.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace sta_test {

/// One combination of the pool's policies.
template <class Dispatch, class Layout, class Threads = sta::threads::default_for<Layout>>
struct variant {
    using dispatch = Dispatch;
    using layout = Layout;
    using threads = Threads;
};
using table_cursor = variant<sta::dispatch::self_rewriting_table, sta::layout::shared_cursor>;
using branch_cursor = variant<sta::dispatch::inline_branch, sta::layout::shared_cursor>;
using table_spans = variant<sta::dispatch::self_rewriting_table, sta::layout::spans>;
using branch_spans = variant<sta::dispatch::inline_branch, sta::layout::spans>;
/// The span layout in the seed's thread mode (one owner for the program).
using branch_spans_seed =
    variant<sta::dispatch::inline_branch, sta::layout::spans, sta::threads::one_owner>;

/// What sta::memory_pool is.
using default_variant = variant<sta::dispatch::default_policy, sta::layout::default_layout>;

/// Every combination of dispatch and layout, each in its default thread mode (the
/// cursor: one owner; spans: per thread): what every behaviour of the pool is tested on.
using pool_variants = ::testing::Types<table_cursor, branch_cursor, table_spans, branch_spans>;
/// The pools with one owner thread: what the seed's thread rule is tested on.
using one_owner_variants = ::testing::Types<table_cursor, branch_cursor, branch_spans_seed>;
/// The per-thread pools.
using per_thread_variants = ::testing::Types<table_spans, branch_spans>;
/// The seed's layout only, for tests of its own mechanics (shared cursor, carving).
using shared_cursor_variants = ::testing::Types<table_cursor, branch_cursor>;
/// The span layout only, for tests of its own mechanics.
using span_variants = ::testing::Types<table_spans, branch_spans>;

template <class V>
constexpr bool is_spans = std::is_same_v<typename V::layout, sta::layout::spans>;

struct variant_names {
    template <class T>
    static std::string GetName(int) {
        const bool table =
            std::is_same_v<typename T::dispatch, sta::dispatch::self_rewriting_table>;
        const bool seed_spans =
            is_spans<T> && std::is_same_v<typename T::threads, sta::threads::one_owner>;
        return std::string(table ? "table" : "branch") + "_" + T::layout::name +
               (seed_spans ? "_one_owner" : "");
    }
};

/// A pool of its own for each (variant, tag): tests start from a clean state.
template <class Variant, class Tag>
using fresh_pool = sta::basic_memory_pool<typename Variant::dispatch, Tag, typename Variant::layout,
                                          typename Variant::threads>;

/// In a typed test: `pool` is a pool family of this test's own.
#define FRESH_POOL                                                                                 \
    struct tag {};                                                                                 \
    using pool = sta_test::fresh_pool<TypeParam, tag>

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

/// The alignment a pool of `Classes` promises a request of `bytes` (<= 32 KiB).
template <class Classes>
std::size_t guaranteed_alignment(std::size_t bytes) {
    return sta::detail::class_alignment(sta::detail::bytes_of_size<Classes>(bytes));
}

} // namespace sta_test
