// sta-pool: blocks between guard pages — the hardened drop-in's big blocks and its sampled
// allocations (c_api/hardened_heap.hpp). Each block is a mapping of its own (Linux):
//
//   +-------+--------+----------------------------------------+-------+
//   | guard | record | data pages: ... [header | block | tail] | guard |
//   +-------+--------+----------------------------------------+-------+
//   no access                                   the block ends at  no access
//                                               the data's end, rounded down to
//                                               its alignment (a write past it faults),
//                                               or 8 bytes or more before it
//
//   header (the 16 bytes before the block; on the record page when the block starts a
//   page):   [ header_tag(p) ^ lead | the bytes asked for ]
//   record (the page before the block's first page, the mapping's own):
//            [ the mapping's start | its length ]
//   tail (8 bytes right after a block that does not end at its data's end):
//            tail_canary(p, bytes), unaligned
//
//   realloc of a big block: it stays where it is while its data pages hold it (its end
//   then short of the guard page: the tail catches what is written past it at the next
//   free or realloc), else its pages move (mremap: no copy) into a kept mapping that holds
//   them or a fresh one, its place in the mapping the same.
//
// Invariants:
//  GB1 A live guarded block's header decodes to guarded_live_lead or guarded_reused_lead
//      (c_api/c_common.hpp's tag: a program cannot write one without the process's
//      secret); no other block's header decodes to either (c_span_heap's leads are 0,
//      header_freed, or a power of two of 16 or more). Its record page holds its mapping.
//      It ends at its data's end (a write past it faults) or 8 bytes or more before it
//      (ends_well), and then the 8 bytes after it hold tail_canary(p, bytes): a write
//      past its end is caught by the one or the other.
//  GB2 A freed sampled block's data pages lose all access and their memory at once (a read
//      or write after free faults), its header, where it lies on the record page, decodes
//      to guarded_freed_lead, and its mapping stays reserved until 64 later frees of
//      sampled blocks have come (guarded_freed), then goes back to the OS.
//  GB3 A freed big block's mapping is kept as it is, its guard pages around it and its
//      header decoding to guarded_freed_lead, in guarded_kept (at most 4 mappings and
//      max_kept_bytes of data in all; the oldest go back to the OS first): the next big
//      block takes the smallest that holds it again (one more than a quarter too big
//      first gives back the rest of its end, reuse), and so does a realloc that moves a
//      block (no fault, where a new mapping costs a fault a page, or a huge page's);
//      a block in one has guarded_reused_lead, and its bytes are the
//      last owner's (calloc clears them: only guarded_live_lead is zero already). A use
//      after free of a big block is not caught.
#pragma once

#include "sta/detail/c_api/c_common.hpp"
#include "sta/detail/os/pages.hpp"
#include "sta/detail/pool/state.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#if !defined(_WIN32)
#include <sys/mman.h>
#endif

namespace sta::detail {

/// The header leads of guarded blocks (GB1, GB2): between header_freed and the aligned
/// blocks' leads of 16 or more.
inline constexpr std::size_t guarded_live_lead = 2;
inline constexpr std::size_t guarded_freed_lead = 3;
inline constexpr std::size_t guarded_reused_lead = 4;
static_assert(guarded_live_lead != header_freed && guarded_freed_lead != header_freed &&
              guarded_reused_lead != header_freed && guarded_reused_lead < 16);

/// A guarded block's mapping (the record page holds it).
struct guarded_mapping {
    std::byte* base = nullptr;
    std::size_t length = 0;
};
/// The last N mappings put in, under a lock: put() returns the one it pushes out (the
/// oldest; none while a slot is free). The freed sampled blocks' mappings, reserved
/// without access (GB2), and the big blocks' mappings kept for reuse (GB3).
template <std::size_t N>
struct guarded_ring {
    static constexpr std::size_t slots = N;
    spin_lock lock;
    guarded_mapping slot[N] = {};
    std::size_t next = 0; // the slot a full ring gives up next

    guarded_mapping put(guarded_mapping r) noexcept {
        const spin_guard held(lock);
        std::size_t at = 0;
        while (at < N && slot[at].base != nullptr)
            ++at;
        if (at == N) { // full: the oldest goes
            at = next;
            next = (next + 1) % N;
        }
        const guarded_mapping out = slot[at];
        slot[at] = r;
        return out;
    }
};
inline constinit guarded_ring<64> guarded_freed{};
/// GB3: the big blocks' mappings kept for reuse, oldest first, at most max_kept_bytes of
/// data pages in all (the default library's retained mappings keep 64 MiB too).
inline constexpr std::size_t max_kept_bytes = std::size_t{64} << 20;
struct guarded_kept_set {
    static constexpr std::size_t slots = 4;
    spin_lock lock;
    guarded_mapping slot[slots] = {};
    std::size_t count = 0;
    std::size_t bytes = 0; // the data pages of slot[0..count)

    static std::size_t data_of(guarded_mapping r) noexcept { return r.length - 3 * os_page_bytes; }

    /// r joins, the oldest leaving while the set is over its slots or its bytes: they
    /// are written to `out` (as many as it returns) for the caller to give back.
    std::size_t put(guarded_mapping r, guarded_mapping (&out)[slots]) noexcept {
        const spin_guard held(lock);
        std::size_t gone = 0;
        while (count != 0 && (count == slots || bytes + data_of(r) > max_kept_bytes))
            out[gone++] = remove(0);
        slot[count++] = r;
        bytes += data_of(r);
        return gone;
    }
    /// The first mapping whose data pages d satisfy fits(d), taken out (the smallest one
    /// with `smallest`); {} when none does.
    template <class Fits>
    guarded_mapping take(Fits fits, bool smallest) noexcept {
        const spin_guard held(lock);
        std::size_t best = count;
        for (std::size_t at = 0; at < count; ++at)
            if (fits(data_of(slot[at])) &&
                (best == count || (smallest && slot[at].length < slot[best].length))) {
                best = at;
                if (!smallest)
                    break;
            }
        return best == count ? guarded_mapping{} : remove(best);
    }

    /// Every kept mapping, taken out (the caller gives them back): how many.
    std::size_t take_all(guarded_mapping (&out)[slots]) noexcept {
        const spin_guard held(lock);
        const std::size_t taken = count;
        for (std::size_t at = 0; at < taken; ++at)
            out[at] = std::exchange(slot[at], guarded_mapping{});
        count = 0;
        bytes = 0;
        return taken;
    }

  private:
    guarded_mapping remove(std::size_t at) noexcept {
        const guarded_mapping r = slot[at];
        for (std::size_t i = at + 1; i < count; ++i)
            slot[i - 1] = slot[i];
        slot[--count] = {};
        bytes -= data_of(r);
        return r;
    }
};
inline constinit guarded_kept_set guarded_kept{};

struct guarded_block {

    /// The lead p's header decodes to (it must lie in readable memory: the caller knows p
    /// is no pooled block).
    static std::size_t lead_of(const void* p) noexcept {
        std::size_t word;
        std::memcpy(&word, static_cast<const std::byte*>(p) - 16, sizeof word);
        return word ^ header_tag(p);
    }
    /// The bytes asked for (GB1).
    static std::size_t size_of(const void* p) noexcept {
        std::size_t bytes;
        std::memcpy(&bytes, static_cast<const std::byte*>(p) - 8, sizeof bytes);
        return bytes;
    }
    /// GB1's tail: is the canary after a live block there where it has room? (False: a
    /// write ran past the block's end.)
    static bool tail_intact(const void* p) noexcept {
        const std::size_t bytes = size_of(p);
        const std::byte* const end = static_cast<const std::byte*>(p) + bytes;
        if (data_end(mapping_of(p)) - end < 8)
            return true;
        std::uint64_t word;
        std::memcpy(&word, end, sizeof word);
        return word == tail_canary(p, bytes);
    }

    /// `bytes` aligned to `alignment` (a power of two up to a page), ending at the end of
    /// its data pages, between guard pages; nullptr when the OS refuses.
    static void* alloc(std::size_t bytes, std::size_t alignment) noexcept {
        const std::size_t data = os_round_up(bytes + 2 * alignment); // room for place's step
        if (void* const p = reuse(bytes, alignment, data))
            return p;
        const guarded_mapping r = map(data + 3 * os_page_bytes);
        return r.base != nullptr ? place(r, bytes, alignment, guarded_live_lead) : nullptr;
    }

    /// A block of `bytes` that realloc makes big (it may well grow again): at the start of
    /// the smallest kept mapping that holds it, to grow in place there (its tail guards the
    /// rest, GB1), else alloc's.
    static void* alloc_growing(std::size_t bytes) noexcept {
        const std::size_t data = os_round_up(bytes + 8); // p at the data's start: GB1's tail
        const guarded_mapping r =
            guarded_kept.take([data](std::size_t has) { return has >= data; }, true);
        if (r.base == nullptr)
            return alloc(bytes, 16);
        os_memory.big_taken(r.length - 2 * os_page_bytes);
        std::byte* const p = r.base + 2 * os_page_bytes;
        std::memcpy(record_of(p), &r, sizeof r);
        const std::size_t word = header_tag(p) ^ guarded_reused_lead;
        std::memcpy(p - 16, &word, sizeof word);
        set_size(p, bytes);
        return p;
    }

    /// realloc of a live big guarded block p to `bytes`: in place while its data pages hold
    /// it, else its pages moved into a kept mapping that holds them, or a fresh one, at
    /// the same place in it (GB1, GB3). nullptr when the OS refuses: p is as it was.
    static void* resize(void* p, std::size_t bytes) noexcept {
        const guarded_mapping old = mapping_of(p);
        auto* const at = static_cast<std::byte*>(p);
        if (ends_well(data_end(old) - (at + bytes))) {
            set_size(p, bytes);
            return p;
        }
#if defined(_WIN32)
        return nullptr;
#else
        // What moves: the record page up to the block's last page. Its new mapping ends
        // at a guard page after the block.
        const std::size_t offset = static_cast<std::size_t>(at - old.base);
        const std::size_t moved = os_round_up(offset + size_of(p)) - os_page_bytes;
        const std::size_t length = os_round_up(offset + bytes + 8) + os_page_bytes; // GB1
        guarded_mapping to = guarded_kept.take(
            [length](std::size_t data) { return data + 3 * os_page_bytes >= length; }, true);
        const bool kept = to.base != nullptr;
        if (kept)
            os_memory.big_taken(to.length - 2 * os_page_bytes);
        else if (to = map(length); to.base == nullptr)
            return nullptr;
        if (!os_move_pages(old.base + os_page_bytes, moved, to.base + os_page_bytes)) {
            free_mapping(to, kept); // the kernel refused (the range spans two mappings)
            return nullptr;
        }
        os_memory.big_freed(old.length - 2 * os_page_bytes);
        os_memory.unmapped(old.length - 2 * os_page_bytes);
        ::munmap(old.base, old.length); // its guard pages, and its data pages not moved
        std::byte* const q = to.base + offset;
        std::memcpy(record_of(q), &to, sizeof to);
        const std::size_t word = header_tag(q) ^ guarded_reused_lead;
        std::memcpy(q - 16, &word, sizeof word);
        set_size(q, bytes);
        return q;
#endif
    }

    /// A live guarded block (GB1) is freed (GB2); a big one's mapping is kept (GB3).
    static void free(void* p, bool big) noexcept {
#if !defined(_WIN32)
        const guarded_mapping r = mapping_of(p);
        auto* const first = static_cast<std::byte*>(record_of(p)) + os_page_bytes;
        const std::size_t counted = r.length - 2 * os_page_bytes;
        os_memory.big_freed(counted);
        const bool kept = big && guarded_kept_set::data_of(r) <= max_kept_bytes; // GB3
        // The header says freed where it stays readable: a kept mapping, the record page.
        if (kept || reinterpret_cast<std::uintptr_t>(p) % os_page_bytes == 0) {
            const std::size_t word = header_tag(p) ^ guarded_freed_lead;
            std::memcpy(static_cast<std::byte*>(p) - 16, &word, sizeof word);
        }
        if (kept) {
            guarded_mapping out[guarded_kept_set::slots];
            const std::size_t gone = guarded_kept.put(r, out);
            for (std::size_t i = 0; i < gone; ++i)
                give_back(out[i]);
            return;
        }
        // The data pages: no access, no memory (one call: a fresh mapping over them).
        (void)::mmap(first, r.base + r.length - os_page_bytes - first, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        os_memory.unmapped(counted);
        if (const guarded_mapping out = guarded_freed.put(r); out.base != nullptr)
            ::munmap(out.base, out.length);
#else
        (void)p, (void)big;
#endif
    }

  private:
    /// A fresh mapping of `length` bytes, its first and last page no access; {} when the
    /// OS (or the memory limit) refuses. Data of 2 MiB or more is advised huge pages, and
    /// ends on a huge page's boundary.
    static guarded_mapping map(std::size_t length) noexcept {
#if defined(_WIN32)
        (void)length;
        return {};
#else
        const std::size_t counted = length - 2 * os_page_bytes;
        if (!os_memory.admit_mapping(counted))
            return {};
        // Data of huge pages ends on a huge page's boundary (the block ends there): each
        // of its whole 2 MiB from the end may be one. The spare reserved for it goes.
        const bool huge = counted >= os_huge_page_bytes;
        const std::size_t spare = huge ? os_huge_page_bytes - os_page_bytes : 0;
        void* const reserved = ::mmap(nullptr, length + spare, PROT_NONE,
                                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        auto* base = static_cast<std::byte*>(reserved);
        if (reserved != MAP_FAILED && huge) {
            const auto end = reinterpret_cast<std::uintptr_t>(base) + length - os_page_bytes;
            const std::size_t lead = (os_huge_page_bytes - end % os_huge_page_bytes) %
                                     os_huge_page_bytes; // a multiple of os_page_bytes
            if (lead != 0)
                ::munmap(base, lead);
            if (spare != lead)
                ::munmap(base + lead + length, spare - lead);
            base += lead;
        }
        if (reserved == MAP_FAILED ||
            ::mprotect(base + os_page_bytes, counted, PROT_READ | PROT_WRITE) != 0) {
            if (reserved != MAP_FAILED)
                ::munmap(base, length);
            os_memory.unmapped(counted);
            return {};
        }
        if (huge)
            advise_pages(base + os_page_bytes, counted, true, false);
        os_memory.big_taken(counted);
        return {base, length};
#endif
    }
    /// A mapping taken for a move that did not happen: back to the kept set, or the OS.
    static void free_mapping(guarded_mapping r, bool kept) noexcept {
        os_memory.big_freed(r.length - 2 * os_page_bytes);
        if (!kept)
            return give_back(r);
        guarded_mapping out[guarded_kept_set::slots];
        const std::size_t gone = guarded_kept.put(r, out);
        for (std::size_t i = 0; i < gone; ++i)
            give_back(out[i]);
    }

    /// The block of `bytes` in mapping r: its record, its header with `lead` (GB1, GB3).
    static void* place(guarded_mapping r, std::size_t bytes, std::size_t alignment,
                       std::size_t lead) noexcept {
        std::byte* const end = data_end(r);
        auto* p = reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(end - bytes) &
                                               ~(alignment - 1));
        if (!ends_well(end - (p + bytes)))
            p -= alignment; // (alloc's data has room for it) the tail fits after it
        std::memcpy(record_of(p), &r, sizeof r);
        const std::size_t word = header_tag(p) ^ lead;
        std::memcpy(p - 16, &word, sizeof word);
        set_size(p, bytes);
        return p;
    }
    /// Does a block that ends `short_of` bytes before its data's end keep GB1: at the end
    /// (a write past it faults), or with room for its tail?
    static bool ends_well(std::ptrdiff_t short_of) noexcept {
        return short_of == 0 || short_of >= 8;
    }
    /// The block's size, and its tail where it has room (GB1).
    static void set_size(void* p, std::size_t bytes) noexcept {
        auto* const at = static_cast<std::byte*>(p);
        std::memcpy(at - 8, &bytes, sizeof bytes);
        if (data_end(mapping_of(p)) - (at + bytes) >= 8) {
            const std::uint64_t tail = tail_canary(p, bytes);
            std::memcpy(at + bytes, &tail, sizeof tail);
        }
    }
    static std::uint64_t tail_canary(const void* p, std::size_t bytes) noexcept {
        return ~header_tag(static_cast<const std::byte*>(p) + bytes);
    }
    /// The smallest kept mapping whose data pages hold `data` bytes, taken again (GB3);
    /// nullptr when none does. One that holds more than a quarter beyond gives the rest
    /// of its end back (in whole huge pages where it has them, so that its end stays on
    /// one's boundary), its last page left the new guard.
    static void* reuse(std::size_t bytes, std::size_t alignment, std::size_t data) noexcept {
        guarded_mapping r =
            guarded_kept.take([data](std::size_t has) { return has >= data; }, true);
        if (r.base == nullptr)
            return nullptr;
        if (const std::size_t has = guarded_kept_set::data_of(r); has - data > data / 4) {
            const std::size_t unit =
                data >= os_huge_page_bytes ? os_huge_page_bytes : os_page_bytes;
            shorten(r, (has - data) / unit * unit);
        }
        os_memory.big_taken(r.length - 2 * os_page_bytes);
        return place(r, bytes, alignment, guarded_reused_lead);
    }
    /// r's last `cut` bytes go back to the OS and the page before them becomes its guard;
    /// nothing changes when the OS refuses.
    static void shorten(guarded_mapping& r, std::size_t cut) noexcept {
#if defined(_WIN32)
        (void)r, (void)cut; // (no kept mappings on Windows)
#else
        std::byte* const end = r.base + r.length - cut;
        if (cut == 0 || ::mprotect(end - os_page_bytes, os_page_bytes, PROT_NONE) != 0)
            return;
        ::munmap(end, cut);
        os_memory.unmapped(cut);
        r.length -= cut;
#endif
    }
    /// A kept mapping goes back to the OS.
    static void give_back(guarded_mapping r) noexcept {
#if !defined(_WIN32)
        os_memory.unmapped(r.length - 2 * os_page_bytes);
        ::munmap(r.base, r.length);
#else
        (void)r;
#endif
    }
    static void* record_of(const void* p) noexcept {
        return reinterpret_cast<void*>(
            (reinterpret_cast<std::uintptr_t>(p) & ~(os_page_bytes - 1)) - os_page_bytes);
    }
    static guarded_mapping mapping_of(const void* p) noexcept {
        guarded_mapping r;
        std::memcpy(&r, record_of(p), sizeof r);
        return r;
    }
    /// Where the data pages of r end: its last guard page.
    static std::byte* data_end(guarded_mapping r) noexcept {
        return r.base + r.length - os_page_bytes;
    }

  public:
    /// malloc_trim: every kept big mapping goes back to the OS (GB3); the bytes of their
    /// data pages.
    static std::size_t trim() noexcept {
        guarded_mapping out[guarded_kept_set::slots];
        const std::size_t taken = guarded_kept.take_all(out);
        std::size_t given = 0;
        for (std::size_t at = 0; at < taken; ++at) {
            given += guarded_kept_set::data_of(out[at]);
            give_back(out[at]);
        }
        return given;
    }
    /// fork(): no other thread holds the sets' locks in the child.
    static void before_fork() noexcept {
        guarded_freed.lock.lock();
        guarded_kept.lock.lock();
    }
    static void after_fork() noexcept {
        guarded_kept.lock.unlock();
        guarded_freed.lock.unlock();
    }
};

} // namespace sta::detail
