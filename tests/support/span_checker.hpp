// sta-pool: the accounting checker of the span layout (S1..S13 in layout/span_types.hpp,
// and T1 of the table dispatch). pool_checker.hpp's check_accounting calls it.
#pragma once

#include "checker_report.hpp"
#include "sta/detail/layout/spans.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace sta::detail {

/// A block the caller holds: its pointer and the size it asked for.
struct held_block {
    const void* p;
    std::size_t bytes;
};

/// Does a slot's free list serve allocations (T1)? The table dispatch answers from its
/// table; the inline branch always serves.
using serves_list_fn = bool (*)(std::uint32_t slot) noexcept;

/// S1..S13 of `s`, a state of a pool of the class set `Classes`: compiled once per class
/// set (checkers.cpp), whatever pool family (tag) the state belongs to.
template <class Classes>
std::string check_spans_state(const span_state& s, serves_list_fn serves_list,
                              std::span<const held_block> held);
extern template std::string check_spans_state<power_of_two_classes>(const span_state&,
                                                                    serves_list_fn,
                                                                    std::span<const held_block>);
extern template std::string check_spans_state<quarter_classes>(const span_state&, serves_list_fn,
                                                               std::span<const held_block>);

/// check_spans_state of the pool family `Pool`'s state (the calling thread's).
template <class Pool>
std::string check_spans(std::span<const held_block> held) {
    return check_spans_state<typename Pool::classes>(Pool::detail_state(),
                                                     &Pool::engine::slot_serves_list, held);
}

/// Every block on the pool's caches goes back to its span now (its bitmap, or its class's
/// window), as every cache_frees-th free does (S5): what a test looks at next is the
/// spans' own view.
template <class Pool>
void flush_caches() {
    Pool::engine::core::flush_caches(Pool::detail_state());
}

} // namespace sta::detail
