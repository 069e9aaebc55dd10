// sta-pool: what becomes of a span, and of its segment, once every block of it has come
// back — memory given back to the OS after a delay, reused before that.
//
//   every block of a span is free, and the span is not its class's current span
//      |
//      v
//   clean    resident; on the state's clean list, newest first; since_ms = now
//      |  \___ taken first when a class needs a span (take_idle: the newest, warmest)
//      |
//      |  the wait passes (purge_due, on the slow paths: a span made clean, a
//      |  refill, a new segment, the heap tiers; a parked state's at once)
//      v
//   purged   its pages given back (os_purge_pages); on the purged list
//      |  \___ taken when no clean span is left, before a segment is mapped
//      |       (os_reuse_pages: Windows commits the pages again)
//      |
//      |  the span purged was the last of its segment's spans to be in use: every span
//      v  of the segment is clean or purged
//   the segment is unmapped whole: its spans leave both lists, its map bit is cleared
//
// The delay keeps a span that a loop empties and refills from paying a system call (and
// its page faults) each time; `purge_never` is the seed's trade, memory kept until the
// process ends. A parked state (its thread ended: home/per_thread.hpp) has no thread to
// reuse its spans: purge_all gives them back as soon as they are clean. trim() and the
// drop-in's malloc_trim call purge_all on request.
//
// Every function here runs on a slow path, for the state `st` it is given (its owner, or
// the thread holding a parked state's lock): nothing on an allocation's or a free's fast
// path. Invariants S3, S8, S11 and S12 (layout/span_types.hpp) are this file's.
#pragma once

#include "sta/detail/diag/tool_hooks.hpp"
#include "sta/detail/layout/span_types.hpp"
#include "sta/detail/os/clock.hpp"
#include "sta/detail/os/pages.hpp"
#include "sta/detail/os/probes.hpp"
#include "sta/detail/pool/segment_map.hpp"

#include <cstddef>
#include <cstdint>

namespace sta::detail {

struct span_life {
    // ---- the lists (S3): clean and purged are doubly linked through next / prev -------

    static void push_front(span*& list, span* sp) noexcept {
        sp->prev = nullptr;
        sp->next = list;
        if (list != nullptr)
            list->prev = sp;
        list = sp;
    }
    static void unlink(span*& list, span* sp) noexcept {
        if (sp->prev != nullptr)
            sp->prev->next = sp->next;
        else
            list = sp->next;
        if (sp->next != nullptr)
            sp->next->prev = sp->prev;
        sp->next = sp->prev = nullptr;
    }
    static void unlink_clean(span_state& st, span* sp) noexcept {
        if (st.clean_oldest == sp)
            st.clean_oldest = sp->prev;
        unlink(st.clean, sp);
    }

    /// `sp`'s blocks have all come back (or it is fresh): it joins the clean list, newest
    /// first (S11), and any class may take it.
    static void make_clean(span_state& st, span* sp, std::uint32_t now) noexcept {
        sp->used = 0;
        sp->wake_at = 0;
        sp->capacity = 0;
        sp->slot = 0;
        sp->role = span_role::clean;
        sp->since_ms = now;
        push_front(st.clean, sp);
        if (st.clean_oldest == nullptr)
            st.clean_oldest = sp;
        ++segment_of(sp)->idle_spans;
    }

    /// A span for a class: the newest clean span, else a purged one made usable again;
    /// nullptr when there is none (the caller maps a segment) or the OS refuses to
    /// commit the pages again (Windows).
    static span* take_idle(span_state& st) noexcept {
        span* sp = st.clean;
        if (sp != nullptr) {
            unlink_clean(st, sp);
        } else if ((sp = st.purged) != nullptr) {
            const std::size_t bytes = span_usable_bytes(sp);
            if (!os_memory.admit_reuse(bytes)) // past the memory limit (MA2)
                return nullptr;
            if (!os_reuse_pages(span_usable_begin(sp), bytes)) {
                os_memory.note_purged(bytes);
                return nullptr;
            }
            unlink(st.purged, sp);
            st.bytes_purged -= bytes;
            if (sp->given_back) { // its pages come back: a refault (pool/purge_delay.hpp)
                sp->given_back = false;
                const std::uint32_t now = os_now_ms();
                st.purge.note_refault(now, now - sp->since_ms, 1);
            }
        } else {
            return nullptr;
        }
        --segment_of(sp)->idle_spans;
        return sp;
    }

    /// Clean spans wait for their delay to be purged (and for `never`, for ever).
    static bool purges_wait(const span_state& st) noexcept {
        return st.clean_oldest != nullptr && !st.purge.never();
    }

    /// Purge every clean span that has kept its pages for the delay, oldest first.
    /// The bytes given back.
    static std::size_t purge_due(span_state& st, std::uint32_t now) noexcept {
        std::size_t given = 0;
        if (st.purge.never())
            return 0;
        while (span* const sp = st.clean_oldest) {
            if (now - sp->since_ms < st.purge.wait_now())
                break;
            given += purge(st, sp);
        }
        if (given != 0)
            st.purge.note_purge(now);
        return given;
    }
    /// purge_due when clean spans wait, reading the clock only then.
    static std::size_t purge_if_due(span_state& st) noexcept {
        return purges_wait(st) ? purge_due(st, os_now_ms()) : 0;
    }

    /// Purge every clean span now, whatever the delay (trim, and parked states). The
    /// bytes given back.
    static std::size_t purge_all(span_state& st) noexcept {
        std::size_t given = 0;
        while (span* const sp = st.clean_oldest)
            given += purge(st, sp);
        return given;
    }

    /// A segment's pages go back to the OS, with its guard page if it has one (S1).
    static void unmap_segment_pages(void* seg, bool guarded) noexcept {
        if (guarded)
            os_unmap_guarded(seg, segment_bytes);
        else
            os_unmap_pages(seg, segment_bytes);
    }

  private:
    /// A clean span gives its pages back; when it is the last of its segment in use, the
    /// segment goes whole (S12).
    static std::size_t purge(span_state& st, span* sp) noexcept {
        segment* const seg = segment_of(sp);
        if (seg->idle_spans == spans_per_segment)
            return unmap(st, seg);
        unlink_clean(st, sp);
        if (seg->huge)
            make_plain(seg);
        const std::size_t bytes = span_usable_bytes(sp);
        os_purge_pages(span_usable_begin(sp), bytes);
        os_memory.note_purged(bytes);
        sp->role = span_role::purged;
        sp->given_back = true;
        push_front(st.purged, sp);
        st.bytes_purged += bytes;
        st.bytes_given_back += bytes;
        STA_PROBE2(span_purged, span_usable_begin(sp), bytes);
        return bytes;
    }

    /// A segment with huge pages starts giving pages back: it takes plain pages from now
    /// on, and its purged spans, never used but brought in whole by its huge pages, give
    /// their pages back too (S11), a run of neighbours in one call.
    static void make_plain(segment* seg) noexcept {
        seg->huge = false;
        advise_plain_pages(seg, segment_bytes);
        for (std::uint32_t i = 0; i < spans_per_segment;) {
            std::uint32_t end = i;
            while (end < spans_per_segment && seg->spans[end].role == span_role::purged)
                ++end;
            if (end != i) {
                const span* const from = &seg->spans[i];
                os_purge_pages(span_usable_begin(from),
                               std::size_t{end - i} * span_bytes - span_usable_offset(from));
            }
            i = end + 1;
        }
    }

    /// Every span of `seg` is clean or purged: the segment leaves every list and goes
    /// back to the OS.
    static std::size_t unmap(span_state& st, segment* seg) noexcept {
        std::size_t purged = 0;
        for (span& sp : seg->spans) {
            if (sp.role == span_role::purged) {
                unlink(st.purged, &sp);
                purged += span_usable_bytes(&sp);
            } else {
                unlink_clean(st, &sp);
            }
        }
        st.bytes_purged -= purged;
        os_memory.forget_purged(purged);
        const spin_guard walking(st.walk_lock); // S14: to the unmap
        if (seg->newer != nullptr)
            seg->newer->older = seg->older;
        else
            st.segments = seg->older;
        if (seg->older != nullptr)
            seg->older->newer = seg->newer;
        --st.mappings;
        ++st.segments_unmapped;
        st.purge.note_unmapped(os_now_ms());
        const std::size_t given = segment_bytes - purged;
        st.bytes_given_back += given;
        unmark_pool_segment(seg);
        os_unmap_pages(seg->bitmaps, bitmap_area_bytes);
        hooks::page_unmapped(seg, segment_bytes);
        unmap_segment_pages(seg, seg->guarded);
        STA_PROBE1(segment_unmapped, seg);
        return given;
    }
};

} // namespace sta::detail
