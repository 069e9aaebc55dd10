// sta-pool: the arena checker — a white-box test of the invariants written above
// sta::arena (A1..A5) and detail::arena_block (B1..B3).
//
// An empty string means every invariant holds; otherwise the text names the first
// problems. O(blocks). For tests, not production.
#pragma once

#include "checker_report.hpp"
#include "sta/arena.hpp"

#include <cstdint>
#include <string>

namespace sta::detail {

inline std::string check_arena(const arena& a) {
    checker_report report;
    auto fail = [&report](const std::string& what) { report.fail(what); };

    // A1: the bump range.
    if (a.current_ == nullptr) {
        if (a.cursor_ != nullptr || a.end_ != nullptr)
            fail("A1: no current block, but the bump range is not null");
    } else {
        if (a.cursor_ < a.current_->data() || a.cursor_ > a.end_)
            fail("A1: the cursor lies outside the current block");
        if (a.end_ != a.current_->limit())
            fail("A1: end is not the end of the current block");
    }

    std::size_t blocks = 0, dedicated = 0, reserved = 0;
    const std::size_t max_blocks = a.blocks_ + 1;
    auto walk = [&](arena_block* list, bool is_dedicated) {
        std::uint64_t previous = a.next_serial_;
        for (arena_block* b = list; b != nullptr; b = b->older) {
            const char* which = is_dedicated ? "dedicated" : "standard";
            if (++blocks > max_blocks) {
                fail("A3: the block lists are longer than blocks_ (a cycle?)");
                return;
            }
            dedicated += is_dedicated;
            reserved += b->bytes;
            if (reinterpret_cast<std::uintptr_t>(b) % os_page_bytes != 0)
                fail(std::string("B1: a ") + which + " block is not 4096-aligned");
            if (is_dedicated ? b->bytes % os_page_bytes != 0 : b->bytes != a.block_bytes_)
                fail(std::string("B1/A2: a ") + which + " block has " + std::to_string(b->bytes) +
                     " bytes");
            if (b->serial >= previous)
                fail("A4/B2: serials do not decrease along the " + std::string(which) + " list");
            previous = b->serial;
            const std::size_t used =
                b == a.current_ ? static_cast<std::size_t>(a.cursor_ - b->data()) : b->used;
            if (used > b->bytes - arena_block_header_bytes)
                fail(std::string("B3: a ") + which + " block uses more than it has");
            if (is_dedicated && used == 0)
                fail("A2: a dedicated block holds no request");
        }
    };
    walk(a.current_, false);
    walk(a.dedicated_, true);

    // A3: the counters.
    if (blocks != a.blocks_)
        fail("A3: " + std::to_string(blocks) + " blocks listed, blocks_ says " +
             std::to_string(a.blocks_));
    if (dedicated != a.dedicated_blocks_)
        fail("A3: " + std::to_string(dedicated) + " dedicated blocks listed, counter says " +
             std::to_string(a.dedicated_blocks_));
    if (reserved != a.bytes_reserved_)
        fail("A3: the blocks total " + std::to_string(reserved) + " bytes, bytes_reserved_ says " +
             std::to_string(a.bytes_reserved_));
    return report.finish();
}

} // namespace sta::detail
