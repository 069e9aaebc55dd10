// sta-pool: the span layout's structures — segments, spans and a state's lists; the
// invariants of the layout. What the layout does with them: layout/spans.hpp (the fast
// path, refills, frees from other threads), layout/span_life.hpp (clean, purged, reused,
// unmapped).
//
//   segment: segment_bytes (2 MiB) from the OS, aligned to segment_bytes
//   +---------------------------------+----------------+-----+----------------+
//   | span 0: the segment's headers   | span 1 blocks  | ... | span 31 blocks |
//   | (its first 4 KiB), then blocks  | 64 KiB         |     | 64 KiB         |
//   +---------------------------------+----------------+-----+----------------+
//   ^ base = p & ~(segment_bytes - 1)   span_of(p) = &base->spans[(p >> 16) & 31]
//
//   the segment's bitmaps: a mapping of their own (bitmap_area_bytes), base->bitmaps
//   +----------------------------------------+----------------------------------------+
//   | short slots: 256 B for each of the 32  | long slots: 1 KiB for each span, for   |
//   | spans, for classes of 32 B and more    | the classes below 32 B                 |
//   +----------------------------------------+----------------------------------------+
//
//   Every span of a segment serves blocks, span 0 too: the segment loses its headers'
//   page, not a span. Under transparent huge pages a segment is resident whole, so a
//   span 0 of headers and bitmaps alone would hold 52 KiB of nothing per 2 MiB.
//
//   a span of blocks serving a class (64 KiB; a class that does not divide it leaves
//   a tail of fewer bytes than one block, never handed out; span 0's first blocks
//   overlap the headers, never handed out either):
//
//     | block 0 | block 1 | ... | block capacity - 1 | tail |
//     ^ begin                                        ^ limit = begin + capacity * block_bytes
//     span 0: | headers .. | block first | ... | block capacity - 1 | tail |
//
//   a span serving the 32 B class, while it is its class's current span:
//
//     blocks:  | live | free | live | cached | live | window: 64 blocks of one bitmap word |
//     bitmap:     0      1      0      0        0     0 .............................  (taken)
//                        |             |              +-- bits[slot]: the window's free blocks,
//                        |             |                  the class hands them out lowest
//                        |             |                  first (window[slot]: block 0's address)
//                        |             +-- on heads[slot], the class's cache: blocks its
//                        |                 thread freed by the sized API (or the drop-in's
//                        |                 free, marked) since the last flush, from any
//                        |                 of its spans (LIFO); handed out before the
//                        |                 window's
//                        +-- the span's bitmap: a bit per block, set when the block is free
//                            and nobody holds it; the class takes a word of it at a time, in
//                            ascending order (scan), into its window
//
//   the same span in its first pass (bumping), from its start until its cursor is spent:
//
//     blocks:  | live | free | live | cached | live | never handed out ..................... |
//     bitmap:     0      1      0      0        0     0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
//                                                   ^ cursor[slot]         cursor_end[slot] ^
//              the class hands out next and adds a block's bytes: a bump allocator, whose
//              frees set their bits; the window is empty until the cursor stops
//
// A block finds its span, and so its class, by masking its address: the sized free
// needs no lookup table and the C API needs no per-block header. A sized free links the
// block onto its class's cache, in whatever order it comes, and a flush sets its bit; a
// free without a size sets it at once (the drop-in's goes on the cache too, with the
// freed mark: pool/freed_mark.hpp): a free in any order costs what a free in order
// costs, the block freed last by the sized API is the next handed out, and what comes
// back to the spans comes out of them in ascending address order without a sort.
//
// Invariants (check_spans in tests/support/span_checker.hpp enforces them in tests):
//  S1  `segments` lists every mapped segment, newest first (doubly linked: older,
//      newer), `mappings` of them; each is segment_bytes long, aligned to segment_bytes,
//      its headers lie in its first segment_header_bytes, its bitmaps in its own mapping of
//      bitmap_area_bytes (`bitmaps`), and its bit is set in the segment map. A segment of
//      the OS's own pages is `guarded`: the os_guard_bytes below it (a page; on Windows
//      64 KiB reserved, never committed) have no access (a write running past whatever
//      lies below stops short of its headers). A segment unmapped is on no list, its
//      bitmaps and its guard are unmapped and its bit is clear.
//  S2  A span serving a class has capacity = span_bytes / block_bytes places for blocks
//      of block_bytes = Classes::bytes_of_slot(slot) (its pool's class set) at [begin,
//      limit), begin = base + index * span_bytes, index 0..31; `recip` is
//      ceil(2^32 / block_bytes), so that a block's index is (offset * recip) >> 32. Its
//      blocks are the places first .. capacity - 1: `first` is 0, but in span 0, whose
//      first places overlap the segment's headers, ceil(segment_header_bytes / block_bytes)
//      (first_block_of). Its bitmap (in the segment's bitmaps, at `bitmap`) has a bit
//      per place in its first ceil(capacity / 64) words; past capacity, only the tail's
//      bit: bit `capacity`, set while the span serves a class that does not divide
//      span_bytes. The bits of the places below `first` and the tail's are set, so that
//      a free of such an address finds its bit set and is refused (release_checked, one
//      bit test it makes anyway); they are never taken, counted or cleared. A clean or
//      purged span has slot 0 and capacity 0 (its recip, first and block_bytes are those
//      of the class it served last, or 0).
//  S3  Every span has one role. clean: on the clean list; purged: on the purged list
//      (layout/span_life.hpp); current: `current[slot]` of its class, on no list.
//      partial: on `partial[slot]`. sleeping: on no list.
//  S4  used = span_blocks = capacity - first, less the bits of its blocks set in the
//      span's bitmap (first .. capacity - 1). The blocks on a cache (heads), of bits[slot]
//      and of cursor[slot] (the current span's) count as used: the state holds them.
//  S5  heads[slot], the class's cache, holds blocks of spans of this state (S10) that its
//      thread freed by the sized API or by a marked free (pool/freed_mark.hpp) while
//      direct_frees was false (a family with freed marks: its sized frees at any time),
//      each once: of the class, or of a larger class for a block a shrink kept in place
//      (its span names its class). The blocks on all the caches together and frees_to_flush
//      add up to at most flush_every: cache_frees, or cache_frees_freeing after a flush
//      that found at least half of its interval's frees on the caches (the program frees
//      more than it allocates). A free that brings frees_to_flush to 0 flushes every cache
//      (a block of the word its class's window holds goes back into the window, still used;
//      any other has its bit set and its span's used counted down) and runs the slow-path
//      checks. window[slot] is the address of block 64 w of current[slot] for the word w
//      last taken (scan = w + 1), bits[slot] the blocks of that word the class has not
//      handed out; both are empty when there is no current span. A word taken is zero in
//      the bitmap. scan <= frontier: the words from frontier on were never taken since the
//      span started its class. rescan: a flush sent a block before the window to the
//      bitmap, and the class's next word taken is the lowest with free blocks. The cursor
//      (cursor[slot] .. cursor_end[slot] - 1) is empty unless the current span is
//      `bumping`: a span that starts serving a class (clean or purged before) has its
//      bitmap clear (all its blocks held), the cursor over all its blocks and scan at the
//      bitmap's end (a spent cursor meets refill's rule for a bitmap's end: start over, or
//      retire); the class hands out cursor[slot], lowest address first, and nothing writes
//      the bitmap but the frees. While the cursor holds blocks the window is empty, and a
//      free of a block at or past cursor[slot] is refused (it was never handed out). The
//      cursor stops when it is spent, when the class leaves the span, or at a heartbeat
//      (S7) that finds a sixteenth of the blocks it handed out free again: its blocks go to
//      the bitmap (set, uncounted), scan is 0 and frontier the word it reached.
//  S6  In every span, live blocks, the bitmap's bits, the caches' blocks and (current)
//      bits[slot] and the cursor's blocks are its span_blocks blocks, each once.
//  S7  wake_at is 0 for partial spans; a sleeping span has wake_at < used, and wakes
//      (becomes partial) when a free brings used to it. A current span has wake_at <=
//      used, at most heartbeat_frees below it since its last event or word taken: the
//      free that brings used there runs the slow-path checks (its heartbeat).
//  S8  A span whose blocks are all free (used == 0) is clean or purged, unless it is
//      current.
//  S9  A segment's owner is the state that mapped it, from then on, and owns the
//      blocks of its spans: a state
//      never gives a segment away (a per-thread state whose thread ended is adopted
//      whole by a later thread, home/per_thread.hpp), so the owner of a block never changes
//      while the block is live.
//  S10 Per-thread pools: a block's bit is set, or the block put on a cache, only
//      by its owner (or the thread holding its parked state). A block freed by
//      another thread goes to the owner's inbox (pool/state.hpp), through that
//      thread's outbox (S13; a thread without a pool takes one that holds nothing for
//      it, home/per_thread.hpp, PH7), and counts as used (S4) until the owner drains it.
//  S11 A segment's idle_spans counts its clean and purged spans. The clean list runs
//      newest first: `since_ms` never increases along it. A purged span's pages (but
//      span 0's headers) were given back to the OS and nothing of them was touched since.
//  S12 No segment has every span purged: such a segment is unmapped.
//  S13 A state's outbox (pool/state.hpp) holds, in each way, a chain of `count` blocks
//      of the way's owner, another state, fewer than batch_blocks, ending at its
//      tail; `held` counts the blocks of every way. A parked state's outbox is empty.
//  S14 `segments` changes, and a segment is unmapped, only under the state's walk_lock:
//      a walk that holds it (process_stats) reads every segment on the list mapped.
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/pool/segment_map.hpp"
#include "sta/detail/pool/size_class.hpp"
#include "sta/detail/pool/state.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>

namespace sta::detail {

inline constexpr std::size_t span_bytes = std::size_t{64} * 1024;
inline constexpr std::size_t segment_bytes = std::size_t{1} << segment_shift; // 2 MiB
inline constexpr std::uint32_t spans_per_segment =
    static_cast<std::uint32_t>(segment_bytes / span_bytes);
/// The segment's headers: the first page of span 0, whose blocks start after them (S2).
inline constexpr std::size_t segment_header_bytes = 4096;
/// Where the bitmaps lie in a segment's bitmap mapping, and each span's two slots: a
/// short one for the classes of 32 B and more (2048 blocks at most, the tail's bit
/// included), all 32 of them in the first two pages, and a long one, a bit per block of
/// the smallest class, for the classes below. A span uses the slot of its class
/// (bitmap_of_span), so a segment whose spans serve classes of 32 B and more keeps two
/// pages of bitmaps resident, not ten.
inline constexpr std::size_t short_bitmap_min_class = 32;
inline constexpr std::size_t short_bitmap_bytes = span_bytes / short_bitmap_min_class / 8;
inline constexpr std::size_t bitmap_words = span_bytes / min_class_bytes / 64;
inline constexpr std::size_t bitmap_bytes = bitmap_words * 8;
inline constexpr std::size_t long_bitmaps_offset = spans_per_segment * short_bitmap_bytes;
inline constexpr std::size_t bitmap_area_bytes =
    long_bitmaps_offset + spans_per_segment * bitmap_bytes;
static_assert(span_bytes % short_bitmap_min_class == 0,
              "the short slot's smallest class has no tail: its bits fill the slot");

enum class span_role : std::uint8_t { clean, current, partial, sleeping, purged };

struct span_state;

struct alignas(64) span {
    std::uint32_t used = 0;            // S4
    std::uint32_t wake_at = 0;         // S7: a free that brings `used` here takes the slow path
    std::uint32_t capacity = 0;        // S2: blocks of the class in the span
    std::uint32_t recip = 0;           // S2: a block's index = (offset * recip) >> 32
    std::uint16_t scan = 0;            // S5: the next bitmap word the class takes
    std::uint8_t slot = 0;             // S2: the class's canonical slot; 0 when clean
    span_role role = span_role::clean; // S3
    /// S5: the bitmap words its class has taken since it started serving it; the blocks of
    /// the words from there on were never handed out, their pages never touched.
    std::uint16_t frontier = 0;
    /// S5: a flush sent a cached block before the window back to the bitmap: the next
    /// word the class takes is the lowest with free blocks, not the next after scan.
    bool rescan = false;
    /// S11: purged after it served a class (not a fresh segment's): taking it again is a
    /// refault (pool/purge_delay.hpp); since_ms still says when it became clean.
    bool given_back = false;
    /// S3: the clean, purged or partial list the span is on; all three doubly linked
    span* next = nullptr;
    span* prev = nullptr;
    std::uint64_t* bitmap = nullptr; // S4: its slot in the segment's bitmaps (bitmap_of_span)
    std::uint32_t since_ms = 0;      // S11: clean: when it became clean (os_now_ms)
    std::uint32_t block_bytes = 0;   // S2: the bytes of a block of its class
    std::uint32_t first = 0;         // S2: its first block (span 0: past the headers)
    /// S5: its class hands out the blocks it never handed out from its cursor, until the
    /// cursor is spent or stopped.
    bool bumping = false;
};

struct segment {
    segment* older = nullptr; // S1
    segment* newer = nullptr;
    span_state* owner = nullptr;  // S9: the state that mapped it, owner of its spans' blocks
    std::uint32_t idle_spans = 0; // S11: spans clean or purged
    bool huge = false;            // advised huge pages when mapped, until a span is purged
    bool guarded = false;         // S1: a guard page lies below it (os_map_aligned_guarded)
    std::byte* bitmaps = nullptr; // S1: the spans' bitmaps, bitmap_area_bytes of their own
    alignas(64) span spans[spans_per_segment];
};
static_assert(sizeof(segment) <= segment_header_bytes, "the headers fit in span 0's first page");
static_assert(sizeof(span) == 64 && offsetof(segment, spans) == 64);

STA_FORCE_INLINE segment* segment_of(const void* p) noexcept {
    return reinterpret_cast<segment*>(reinterpret_cast<std::uintptr_t>(p) & ~(segment_bytes - 1));
}
/// The span header of any address inside a segment: the segment's base, plus the span's
/// index scaled to its header in one shift and one mask.
STA_FORCE_INLINE span* span_of(const void* p) noexcept {
    constexpr unsigned header_shift = 6; // log2(sizeof(span))
    constexpr unsigned span_shift = 16;  // log2(span_bytes)
    static_assert(std::size_t{1} << span_shift == span_bytes);
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t scaled_index =
        (a >> (span_shift - header_shift)) & ((spans_per_segment - 1) << header_shift);
    return reinterpret_cast<span*>((a & ~(segment_bytes - 1)) + offsetof(segment, spans) +
                                   scaled_index);
}
inline std::uint32_t span_index(const span* sp) noexcept {
    return static_cast<std::uint32_t>(sp - segment_of(sp)->spans);
}
inline std::byte* span_begin(const span* sp) noexcept {
    return reinterpret_cast<std::byte*>(segment_of(sp)) + span_index(sp) * span_bytes;
}
/// The span's memory that may hold blocks: all of it, but span 0's headers (S1), which
/// no purge gives back.
inline std::size_t span_usable_offset(const span* sp) noexcept {
    const bool first_span =
        (reinterpret_cast<std::uintptr_t>(sp) & (segment_bytes - 1)) == offsetof(segment, spans);
    return first_span ? segment_header_bytes : 0;
}
inline std::byte* span_usable_begin(const span* sp) noexcept {
    return span_begin(sp) + span_usable_offset(sp);
}
inline std::size_t span_usable_bytes(const span* sp) noexcept {
    return span_bytes - span_usable_offset(sp);
}
/// The first block of span `index` serving blocks of `block_bytes` (S2): past the
/// headers in span 0.
constexpr std::uint32_t first_block_of(std::uint32_t index, std::size_t block_bytes) noexcept {
    return index == 0
               ? static_cast<std::uint32_t>((segment_header_bytes + block_bytes - 1) / block_bytes)
               : 0;
}
/// The blocks a span serving a class holds (S2, S4).
inline std::uint32_t span_blocks(const span* sp) noexcept {
    return sp->capacity - sp->first;
}
/// Is place i of the span one of its blocks: first .. capacity - 1 (S2)?
inline bool is_block_place(const span* sp, std::size_t i) noexcept {
    return i >= sp->first && i < sp->capacity;
}
/// Where the bitmap of span `index` of a segment lies while it serves blocks of
/// `block_bytes` (span::bitmap holds it): its short slot or its long one.
inline std::uint64_t* bitmap_of_span(segment* seg, std::uint32_t index,
                                     std::size_t block_bytes) noexcept {
    const std::size_t offset = block_bytes >= short_bitmap_min_class
                                   ? index * short_bitmap_bytes
                                   : long_bitmaps_offset + index * bitmap_bytes;
    return reinterpret_cast<std::uint64_t*>(seg->bitmaps + offset);
}
/// The state that owns p's block (S9): one mask, one load.
STA_FORCE_INLINE span_state* owner_of(const void* p) noexcept {
    return segment_of(p)->owner;
}
/// The span's bitmap: a bit per block (S2, S4).
STA_FORCE_INLINE std::uint64_t* span_bitmap(const span* sp) noexcept {
    return sp->bitmap;
}
/// The index of block p in its span: one multiply (S2).
STA_FORCE_INLINE std::uint32_t block_index(const span* sp, const void* p) noexcept {
    const std::uint64_t offset = reinterpret_cast<std::uintptr_t>(p) & (span_bytes - 1);
    return static_cast<std::uint32_t>((offset * sp->recip) >> 32);
}
/// What exact_block_index answers for an address that is no block's start.
inline constexpr std::uint32_t no_block = ~std::uint32_t{0};
/// The index of block p in its span when p lies on a block boundary of the span's class,
/// else no_block: the low half of offset × recip is below recip exactly on a block
/// boundary (S2), and a span that never served a class has recip 0. One multiply, one
/// compare. The one boundary in a span's tail has index capacity (its bit is set, S2);
/// in a clean span (capacity 0) every boundary of the class it served last has its bit
/// set.
STA_FORCE_INLINE std::uint32_t exact_block_index(const span* sp, const void* p) noexcept {
    const std::uint32_t recip = sp->recip;
    const std::uint64_t product =
        (reinterpret_cast<std::uintptr_t>(p) & (span_bytes - 1)) * std::uint64_t{recip};
    return static_cast<std::uint32_t>(product) < recip ? static_cast<std::uint32_t>(product >> 32)
                                                       : no_block;
}
/// The index of the lowest set bit of a non-zero word, as a 64-bit value: one tzcnt (bsf
/// on a processor without BMI1, the same for a non-zero word), without the sign
/// extension g++ adds to std::countr_zero's int.
STA_FORCE_INLINE std::uint64_t lowest_bit(std::uint64_t word) noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    std::uint64_t index;
    __asm__("tzcnt %1, %0" : "=r"(index) : "r"(word) : "cc");
    return index;
#else
    return static_cast<std::uint64_t>(std::countr_zero(word));
#endif
}

/// Block `index` of a window of blocks of `step` bytes (the fast path's address of a
/// block). A step known at compile time that is not a power of two goes through a
/// register: g++ would turn the multiply into two or three shifts and adds (224: lea, sub,
/// shl), where a move and one imul take two instructions at the same latency. A run-time
/// step stays imul's memory operand.
STA_FORCE_INLINE std::byte* block_at(std::byte* window, std::uint64_t index,
                                     std::size_t step) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    if (__builtin_constant_p(step) && (step & (step - 1)) != 0)
        __asm__("" : "+r"(step)); // hides the constant, not the multiply
#endif
    return window + index * step;
}

/// Sets bit i % 64 of `word` and answers whether it was set already: one load, one bts,
/// one store (the word is unchanged when the bit was set) and the flag for the caller's
/// branch — one instruction more than setting the bit alone (the release checks'
/// double-free test, layout/spans.hpp).
STA_FORCE_INLINE bool test_and_set_bit(std::uint64_t& word, std::uint64_t i) noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) &&                            \
    defined(__GCC_ASM_FLAG_OUTPUTS__)
    std::uint64_t value;
    bool was_set;
    // The word is a memory operand of its own, so its address stays one addressing mode.
    __asm__("movq %2, %0\n\tbtsq %3, %0\n\tmovq %0, %2"
            : "=&r"(value), "=@ccc"(was_set), "+m"(word)
            : "r"(i));
    return was_set;
#else
    const std::uint64_t bit = std::uint64_t{1} << (i % 64);
    const std::uint64_t value = word;
    word = value | bit;
    return (value & bit) != 0;
#endif
}

/// The set bits of a word, in a dozen ALU instructions: std::popcount without -mpopcnt is
/// a call into libgcc (__popcountdi2, a table walk), on the refill path.
STA_FORCE_INLINE std::uint32_t bits_set(std::uint64_t word) noexcept {
#if defined(__POPCNT__)
    return static_cast<std::uint32_t>(std::popcount(word));
#else
    word -= (word >> 1) & 0x5555555555555555ull;
    word = (word & 0x3333333333333333ull) + ((word >> 2) & 0x3333333333333333ull);
    word = (word + (word >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return static_cast<std::uint32_t>((word * 0x0101010101010101ull) >> 56);
#endif
}

/// ceil(2^32 / bytes): exact for every block offset within a span (S2).
constexpr std::uint32_t reciprocal_of(std::size_t bytes) noexcept {
    return static_cast<std::uint32_t>(((std::uint64_t{1} << 32) + bytes - 1) / bytes);
}
/// Block bytes of a span's class.
STA_FORCE_INLINE std::size_t span_class_bytes(const span* sp) noexcept {
    return sp->block_bytes;
}
/// Block bytes of a pooled block: its span's class, whatever size a caller names.
STA_FORCE_INLINE std::size_t pooled_block_bytes(const void* p) noexcept {
    return span_class_bytes(span_of(p));
}
inline std::byte* span_limit(const span* sp) noexcept {
    return span_begin(sp) + std::size_t{sp->capacity} * span_class_bytes(sp);
}
/// Free blocks a span needs before its class takes it again: an eighth, but at least 128
/// blocks and at most a quarter (at least one): an eighth for the classes up to 64 B, 128
/// blocks from 80 to 128 B, a quarter above. An eighth keeps spans of small classes
/// fuller (the tree's peak); a refill costs about as much whatever the class, so a span
/// of 16 or 682 blocks taken back for 2 or 85 of them would pay it too often (random
/// churn, instructions per op: 4 KiB 168 at an eighth, 116 at a quarter; 96 B 51.7 at
/// 85 blocks, 49.0 at 128).
constexpr std::uint32_t reuse_threshold(std::uint32_t capacity) noexcept {
    const std::uint32_t eighth = capacity / 8 > 128 ? capacity / 8 : 128;
    const std::uint32_t quarter = capacity / 4 != 0 ? capacity / 4 : 1;
    return eighth < quarter ? eighth : quarter;
}

/// Frees that go on the caches between two flushes (S5): the blocks a state may hold
/// outside its spans' bitmaps, over all its classes.
inline constexpr std::uint32_t cache_frees = 1024;
/// The same while the program frees more than it allocates (a scene torn down, a
/// document freed): a flush that found at least half of its interval's frees still on the
/// caches makes the next one come after this many, and one that found fewer after
/// cache_frees again (flush_caches). The flush then walks blocks freed a few hundred frees
/// ago, still in the L1 cache: the tree scene's teardown read-missed 435,000 times in 6
/// rounds at 1024 (cachegrind), 270,000 at 256, a bump allocator's whole round 270,000.
/// A program that allocates as much as it frees keeps 1024, whose caches seldom run dry:
/// a fixed 256 doubled churn mixed's mispredicts (docs/dispatch.md, "Class caches").
inline constexpr std::uint32_t cache_frees_freeing = 256;
static_assert(cache_frees_freeing <= cache_frees);

struct span_state : pool_state {
    // Indexed by slot, of the pool's class set (pool/size_class.hpp):
    free_block* heads[class_slots] = {};  // S5: the class's cache, LIFO
    std::uint64_t bits[class_slots] = {}; // S5: the window's blocks not handed out
    std::byte* window[class_slots] = {};  // S5: the window's first block
    /// S5: a bumping span's blocks never handed out since it started serving the class:
    /// cursor .. cursor_end - 1, none when cursor == cursor_end. Two arrays of pointers, so
    /// that a run-time slot indexes both with a scaled index.
    std::byte* cursor[class_slots] = {};
    std::byte* cursor_end[class_slots] = {};
    span* current[class_slots] = {};            // S3
    span* partial[class_slots] = {};            // S3: doubly linked through next / prev
    std::uint32_t frees_to_flush = cache_frees; // S5: frees until the caches are flushed
    std::uint32_t flush_every = cache_frees;    // S5: cache_frees, or cache_frees_freeing
    std::uint32_t refills = 0; // refills counted: when the next runs the checks (span_shape)
    /// S5: the last flush found at least half of its interval's frees still on the caches,
    /// and no class refilled since (the program frees more than it allocates): a sized
    /// free (span_core::release) and a marked free (pool/freed_mark.hpp) set the block's
    /// bit at once, while the block is warm.
    bool direct_frees = false;
    span* clean = nullptr;        // S3, S11: newest first, doubly linked
    span* clean_oldest = nullptr; // the last span of `clean`: the next one to purge
    span* purged = nullptr;       // S3: doubly linked
    segment* segments = nullptr;  // S1
    /// What was given back (layout/span_life.hpp).
    std::size_t bytes_purged = 0;      // pages of purged spans, now
    std::size_t bytes_given_back = 0;  // every purge and unmapped segment, ever
    std::size_t segments_unmapped = 0; // ever
    /// Segments mapped while the state holds at least this many get the advice of
    /// transparent huge pages (0: every one; huge_pages_never: none).
    std::uint32_t huge_pages_from = default_huge_pages_from;
    /// Also a segment mapped while the state holds huge_pages_dense_from or more and the
    /// blocks its classes hold fill at least half of them (a heap that grows dense: a start-up, a
    /// document loaded; layout/spans.hpp, dense_enough_for_huge_pages).
    bool huge_pages_dense = default_huge_pages_dense;
    bool prefault = STA_POOL_PREFAULT != 0;
    /// S14: held by whoever links a segment onto `segments` or unmaps one, and by a
    /// walk of another thread's state (process_stats), which no segment leaves meanwhile.
    spin_lock walk_lock;
};

} // namespace sta::detail
