// sta-pool: the C API (sta/pool.h) and the drop-in malloc's base (c_api/malloc_heap.hpp)
// over a pool of the span layout — malloc, free without a size, realloc and usable_size.
//
// c_span_heap (pools of the span layout): a pooled block needs no header. Its span,
// found by masking its address, names its class; the segment map tells a pooled
// block from one outside the spans, which carries a 16-byte header as below.
//
//   n <= 32 KiB, a fit:  Pool::alloc(class of n rounded up to 16)   16-aligned, like glibc
//   n <= 32 KiB, poor:   [ 0 | size_t n ][ n bytes ]                the pool's private heap,
//                                                                   n + 16 bytes
//   n >  32 KiB:         [ 0 | size_t n ][ n bytes ]                Pool::alloc(n + 16)
//
// The class of a multiple of 16 is a multiple of 16 (pool/size_class.hpp), and a span's
// blocks lie at multiples of their class from a 64 KiB-aligned start: every block is
// 16-aligned, what the x86-64 ABI promises for malloc and what clang assumes of operator
// new for 16 bytes or more. A poor fit is a request above 1 KiB that its class would
// round up by more than a quarter: with the seed's powers of two (STA_POOL_QUARTER_CLASSES=0;
// SQLite's 4.3 KB page-cache blocks would take 8 KiB) it goes to the pool's private heap
// (the tier above 32 KiB, detail/pool/next_tiers.hpp), which fits sizes within 1/8 or
// better. Quarter classes round up by less than a quarter: no request is a poor fit, and
// every request up to 32 KiB takes the fast path.
//
// Invariants of c_span_heap (for every live p handed out):
//  CS1 is_pool_segment(p) exactly when p is a pooled block; it was allocated with the
//      whole class bytes of its span, so the sized free of that many bytes is exact.
//  CS2 otherwise the size_t at p - 8 holds n, the one at p - 16 header_tag(p) (c_common.hpp:
//      the tag of lead 0), and p - 16 is
//      a live block of n + 16 bytes: of the pool's private heap when n <= 32 KiB (then
//      poor_fit(n)), of the pool's next tiers through Pool (last allocated or
//      reallocated so) when 32 KiB < n <= max_request.
//  CS3 p is 16-aligned.
//  CS4 an aligned block (aligned_os_block below, the drop-in malloc's memalign): the word
//      at p - 16 holds header_tag(p) xor its lead >= 16 (never 0, unlike CS2) and the one
//      at p - 8 n;
//      [p - lead, p - lead + os_round_up(lead + n)) is one OS mapping of its own.
//
// Release checks (c_release_checks, on by default): free and realloc refuse a pointer
// that is no block's start — a pooled one off its class's block boundary, one outside
// the spans whose header word decodes to no lead — and a block freed twice: its freed
// mark (a family with freed marks: the drop-in's, pool/freed_mark.hpp), or free in its
// span's bitmap, or a header marked freed (header_freed). Each refusal is one line on
// stderr naming the function, the address and what is wrong, then abort
// (report_bad_free, diag/misuse.hpp). Not seen: without the marks, a block freed twice
// whose bitmap word its class took into its window in between (layout/spans.hpp,
// release_checked); a block outside the spans whose memory went back to the OS (its
// header cannot be read). A family with freed marks takes its checks' way on the inline
// path whatever the switch (the switch off: the slow path sets the bit unchecked).
#pragma once

#include "sta/detail/block_move.hpp"
#include "sta/detail/c_api/c_common.hpp"
#include "sta/detail/diag/misuse.hpp"
#include "sta/detail/layout/spans.hpp"
#include "sta/detail/os/pages.hpp"
#include "sta/detail/pool/freed_mark.hpp"
#include "sta/detail/pool/next_tiers.hpp"
#include "sta/detail/pool/segment_map.hpp"
#include "sta/detail/pool/size_class.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sta::detail {

/// A block aligned beyond what the pool's classes give, in an OS mapping of its own
/// (CS4): made by the drop-in malloc's memalign (c_api/malloc_heap.hpp), freed by c_span_heap.
///
///   mapping (whole OS pages)
///   +----------- lead bytes -----------+-------------------------+
///   | unused ...    | lead   | size n  | n bytes of the caller   |
///   +---------------+--------+---------+-------------------------+
///   ^ p - lead                          ^ p, aligned to a; lead = max(a, 16)
struct aligned_os_block {
    static std::size_t lead_of(const void* p) noexcept {
        std::size_t word;
        std::memcpy(&word, static_cast<const std::byte*>(p) - 16, sizeof word);
        return word ^ header_tag(p);
    }
    /// The header word of a block freed (c_span_heap's release checks).
    static void mark_freed(void* p) noexcept {
        const std::size_t word = header_tag(p) ^ header_freed;
        std::memcpy(static_cast<std::byte*>(p) - 16, &word, sizeof word);
    }
    /// `bytes` aligned to `alignment` (a power of two above 16), or nullptr.
    static void* alloc(std::size_t alignment, std::size_t bytes) noexcept {
        const std::size_t lead = alignment;
        const std::size_t length = os_round_up(lead + bytes);
        auto* const start = static_cast<std::byte*>(
            alignment <= os_page_bytes ? os_map_pages(length)
                                       : map_aligned(&os_map_pages, length, alignment));
        if (start == nullptr)
            return nullptr;
        std::byte* const p = start + lead;
        const std::size_t word = header_tag(p) ^ lead;
        std::memcpy(p - 16, &word, sizeof word);
        std::memcpy(p - 8, &bytes, sizeof bytes);
        os_memory.big_taken(length); // a big block in process_stats
        return p;
    }
    static void free(void* p, std::size_t bytes) noexcept {
        const std::size_t lead = lead_of(p);
        os_memory.big_freed(os_round_up(lead + bytes));
        os_unmap_pages(static_cast<std::byte*>(p) - lead, os_round_up(lead + bytes));
    }
};

/// The header of c_span_heap's blocks outside the spans (CS2).
inline constexpr std::size_t c_span_header_bytes = 16;

/// A family with freed marks (the drop-in malloc's; pool/freed_mark.hpp): free, with the
/// release checks on, puts a pooled block on its class's cache with the freed mark, and
/// malloc clears the mark of every block it hands out. Any other (the C API of sta/pool.h,
/// whose family the sized API shares): free sets the block's bit in its span's bitmap.
template <class Pool, class Names = c_api_names>
struct c_span_heap : private size_header<c_span_header_bytes> {
    static constexpr bool marked_frees = Pool::engine::freed_marks;
    static constexpr std::size_t header_bytes = c_span_header_bytes;
    using classes = typename Pool::classes;
    static constexpr std::size_t min_bytes = 16; // CS3: requests are rounded up to 16
    static constexpr std::size_t max_request = max_c_request(c_span_header_bytes);
    /// Requests up to this size always take their class, whatever it rounds them up by.
    static constexpr std::size_t poor_fit_floor = 1024;

    /// Would the class of `bytes` waste more than a quarter of it, above 1 KiB?
    static constexpr bool poor_fit(std::size_t bytes) noexcept {
        return bytes > poor_fit_floor && bytes <= max_class_bytes &&
               pooled_bytes(bytes) - bytes > bytes / 4;
    }
    /// Does any request fit its class poorly? Not with quarter classes. The worst fit of
    /// a class is the size one above the class below it: only those are asked.
    static constexpr bool has_poor_fits = [] {
        for (std::uint32_t n = 0; n + 1 < classes::count; ++n)
            if (poor_fit(classes::bytes_of_slot(classes::slot_of_ordinal(n)) + 1))
                return true;
        return false;
    }();
    /// Requests up to this size take their class on the fast path.
    static constexpr std::size_t fast_limit = has_poor_fits ? poor_fit_floor : max_class_bytes;

    // The fast paths: a request up to fast_limit takes its class (never a poor fit);
    // a pooled block is freed, and resized within its class, by its span's slot. The
    // rest is out of line (STA_NOINLINE), so the fast paths stay a few instructions with
    // no registers of their own to save: 20 to 25 for malloc and free in
    // libsta_malloc.so (objdump -d). Both are forced inline: g++ left malloc out of line
    // once the drop-in's file grew, a jump and a second test of the size (callgrind, 32 B
    // in random order: 78.3 instructions a malloc + free pair against 76.3).

    STA_FORCE_INLINE static void* malloc(std::size_t bytes) noexcept {
        const std::size_t key = bytes - 1; // 0 wraps: the slow path
        if (key < fast_limit) [[likely]] {
            if constexpr (marked_frees) // its refill sets errno (layout/spans.hpp)
                return Pool::alloc_class(pooled_slot(bytes));
            void* const p = Pool::alloc_class(pooled_slot(bytes));
            return p != nullptr ? p : out_of_memory();
        }
        return malloc_slow(bytes);
    }

    STA_FORCE_INLINE static void free(void* p) noexcept {
        if (p == nullptr) // two instructions: C programs free NULL often (lua: a quarter)
            return;
        if (is_pool_segment(p)) [[likely]] { // CS1
            if constexpr (marked_frees) {    // its checks decide the way: no test of the switch
                if (Pool::try_free_in_span_marked(p)) [[likely]]
                    return;
                return free_marked(p);
            }
            if (c_release_checks) [[likely]] {
                const free_verdict verdict = Pool::free_in_span_checked(p);
                if (verdict != free_verdict::freed) [[unlikely]]
                    refuse(Names::free, p, verdict);
                return;
            }
            return Pool::free_in_span(p);
        }
        free_outside(p);
    }

    static void* realloc(void* p, std::size_t bytes) noexcept {
        if (p == nullptr)
            return malloc(bytes);
        const std::size_t key = bytes - 1;
        if (key < fast_limit && is_pool_segment(p) && pooled_slot(bytes) == span_of(p)->slot)
            [[likely]] {
            if (c_release_checks) [[likely]]
                if (const free_verdict verdict = Pool::engine::core::block_state(p);
                    verdict != free_verdict::freed) [[unlikely]]
                    refuse(Names::realloc, p, verdict);
            return p; // the same class
        }
        return realloc_slow(p, bytes);
    }

    /// C23's free_sized and free_aligned_sized (the drop-in's; `function` names which):
    /// `bytes` and `alignment` are what the block was asked with. With the release checks
    /// on, a live block they cannot describe is refused (report_bad_size): a pooled block
    /// of fewer than `bytes` (a shrink kept in place leaves a block in a larger class, so
    /// only a larger size is wrong), a block with a header (CS2, CS4) whose size is not
    /// `bytes`, a block not aligned to `alignment` (a power of two). What free refuses
    /// is refused under `function`'s name. Then the block is freed as free(p) frees it:
    /// the size never chooses the class (a class taken from it would file a block a
    /// shrink kept in place under the wrong class).
    static void free_described(void* p, std::size_t bytes, std::size_t alignment,
                               const char* function) noexcept {
        if (p == nullptr)
            return;
        if (c_release_checks)
            check_description(p, bytes, alignment, function);
        free(p);
    }

    /// What the block holds: its class bytes for a pooled block, the size asked for
    /// otherwise. With the release checks, p must be a live block's start (an address
    /// inside a block, or a freed one, would be answered with bytes a program may then
    /// write past its block): anything else is refused, one line, abort.
    static std::size_t usable_size(const void* p) noexcept {
        if (p == nullptr)
            return 0;
        if (c_release_checks)
            check_live(p, Names::usable_size);
        return is_pool_segment(p) ? pooled_block_bytes(p) : size_of(p);
    }

    /// The release checks' view of p: a live block's start, else one line naming
    /// `function`, abort (the hardened heap's, c_api/hardened_heap.hpp).
    static void require_live(const void* p, const char* function) noexcept {
        check_live(p, function);
    }
    /// The class bytes of p when it is a pooled block's start (its span's boundary, CS1),
    /// live or not; 0 otherwise. One look at its span.
    STA_FORCE_INLINE static std::size_t pooled_block_held(const void* p) noexcept {
        if (!is_pool_segment(p))
            return 0;
        const span* const sp = span_of(p);
        return exact_block_index(sp, p) != no_block ? span_class_bytes(sp) : 0;
    }
    /// usable_size without the checks, for a block the caller knows is live.
    static std::size_t held_bytes(const void* p) noexcept {
        return is_pool_segment(p) ? pooled_block_bytes(p) : size_of(p);
    }

    static constexpr std::size_t good_size(std::size_t bytes) noexcept {
        if (bytes == 0 || bytes > max_class_bytes || poor_fit(bytes))
            return bytes;
        return pooled_bytes(bytes);
    }

    /// The class a pooled request takes (1 <= bytes <= 32 KiB): the class of bytes
    /// rounded up to a multiple of 16 (CS3), its slot from one count of leading zeros.
    static constexpr std::uint32_t pooled_slot(std::size_t bytes) noexcept {
        return classes::slot_of_key((bytes - 1) | (min_bytes - 1));
    }
    static constexpr std::size_t pooled_bytes(std::size_t bytes) noexcept {
        return classes::bytes_of_slot(pooled_slot(bytes));
    }
    static_assert(min_bytes >= marked_min_bytes, "every block has a second word for its mark");
    static_assert(pooled_bytes(1) == 16 && pooled_bytes(16) == 16 && pooled_bytes(17) == 32 &&
                  pooled_bytes(1024) == 1024 && pooled_bytes(max_class_bytes) == max_class_bytes);
    static_assert([] { // CS3: every class a request takes is a multiple of 16 (a request
                       // takes the class of its size rounded up to 16: those are asked)
        for (std::size_t n = min_bytes; n <= max_class_bytes; n += min_bytes)
            if (pooled_bytes(n) % min_bytes != 0 || pooled_bytes(n) < n ||
                pooled_slot(n - 15) != pooled_slot(n))
                return false;
        return true;
    }());

  private:
    using tiers = next_tiers<typename Pool::engine>;

    /// Where a block lies (CS1, CS2, CS4): a span, the private heap, above 32 KiB, or an
    /// aligned block of its own.
    enum class tier { pooled, heap, big, aligned };
    static tier tier_of_request(std::size_t bytes) noexcept {
        return bytes > max_class_bytes ? tier::big : poor_fit(bytes) ? tier::heap : tier::pooled;
    }
    static tier tier_of_block(const void* p) noexcept {
        return is_pool_segment(p)                  ? tier::pooled
               : aligned_os_block::lead_of(p) != 0 ? tier::aligned
               : size_of(p) <= max_class_bytes     ? tier::heap
                                                   : tier::big;
    }

    /// One line naming the function, the address and what is wrong; then abort.
    [[noreturn]] STA_NOINLINE static void refuse(const char* function, const void* p,
                                                 free_verdict verdict) noexcept {
        std::size_t block_bytes = 0;
        if (is_pool_segment(p)) {
            if (span_of(p)->recip != 0)
                block_bytes = span_class_bytes(span_of(p));
        } else if (verdict == free_verdict::double_free) {
            block_bytes = size_of(p); // the header marked freed keeps the size
        }
        report_bad_free(Names::library, function, p, verdict, block_bytes);
    }

    /// The release checks of a block outside the spans (CS2, CS4): its header word
    /// decodes to lead 0 with a size of its tier, or to the lead of an aligned block.
    static free_verdict check_outside(const void* p) noexcept {
        const std::size_t lead = aligned_os_block::lead_of(p);
        if (lead == header_freed)
            return free_verdict::double_free;
        const std::size_t n = size_of(p);
        if (lead == 0)
            return (n > max_class_bytes ? n <= max_request : poor_fit(n))
                       ? free_verdict::freed
                       : free_verdict::bad_header;
        const bool aligned_lead = lead >= 16 && (lead & (lead - 1)) == 0 &&
                                  (reinterpret_cast<std::uintptr_t>(p) & (lead - 1)) == 0;
        return aligned_lead && n <= max_request ? free_verdict::freed : free_verdict::bad_header;
    }

    /// free_described's checks: p is a live block's start, of `bytes` and `alignment`.
    STA_NOINLINE static void check_description(const void* p, std::size_t bytes,
                                               std::size_t alignment,
                                               const char* function) noexcept {
        const bool pooled = is_pool_segment(p);
        const free_verdict verdict = pooled ? Pool::engine::core::block_state(p) : check_outside(p);
        if (verdict != free_verdict::freed)
            refuse(function, p, verdict);
        const std::size_t held = pooled ? pooled_block_bytes(p) : size_of(p);
        if (pooled ? bytes > held : bytes != held)
            report_bad_size(Names::library, function, p, "size", bytes, held);
        if ((reinterpret_cast<std::uintptr_t>(p) & (alignment - 1)) != 0)
            report_bad_size(Names::library, function, p, "alignment", alignment, held);
    }

    /// The release checks of realloc and usable_size (`function`): p is a live block's
    /// start.
    static void check_live(const void* p, const char* function) noexcept {
        free_verdict verdict = free_verdict::freed;
        if (is_pool_segment(p))
            verdict = Pool::engine::core::block_state(p);
        else
            verdict = check_outside(p);
        if (verdict != free_verdict::freed) [[unlikely]]
            refuse(function, p, verdict);
    }

    STA_NOINLINE static void* malloc_slow(std::size_t bytes) noexcept {
        if (bytes == 0)
            return nullptr;
        void* p = bytes <= max_request ? try_alloc(bytes) : nullptr;
        return p != nullptr ? p : out_of_memory();
    }

    /// A pooled block the inline path left (layout/spans.hpp, release_marked).
    /// Without the release checks it is left to the bitmap, unchecked.
    STA_NOINLINE static void free_marked(void* p) noexcept {
        if (!c_release_checks) [[unlikely]]
            return Pool::free_in_span(p);
        const free_verdict verdict = Pool::free_in_span_marked(p);
        if (verdict != free_verdict::freed) [[unlikely]]
            refuse(Names::free, p, verdict);
    }

    /// A block outside the spans (CS2, CS4).
    STA_NOINLINE static void free_outside(void* p) noexcept {
        if (c_release_checks)
            if (const free_verdict verdict = check_outside(p); verdict != free_verdict::freed)
                refuse(Names::free, p, verdict);
        const tier from = tier_of_block(p);
        const std::size_t bytes = size_of(p);
        if (c_release_checks && (from == tier::heap || from == tier::big))
            aligned_os_block::mark_freed(p); // a second free finds it (an aligned block's
                                             // mapping is gone)
        switch (from) {
        case tier::pooled: // not reached: free() took it
            return Pool::free_in_span(p);
        case tier::heap:
            return heap_free(block_of(p), bytes + header_bytes);
        case tier::big:
            return Pool::free(block_of(p), bytes + header_bytes);
        case tier::aligned:
            return aligned_os_block::free(p, bytes);
        }
    }

    STA_NOINLINE static void* realloc_slow(void* p, std::size_t bytes) noexcept {
        if (c_release_checks)
            check_live(p, Names::realloc);
        if (bytes - 1 < fast_limit && is_pool_segment(p)) { // from class to class
            const std::size_t old_usable = pooled_block_bytes(p);
            void* const q = move_or_keep_shrunk(
                p, old_usable, old_usable, bytes,
                [bytes] { return Pool::alloc_class(pooled_slot(bytes)); },
                [p] { Pool::free_in_span(p); }); // its bit (and mark): a later free is refused
            return q != nullptr ? q : out_of_memory();
        }
        if (bytes == 0) {
            free(p);
            return nullptr;
        }
        if (bytes > max_request)
            return out_of_memory();
        const tier from = tier_of_block(p);
        const tier to = tier_of_request(bytes);
        const std::size_t old_usable = from == tier::pooled ? pooled_block_bytes(p) : size_of(p);
        if (from == tier::pooled && to == tier::pooled && pooled_bytes(bytes) == old_usable)
            return p;                             // the same class, above fast_limit
        if (from == to && from != tier::pooled) { // the tier resizes its own block
            auto* const block = static_cast<std::byte*>(
                from == tier::heap
                    ? heap_realloc(block_of(p), old_usable + header_bytes, bytes + header_bytes)
                    : Pool::realloc(block_of(p), old_usable + header_bytes, bytes + header_bytes));
            if (block == nullptr)
                return out_of_memory();
            return with_header(block, bytes);
        }
        const auto alloc = [bytes] { return try_alloc(bytes); };
        void* const q = from == tier::pooled
                            ? move_or_keep_shrunk(p, old_usable, old_usable, bytes, alloc,
                                                  [p] { Pool::free_in_span(p); })
                            : move_block(p, old_usable, bytes, alloc, [p] { free_outside(p); });
        return q != nullptr ? q : out_of_memory();
    }

    /// A block for 1 <= bytes <= max_request, laid out as CS1 / CS2; nullptr when the
    /// memory is not there (errno is the caller's to set).
    static void* try_alloc(std::size_t bytes) noexcept {
        const tier to = tier_of_request(bytes);
        if (to == tier::pooled)
            return Pool::alloc_class(pooled_slot(bytes));
        auto* const block =
            static_cast<std::byte*>(to == tier::heap ? heap_alloc(bytes + header_bytes)
                                                     : Pool::alloc(bytes + header_bytes));
        return block != nullptr ? with_header(block, bytes) : nullptr;
    }
    // The pool's private heap, reached directly for the poor fits: the pool's sized
    // API would take a size of 32 KiB or less for a pooled block. The thread rule is
    // the pool's (pool/next_tiers.hpp sends another thread's block home).
    static void* heap_alloc(std::size_t bytes) noexcept {
        Pool::engine::home::check_thread();
        return tiers::heap_alloc(bytes);
    }
    static void* heap_realloc(void* block, std::size_t old_bytes, std::size_t bytes) noexcept {
        Pool::engine::home::check_thread();
        return tiers::heap_realloc(block, old_bytes, bytes);
    }
    static void heap_free(void* block, std::size_t bytes) noexcept {
        Pool::engine::home::check_thread();
        tiers::heap_free(block, bytes);
    }
};

} // namespace sta::detail
