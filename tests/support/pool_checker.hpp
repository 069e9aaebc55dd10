// sta-pool: the accounting checkers — white-box tests of the invariants written in
// the layouts' headers, and of the table policy's T1.
//
// check_accounting<Pool>(held), given the blocks the caller still holds, proves for the
// shared-cursor layout (I1..I5) that page headers, live blocks, free-list blocks and
// the bump range tile every page exactly, and for the span layout (S1..S10) the same of
// every span (span_checker.hpp). An empty string means every invariant holds;
// otherwise the text names the first problems. It walks everything:
// O(pages + blocks log blocks). For tests, not production; the bodies are compiled once, in
// checkers.cpp.
#pragma once

#include "checker_report.hpp"
#include "span_checker.hpp"
#include "sta/detail/layout/shared_cursor.hpp"

#include <span>
#include <string>
#include <type_traits>

namespace sta::detail {

/// I1..I5 of the seed's layout, and T1, of the state `s`: compiled once
/// (checkers.cpp), whatever pool family (tag) the state belongs to.
std::string check_shared_cursor_state(const shared_cursor_state& s, serves_list_fn serves_list,
                                      std::span<const held_block> held);

template <class Pool>
std::string check_shared_cursor(std::span<const held_block> held) {
    return check_shared_cursor_state(Pool::detail_state(), &Pool::engine::slot_serves_list, held);
}

template <class Pool>
std::string check_accounting(std::span<const held_block> held) {
    if constexpr (std::is_base_of_v<span_state, typename Pool::engine::state_type>)
        return check_spans<Pool>(held);
    else
        return check_shared_cursor<Pool>(held);
}

} // namespace sta::detail
