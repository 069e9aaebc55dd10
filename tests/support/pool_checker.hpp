// sta-pool: the accounting checkers — white-box tests of the invariants written in
// the layouts' headers, and of the table policy's T1.
//
// check_accounting<Pool>(held), given the blocks the caller still holds, proves for the
// shared-cursor layout (I1..I5) that page headers, live blocks, free-list blocks and
// the bump range tile every page exactly, and for the span layout (S1..S10) the same of
// every span (span_checker.hpp). An empty string means every invariant holds;
// otherwise the text names the first problems. It walks everything:
// O(pages + blocks log blocks). For tests, not production.
#pragma once

#include "checker_report.hpp"
#include "span_checker.hpp"
#include "sta/detail/layout/shared_cursor.hpp"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace sta::detail {

/// I1..I5 of the seed's layout, and T1, of the state `s`: one instantiation for every
/// pool family (tag).
inline std::string check_shared_cursor_state(const shared_cursor_state& s,
                                             serves_list_fn serves_list,
                                             std::span<const held_block> held) {
    checker_report report;
    auto fail = [&report](const std::string& what) { report.fail(what); };
    const auto hex = &checker_report::hex;

    std::vector<checked_range> pages, pieces;

    // I1: the page list.
    std::size_t page_count = 0;
    for (const page_header* p = s.pages; p != nullptr; p = p->older) {
        if (++page_count > s.mappings) {
            fail("I1: the page list is longer than mappings (a cycle?)");
            break;
        }
        const auto b = reinterpret_cast<std::uintptr_t>(page_begin(p, s.page_bytes));
        if (b + s.page_bytes != reinterpret_cast<std::uintptr_t>(p))
            fail("I1: the header " + hex(p) + " does not follow its page's page_bytes");
        pages.push_back({b, b + s.page_bytes, "page"});
    }
    if (page_count != s.mappings)
        fail("I1: " + std::to_string(page_count) + " pages listed, mappings says " +
             std::to_string(s.mappings));

    // I2: the bump range.
    const auto cursor = reinterpret_cast<std::uintptr_t>(s.cursor);
    const auto end = reinterpret_cast<std::uintptr_t>(s.end);
    if (cursor > end)
        fail("I2: cursor is past end");
    if (cursor % max_block_align != 0)
        fail("I2: cursor " + hex(s.cursor) + " is not 16-aligned");
    if (s.pages != nullptr && end != reinterpret_cast<std::uintptr_t>(s.pages))
        fail("I2: the bump range does not end at the end of the newest page");
    if (cursor < end)
        pieces.push_back({cursor, end, "bump range"});

    // I4 and T1: the free lists.
    const std::size_t max_blocks = s.mappings * s.page_bytes / min_class_bytes + 1;
    for (std::uint32_t slot = 0; slot < slot_count; ++slot) {
        if (s.heads[slot] == nullptr)
            continue;
        if (slot < largest_class_slot || slot > smallest_class_slot) {
            fail("I4: slot " + std::to_string(slot) + " has a free list");
            continue;
        }
        if (!serves_list(slot))
            fail("T1: slot " + std::to_string(slot) + " has free blocks but does not serve them");
        const std::size_t bytes = class_bytes_of_slot(slot);
        const std::size_t align = std::min(bytes, max_block_align);
        std::size_t walked = 0;
        for (const void* b = s.heads[slot]; b != nullptr;
             b = hooks::load_link(const_cast<void*>(b))) {
            if (++walked > max_blocks) {
                fail("I4: the list of slot " + std::to_string(slot) + " does not end (a cycle?)");
                break;
            }
            const auto a = reinterpret_cast<std::uintptr_t>(b);
            if (a % align != 0)
                fail("I4: free block " + hex(b) + " of " + std::to_string(bytes) +
                     " B is not aligned to " + std::to_string(align));
            pieces.push_back({a, a + bytes, "free block"});
        }
    }

    // Live blocks, at their class size.
    for (const held_block& h : held) {
        if (!is_pooled_size(h.bytes))
            continue;
        const auto a = reinterpret_cast<std::uintptr_t>(h.p);
        pieces.push_back({a, a + class_bytes_of_size(h.bytes), "live block"});
    }

    // I5: the pieces tile the pages.
    check_tiling(report, "I5", std::move(pages), std::move(pieces));
    return report.finish();
}

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
