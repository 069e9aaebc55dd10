// sta-pool tests: the accounting checkers' bodies, compiled once into the library
// sta_test_checkers that every test program links (tests/CMakeLists.txt), instead of in
// every test that includes the checkers' headers: the tiling rule, I1..I5 of the shared
// cursor, and S1..S13 of the span layout for both class sets.
#include "checker_report.hpp"
#include "pool_checker.hpp"
#include "span_checker.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace sta::detail {

void check_tiling(checker_report& report, const char* rule, std::vector<checked_range> areas,
                  std::vector<checked_range> pieces) {
    const std::string tag = std::string(rule) + ": ";
    const auto at = [](std::uintptr_t a) {
        return checker_report::hex(reinterpret_cast<const void*>(a));
    };
    auto by_begin = [](const checked_range& x, const checked_range& y) {
        return x.begin < y.begin;
    };
    std::sort(areas.begin(), areas.end(), by_begin);
    std::sort(pieces.begin(), pieces.end(), by_begin);
    auto outside = [&](const checked_range& piece) {
        report.fail(tag + "a " + piece.what + " at " + at(piece.begin) +
                    " lies outside every area");
    };
    std::size_t i = 0;
    for (const checked_range& area : areas) {
        for (; i < pieces.size() && pieces[i].begin < area.begin; ++i)
            outside(pieces[i]);
        std::uintptr_t expected = area.begin;
        for (; i < pieces.size() && pieces[i].begin < area.end; ++i) {
            if (pieces[i].begin != expected)
                report.fail(
                    tag +
                    (pieces[i].begin < expected
                         ? std::string("overlap")
                         : "a gap of " + std::to_string(pieces[i].begin - expected) + " bytes") +
                    " before a " + pieces[i].what + " at " + at(pieces[i].begin));
            expected = std::max(expected, pieces[i].end);
        }
        if (expected != area.end)
            report.fail(
                tag + area.what + " " + at(area.begin) + " is not covered to its end (" +
                std::to_string(expected < area.end ? area.end - expected : expected - area.end) +
                (expected < area.end ? " bytes unaccounted for)" : " bytes overrun)"));
    }
    for (; i < pieces.size(); ++i)
        outside(pieces[i]);
}

std::string check_shared_cursor_state(const shared_cursor_state& s, serves_list_fn serves_list,
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

template <class Classes>
std::string check_spans_state(const span_state& s, serves_list_fn serves_list,
                              std::span<const held_block> held) {
    using classes = Classes;
    const auto is_class_slot = [](std::uint32_t slot) {
        for (std::uint32_t n = 0; n < classes::count; ++n)
            if (classes::slot_of_ordinal(n) == slot)
                return true;
        return false;
    };
    checker_report report;
    auto fail = [&report](const std::string& what) { report.fail(what); };
    const auto hex = &checker_report::hex;
    const auto num = [](auto n) { return std::to_string(n); };

    std::vector<checked_range> pieces;
    std::vector<const span*> spans;

    // S1: the segments, doubly linked, mapped, each in the segment map.
    std::size_t segments = 0;
    const segment* newer = nullptr;
    for (const segment* seg = s.segments; seg != nullptr; seg = seg->older) {
        if (++segments > s.mappings) {
            fail("S1: the segment list is longer than mappings (a cycle?)");
            break;
        }
        if (reinterpret_cast<std::uintptr_t>(seg) % segment_bytes != 0)
            fail("S1: segment " + hex(seg) + " is not aligned to segment_bytes");
        if (seg->newer != newer)
            fail("S1: segment " + hex(seg) + " has a wrong newer link");
        if (!is_pool_segment(seg))
            fail("S1: segment " + hex(seg) + " is not in the segment map");
        newer = seg;
        if (seg->owner != &s)
            fail("S9: segment " + hex(seg) + " is not owned by the state that mapped it");
        std::uint32_t idle = 0, purged = 0;
        if (seg->bitmaps == nullptr)
            fail("S1: segment " + hex(seg) + " has no bitmaps");
        for (const span& sp : seg->spans) {
            idle += sp.role == span_role::clean || sp.role == span_role::purged;
            purged += sp.role == span_role::purged;
            spans.push_back(&sp);
        }
        if (idle != seg->idle_spans)
            fail("S11: segment " + hex(seg) + " has " + num(idle) + " clean or purged spans, " +
                 "idle_spans says " + num(seg->idle_spans));
        if (purged == spans_per_segment)
            fail("S12: every span of segment " + hex(seg) + " is purged, yet it is mapped");
    }
    // S10: blocks sent home count as used until the owner drains them; the checker
    // accounts for live blocks, so it runs with the inbox empty.
    if (s.inbox.head.load(detail::memory_order_acquire) != nullptr)
        fail("S10: the inbox holds blocks sent home by other threads (not drained yet)");
    if (segments != s.mappings)
        fail("S1: " + num(segments) + " segments listed, mappings says " + num(s.mappings));
    // S13: the outbox holds, in each way, a chain of `count` blocks of its owner (another
    // state), fewer than a batch, ending at its tail; `held` counts them all.
    std::size_t outbox_blocks = 0;
    for (const remote_outbox::way& w : s.outbox.w) {
        if (w.count >= remote_outbox::batch_blocks)
            fail("S13: an outbox way holds " + num(w.count) + " blocks, a batch or more");
        if (w.count != 0 && (w.owner == nullptr || w.owner == &s))
            fail("S13: an outbox way holds blocks of no owner, or of this state");
        std::uint32_t n = 0;
        const void* last = nullptr;
        for (void* b = w.head; b != nullptr && n <= w.count; b = hooks::load_link(b), ++n) {
            if (owner_of(b) != w.owner)
                fail("S13: outbox block " + hex(b) + " is not its way's owner's");
            last = b;
        }
        if (n != w.count || last != w.tail)
            fail("S13: an outbox way's chain has " + num(n) + " blocks, count says " +
                 num(w.count) + ", or does not end at its tail");
        outbox_blocks += w.count;
    }
    if (outbox_blocks != s.outbox.held)
        fail("S13: the outbox's ways hold " + num(outbox_blocks) + " blocks, held says " +
             num(s.outbox.held));

    // S3, S11: the clean and purged lists name their roles; the clean list runs newest
    // first and ends at clean_oldest.
    std::size_t on_clean = 0, clean = 0, on_purged = 0, purged = 0;
    const span* last_clean = nullptr;
    for (const span* sp = s.clean; sp != nullptr; sp = sp->next) {
        if (++on_clean > spans.size()) {
            fail("S3: the clean list does not end");
            break;
        }
        if (sp->role != span_role::clean)
            fail("S3: span " + hex(sp) + " is on the clean list but not clean");
        if (sp->prev != last_clean)
            fail("S3: the clean list has a broken prev link at " + hex(sp));
        if (last_clean != nullptr &&
            static_cast<std::int32_t>(sp->since_ms - last_clean->since_ms) > 0)
            fail("S11: clean span " + hex(sp) + " is newer than the one before it on the list");
        last_clean = sp;
    }
    if (s.clean_oldest != last_clean)
        fail("S11: clean_oldest is not the last span of the clean list");
    const span* last_purged = nullptr;
    for (const span* sp = s.purged; sp != nullptr; sp = sp->next) {
        if (++on_purged > spans.size()) {
            fail("S3: the purged list does not end");
            break;
        }
        if (sp->role != span_role::purged)
            fail("S3: span " + hex(sp) + " is on the purged list but not purged");
        // S11: nothing of a purged span is resident (huge pages fault in whole segments).
        if (!segment_of(sp)->huge &&
            os_resident_bytes(span_usable_begin(sp), span_usable_bytes(sp)) != 0)
            fail("S11: purged span " + hex(sp) + " has pages resident");
        if (sp->prev != last_purged)
            fail("S3: the purged list has a broken prev link at " + hex(sp));
        last_purged = sp;
    }
    for (std::uint32_t slot = 0; slot < class_slots; ++slot) {
        const bool pooled = is_class_slot(slot);
        if (!pooled && (s.current[slot] || s.partial[slot] || s.heads[slot] || s.bits[slot] ||
                        s.window[slot] || s.cursor[slot] || s.cursor_end[slot]))
            fail("S5: slot " + num(slot) + " is not a canonical class but has spans or blocks");
        const bool cursor_holds = s.cursor[slot] != s.cursor_end[slot];
        if (const span* cur = s.current[slot]) {
            if (cur->role != span_role::current || cur->slot != slot)
                fail("S3: current[" + num(slot) + "] " + hex(cur) + " is not its current span");
            if (cursor_holds && !cur->bumping)
                fail("S5: slot " + num(slot) + " has a cursor but its span is not bumping");
            if (cursor_holds && (s.bits[slot] != 0 || s.window[slot] != nullptr))
                fail("S5: slot " + num(slot) + " has both a cursor and a window");
        } else if (s.bits[slot] != 0 || s.window[slot] != nullptr || cursor_holds) {
            fail("S5: slot " + num(slot) + " has a window or a cursor but no current span");
        }
        std::size_t walked = 0;
        for (const span* sp = s.partial[slot]; sp != nullptr; sp = sp->next) {
            if (++walked > spans.size()) {
                fail("S3: the partial list of slot " + num(slot) + " does not end");
                break;
            }
            if (sp->role != span_role::partial || sp->slot != slot)
                fail("S3: span " + hex(sp) + " is on the partial list of slot " + num(slot) +
                     " but is not a partial span of that class");
            if (sp->next != nullptr && sp->next->prev != sp)
                fail("S3: the partial list of slot " + num(slot) + " has a broken prev link");
        }
        if (s.heads[slot] != nullptr && !serves_list(slot))
            fail("T1: slot " + num(slot) + " has free blocks but does not serve them");
    }

    // S5: the caches hold blocks of serving spans of this state, of their class or a
    // larger one, at most cache_frees in all; each becomes a piece of the tiling below.
    std::vector<std::pair<const span*, std::size_t>> cached; // (span, blocks on caches)
    std::size_t on_caches = 0;
    // The walk stops at the first block past cache_frees: a cycle would never end.
    for (std::uint32_t slot = 0; slot < class_slots && on_caches <= cache_frees; ++slot)
        for (const void* b = s.heads[slot]; b != nullptr;
             b = hooks::load_link(const_cast<void*>(b))) {
            if (++on_caches > cache_frees) {
                fail("S5: the caches hold more than cache_frees blocks (a cycle?)");
                break;
            }
            const span* const sp = span_of(b);
            const auto mine = std::find(spans.begin(), spans.end(), sp);
            if (mine == spans.end() || sp->role == span_role::clean ||
                sp->role == span_role::purged) {
                fail("S5: block " + hex(b) + " on the cache of slot " + num(slot) +
                     " lies in no serving span of this state");
                continue;
            }
            const std::size_t bytes = sp->block_bytes;
            const auto a = reinterpret_cast<std::uintptr_t>(b);
            if ((a - reinterpret_cast<std::uintptr_t>(span_begin(sp))) % bytes != 0 ||
                bytes < classes::bytes_of_slot(slot))
                fail("S5: block " + hex(b) + " on the cache of slot " + num(slot) +
                     " is no block of its class or a larger one");
            pieces.push_back({a, a + bytes, "cache"});
            auto at = std::find_if(cached.begin(), cached.end(),
                                   [sp](const auto& c) { return c.first == sp; });
            if (at == cached.end())
                cached.emplace_back(sp, 1);
            else
                ++at->second;
        }
    if (s.flush_every != cache_frees && s.flush_every != cache_frees_freeing)
        fail("S5: the flush comes every " + num(s.flush_every) +
             " frees: neither cache_frees nor cache_frees_freeing");
    if (on_caches + s.frees_to_flush > s.flush_every)
        fail("S5: " + num(on_caches) + " blocks on the caches, " + num(s.frees_to_flush) +
             " frees to the flush: more than flush_every");

    // S2, S4, S6, S7, S8: each span. Its free blocks (the bitmap's bits, and for the
    // current span its window) become pieces of the tiling below.
    for (const span* sp : spans) {
        if (sp->role == span_role::clean || sp->role == span_role::purged) {
            ++(sp->role == span_role::clean ? clean : purged);
            if (sp->slot != 0 || sp->capacity != 0 || sp->used != 0)
                fail("S2: clean or purged span " + hex(sp) + " still has a class or blocks");
            continue;
        }
        const std::uint32_t slot = sp->slot;
        if (!is_class_slot(slot)) {
            fail("S2: span " + hex(sp) + " serves no canonical class (slot " + num(slot) + ")");
            continue;
        }
        const std::size_t bytes = classes::bytes_of_slot(slot);
        if (sp->block_bytes != bytes)
            fail("S2: span " + hex(sp) + " has block_bytes " + num(sp->block_bytes) +
                 ", its class " + num(bytes));
        if (sp->capacity != span_bytes / bytes)
            fail("S2: span " + hex(sp) + " has capacity " + num(sp->capacity) + ", expected " +
                 num(span_bytes / bytes));
        // S2: the tail past the last block holds no block: less than one, inside the span.
        const auto tail = static_cast<std::size_t>(span_begin(sp) + span_bytes - span_limit(sp));
        if (tail >= bytes || span_limit(sp) > span_begin(sp) + span_bytes)
            fail("S2: span " + hex(sp) + " has a tail of " + num(tail) + " bytes for " +
                 num(bytes) + " B blocks");
        // S2: the first block lies past span 0's headers, the one before it does not.
        const std::size_t headers = span_usable_offset(sp);
        if (sp->first != first_block_of(span_index(sp), bytes) ||
            std::size_t{sp->first} * bytes < headers ||
            (sp->first != 0 && std::size_t{sp->first - 1} * bytes >= headers))
            fail("S2: span " + hex(sp) + " has its first block at " + num(sp->first) + " for " +
                 num(headers) + " bytes of headers");
        if (sp->recip != reciprocal_of(bytes))
            fail("S2: span " + hex(sp) + " has a wrong reciprocal of its class");
        const auto begin = reinterpret_cast<std::uintptr_t>(span_begin(sp));
        auto free_block_at = [&](std::size_t i, const char* what) {
            pieces.push_back({begin + i * bytes, begin + (i + 1) * bytes, what});
        };
        const std::uint64_t* const bitmap = span_bitmap(sp);
        std::size_t in_bitmap = 0;
        if (bitmap != sta::detail::bitmap_of_span(segment_of(sp), span_index(sp), bytes))
            fail("S4: span " + hex(sp) + " does not point at its bitmap");
        const bool has_tail = span_bytes % bytes != 0;
        const bool tail_bit =
            has_tail && ((bitmap[sp->capacity / 64] >> (sp->capacity % 64)) & 1) != 0;
        if (has_tail && !tail_bit)
            fail("S2: span " + hex(sp) + " has a tail but its tail's bit is clear");
        for (std::size_t w = 0; w < (sp->capacity + 63) / 64; ++w)
            for (std::uint64_t m = bitmap[w]; m != 0; m &= m - 1) {
                const std::size_t i = w * 64 + static_cast<std::size_t>(std::countr_zero(m));
                if ((i == sp->capacity && has_tail) || i < sp->first)
                    continue; // the tail's bit, or a place below the first block (S2)
                if (i >= sp->capacity) {
                    fail("S2: span " + hex(sp) + " has a bit set past its capacity");
                    break;
                }
                free_block_at(i, "bitmap");
                ++in_bitmap;
            }
        std::size_t held_by_class = 0;
        for (const auto& [cached_span, blocks] : cached)
            if (cached_span == sp)
                held_by_class = blocks;
        if (sp->role == span_role::current) {
            if (s.current[slot] != sp)
                fail("S3: span " + hex(sp) + " says current but its class has another");
            if (s.window[slot] != nullptr || s.bits[slot] != 0) {
                const auto window = reinterpret_cast<std::uintptr_t>(s.window[slot]);
                const std::size_t first = (window - begin) / bytes;
                if (window < begin || (window - begin) % (64 * bytes) != 0 ||
                    first / 64 + 1 != sp->scan)
                    fail("S5: the window of slot " + num(slot) +
                         " is not the word its span's scan last took");
                else
                    for (std::uint64_t m = s.bits[slot]; m != 0; m &= m - 1) {
                        const std::size_t i = first + static_cast<std::size_t>(std::countr_zero(m));
                        if (i >= sp->capacity) {
                            fail("S5: the window of slot " + num(slot) + " runs past its span");
                            break;
                        }
                        free_block_at(i, "window");
                        ++held_by_class;
                    }
            }
            if (s.cursor[slot] != s.cursor_end[slot]) {
                const auto next = reinterpret_cast<std::uintptr_t>(s.cursor[slot]);
                const auto end = reinterpret_cast<std::uintptr_t>(s.cursor_end[slot]);
                if (next < begin + sp->first * bytes || end != begin + sp->capacity * bytes ||
                    next > end || (next - begin) % bytes != 0) {
                    fail("S5: the cursor of slot " + num(slot) + " is not a run of its span's " +
                         "last blocks");
                } else {
                    for (std::size_t i = (next - begin) / bytes; i < sp->capacity; ++i) {
                        free_block_at(i, "cursor");
                        ++held_by_class;
                    }
                }
            }
            if (sp->wake_at > sp->used)
                fail("S7: current span " + hex(sp) + " has wake_at " + num(sp->wake_at) +
                     " > used " + num(sp->used));
        } else if (sp->role == span_role::partial) {
            if (sp->wake_at != 0)
                fail("S7: partial span " + hex(sp) + " has wake_at " + num(sp->wake_at));
            if (sp->used == 0)
                fail("S8: partial span " + hex(sp) + " is wholly free but not clean");
        } else if (sp->role == span_role::sleeping) {
            if (sp->wake_at >= sp->used)
                fail("S7: sleeping span " + hex(sp) + " has wake_at " + num(sp->wake_at) +
                     " >= used " + num(sp->used));
        }
        if (sp->bumping && sp->role != span_role::current)
            fail("S5: span " + hex(sp) + " is bumping but not its class's current span");
        // S2: the places below the first block keep their bits set.
        for (std::size_t i = 0; i < sp->first; ++i)
            if (((bitmap[i / 64] >> (i % 64)) & 1) == 0) {
                fail("S2: span " + hex(sp) + " has the bit of place " + num(i) +
                     ", below its first block, clear");
                break;
            }
        if (sp->used + in_bitmap != span_blocks(sp))
            fail("S4: span " + hex(sp) + ": used " + num(sp->used) + " + " + num(in_bitmap) +
                 " in its bitmap != its blocks " + num(span_blocks(sp)));
        if (held_by_class > sp->used)
            fail("S4: span " + hex(sp) + " has more blocks held by its class than used");
    }
    if (clean != on_clean)
        fail("S3: " + num(clean) + " clean spans, " + num(on_clean) + " on the clean list");
    if (purged != on_purged)
        fail("S3: " + num(purged) + " purged spans, " + num(on_purged) + " on the purged list");

    // Live blocks, at their span's class.
    for (const held_block& h : held) {
        if (!is_pooled_size(h.bytes))
            continue;
        const auto a = reinterpret_cast<std::uintptr_t>(h.p);
        const span* sp = nullptr;
        for (const span* candidate : spans)
            if (candidate == span_of(h.p))
                sp = candidate;
        if (sp == nullptr || sp->role == span_role::clean || sp->role == span_role::purged) {
            fail("S6: live block " + hex(h.p) + " lies in no span that serves a class");
            continue;
        }
        const std::size_t bytes = classes::bytes_of_slot(sp->slot);
        if (bytes_of_size<classes>(h.bytes) > bytes)
            fail("S6: live block " + hex(h.p) + " of " + num(h.bytes) + " B lies in a span of " +
                 num(bytes) + " B blocks");
        pieces.push_back({a, a + bytes, "live block"});
    }

    // S6: the pieces tile each serving span.
    std::vector<checked_range> serving;
    for (const span* sp : spans)
        if (sp->role != span_role::clean && sp->role != span_role::purged)
            serving.push_back({reinterpret_cast<std::uintptr_t>(span_begin(sp)) +
                                   std::uintptr_t{sp->first} * sp->block_bytes,
                               reinterpret_cast<std::uintptr_t>(span_limit(sp)), "span"});
    check_tiling(report, "S6", std::move(serving), std::move(pieces));
    return report.finish();
}

template std::string check_spans_state<power_of_two_classes>(const span_state&, serves_list_fn,
                                                             std::span<const held_block>);
template std::string check_spans_state<quarter_classes>(const span_state&, serves_list_fn,
                                                        std::span<const held_block>);

} // namespace sta::detail
