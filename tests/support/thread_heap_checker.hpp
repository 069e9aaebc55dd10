// sta-pool: the thread_heap checker — a white-box test of the invariants written above
// sta::thread_heap (TL1..TL6).
//
// Given the blocks the caller still holds (pointer and requested bytes), it walks every
// chunk block by block and every free list, and proves that live and free blocks tile
// every chunk exactly, that the lists and bitmaps agree with the blocks, that no two
// free blocks touch, and that the caller's blocks are exactly the live ones. An empty
// string means every invariant holds; otherwise the text names the first problems.
// O(blocks log blocks). For tests, not production.
#pragma once

#include "checker_report.hpp"
#include "sta/detail/heaps/tlsf_heap.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace sta::detail {

/// A block the caller holds: its pointer and requested bytes.
struct thread_heap_held {
    const void* p;
    std::size_t bytes;
};

/// The heap's friend, for its private blocks and lists.
struct thread_heap_checker {
    static std::string check(const thread_heap& h, std::span<const thread_heap_held> held);
};

inline std::string check_thread_heap(const thread_heap& h, std::span<const thread_heap_held> held) {
    return thread_heap_checker::check(h, held);
}

inline std::string thread_heap_checker::check(const thread_heap& h,
                                              std::span<const thread_heap_held> held) {
    using block = thread_heap::block;
    using chunk_header = thread_heap::chunk_header;
    checker_report report;
    auto fail = [&report](const std::string& what) { report.fail(what); };
    const auto hex = &checker_report::hex;

    // TL1: the chunk list.
    std::size_t chunks = 0, mapped = 0;
    const chunk_header* previous = nullptr;
    std::set<const block*> free_by_walk;
    std::vector<std::pair<const void*, std::size_t>> live_by_walk;
    for (const chunk_header* c = h.chunks_; c != nullptr; previous = c, c = c->next) {
        if (++chunks > h.chunk_count_) {
            fail("TL1: the chunk list is longer than chunk_count_ (a cycle?)");
            break;
        }
        if (c->prev != previous)
            fail("TL1: chunk " + hex(c) + " has a wrong prev link");
        mapped += c->bytes;
        if (reinterpret_cast<std::uintptr_t>(c) % os_page_bytes != 0 ||
            c->bytes % os_page_bytes != 0)
            fail("TL1: chunk " + hex(c) + " is not page-aligned or not whole pages");

        // TL2, TL3: the blocks tile the chunk.
        const block* expected_prev = nullptr;
        const block* const sentinel = c->sentinel();
        bool previous_free = false, all_free = true;
        std::size_t blocks = 0;
        const block* b = c->first();
        while (b != sentinel) {
            if (reinterpret_cast<std::uintptr_t>(b) > reinterpret_cast<std::uintptr_t>(sentinel)) {
                fail("TL2: the blocks of chunk " + hex(c) + " overrun its sentinel");
                break;
            }
            ++blocks;
            if (b->prev_phys != expected_prev)
                fail("TL2: block " + hex(b) + " has a wrong prev_phys");
            if (b->size() < thread_heap::min_block_bytes || b->size() % 16 != 0) {
                fail("TL2: block " + hex(b) + " has size " + std::to_string(b->size()));
                break;
            }
            if ((b->size_flags & 14) != 0)
                fail("TL2: block " + hex(b) + " has stray flag bits");
            if (b->is_free()) {
                if (previous_free)
                    fail("TL3: free block " + hex(b) + " follows a free block");
                free_by_walk.insert(b);
            } else {
                all_free = false;
                if (b->word2 > b->size() - thread_heap::header_bytes)
                    fail("TL6: live block " + hex(b) + " asked for more than its payload");
                live_by_walk.emplace_back(
                    reinterpret_cast<const std::byte*>(b) + thread_heap::header_bytes, b->word2);
            }
            previous_free = b->is_free();
            expected_prev = b;
            b = b->next_phys();
        }
        if (b == sentinel) {
            if (sentinel->prev_phys != expected_prev)
                fail("TL2: the sentinel of chunk " + hex(c) + " does not point at the last block");
            if (sentinel->size_flags != 0)
                fail("TL2: the sentinel of chunk " + hex(c) + " is not size 0, live");
        }
        // TL5: a wholly free chunk is the one cached spare.
        if (all_free) {
            if (c != h.spare_)
                fail("TL5: chunk " + hex(c) + " is wholly free but not the spare");
            if (blocks != 1)
                fail("TL5/TL3: the wholly free chunk " + hex(c) + " has " + std::to_string(blocks) +
                     " blocks");
        }
    }
    if (chunks != h.chunk_count_)
        fail("TL1: " + std::to_string(chunks) + " chunks listed, chunk_count_ says " +
             std::to_string(h.chunk_count_));
    if (mapped != h.bytes_mapped_)
        fail("TL1: the chunks hold " + std::to_string(mapped) + " bytes, bytes_mapped_ says " +
             std::to_string(h.bytes_mapped_));
    if (h.spare_ != nullptr && h.spare_->bytes != h.chunk_bytes_)
        fail("TL5: the spare chunk is not a standard chunk");

    // TL4: the free lists and bitmaps.
    std::size_t listed = 0;
    for (unsigned fl = 0; fl < thread_heap::fl_count; ++fl) {
        const bool fl_bit = (h.fl_bitmap_ >> fl) & 1;
        if (fl_bit != (h.sl_bitmap_[fl] != 0))
            fail("TL4: fl bit " + std::to_string(fl) + " disagrees with its sl bitmap");
        for (unsigned sl = 0; sl < thread_heap::sl_count; ++sl) {
            const block* head = h.heads_[fl][sl];
            const bool sl_bit = (h.sl_bitmap_[fl] >> sl) & 1;
            if (sl_bit != (head != nullptr))
                fail("TL4: sl bit [" + std::to_string(fl) + "][" + std::to_string(sl) +
                     "] disagrees with its list");
            const block* prev = nullptr;
            for (const block* f = head; f != nullptr; prev = f, f = f->next_free(h.link_key_)) {
                if (++listed > free_by_walk.size()) {
                    fail("TL4: more blocks on the free lists than free blocks in the chunks");
                    break;
                }
                if (free_by_walk.count(f) == 0) {
                    fail("TL4: " + hex(f) + " is on a free list but is no free block");
                    break;
                }
                if (f->prev_free(h.link_key_) != prev)
                    fail("TL4: " + hex(f) + " has a wrong prev_free link");
                const auto i = thread_heap::index_of(f->size());
                if (i.fl != fl || i.sl != sl)
                    fail("TL4: " + hex(f) + " of " + std::to_string(f->size()) +
                         " bytes is on list [" + std::to_string(fl) + "][" + std::to_string(sl) +
                         "]");
            }
        }
    }
    if (listed != free_by_walk.size())
        fail("TL4: " + std::to_string(free_by_walk.size()) + " free blocks, " +
             std::to_string(listed) + " on the lists");

    // TL6: the caller's blocks are exactly the live ones.
    std::vector<std::pair<const void*, std::size_t>> mine;
    mine.reserve(held.size());
    for (const thread_heap_held& x : held)
        mine.emplace_back(x.p, x.bytes);
    std::sort(mine.begin(), mine.end());
    std::sort(live_by_walk.begin(), live_by_walk.end());
    if (mine != live_by_walk) {
        fail("TL6: the live blocks (" + std::to_string(live_by_walk.size()) +
             ") are not the blocks the caller holds (" + std::to_string(mine.size()) + ")");
        for (std::size_t i = 0; i < std::min(mine.size(), live_by_walk.size()); ++i)
            if (mine[i] != live_by_walk[i]) {
                fail("TL6: first difference: held " + hex(mine[i].first) + " (" +
                     std::to_string(mine[i].second) + " B), heap " + hex(live_by_walk[i].first) +
                     " (" + std::to_string(live_by_walk[i].second) + " B)");
                break;
            }
    }
    return report.finish();
}

} // namespace sta::detail
