// The C API's heap on the span layout, for its two test programs (c_span_heap_test.cpp:
// the C functions; c_span_heap_refusals_test.cpp: what it refuses, and the freed marks):
// a fresh pool per test, the accounting checker over what a test holds.
#pragma once

#include "sta/detail/c_api/span_heap.hpp"

#include "../support/pool_test_support.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

namespace sta_test {

/// The accounting checker over the blocks a test holds, poor fits (null) left out.
template <class Pool>
std::string tiled(const std::vector<sta::detail::held_block>& held) {
    std::vector<sta::detail::held_block> in_pool; // a null block: a poor fit, which no span holds
    std::copy_if(held.begin(), held.end(), std::back_inserter(in_pool),
                 [](const sta::detail::held_block& h) { return h.p != nullptr; });
    return sta::detail::check_accounting<Pool>(in_pool);
}

/// In a typed test: `pool`, a pool family of this test's own, its `heap` and `classes`.
#define FRESH_SPAN_HEAP                                                                            \
    struct tag {};                                                                                 \
    using pool = sta_test::fresh_pool<TypeParam, tag>;                                             \
    using heap = sta::detail::c_span_heap<pool>;                                                   \
    static_assert(!heap::marked_frees);                                                            \
    using classes [[maybe_unused]] = typename pool::classes

} // namespace sta_test
