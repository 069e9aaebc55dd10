// sta-pool: the TLSF heap behind sta::thread_heap (sta/thread_heap.hpp) — an
// unsynchronized heap for mid-size blocks (32 KiB to a few MiB), the tier between the
// pool's size classes and std::malloc.
//
// TLSF (two-level segregated fit, Masmano et al.) over chunks of pages from the OS page
// source: a free block is found with two bit scans and freed in constant time, free
// neighbours are merged at once through boundary tags, and the good fit (a request is
// rounded up to the next second-level class before the search) bounds fragmentation.
//
//   alloc(bytes)            a block of at least `bytes`, 16-aligned, or nullptr when the
//                           page source refuses or bytes > max_request_bytes. alloc(0)
//                           returns a unique pointer.
//   free(p) / free(p, n)    give a block back (nullptr is ignored). The sized form is
//                           checked against the size the block was asked for in checked
//                           builds (STA_POOL_CHECKS): a mismatch aborts with a message.
//   realloc(p, n)           in place when the block shrinks (the tail goes back to the
//                           heap) or when its right neighbour is free and large enough;
//                           otherwise alloc + copy + free. nullptr on failure, and p is
//                           then untouched. realloc(nullptr, n) is alloc(n); realloc(p, 0)
//                           shrinks p to an empty block (it does not free).
//   usable_size(p)          the bytes the caller may use (>= what it asked for).
//   stats()                 derived by walking the chunks: for tests and reports.
//   trim()                  unmap the one wholly free chunk kept as a cache.
//
// Chunks: a standard chunk has chunk_bytes (4 MiB by default). A request whose block
// would take more than a quarter of a standard chunk gets a chunk of its own, sized to
// it, when no free block fits. A chunk that becomes wholly free goes back to the OS at
// once, except one standard chunk, kept (still in the free lists, still usable) so that
// a program that frees its last block and allocates again does not map and unmap a
// chunk each time; trim() gives that one back too.
//
// The thread rule: a heap is used by one thread at a time, no atomics, no locks. Checked
// builds remember the first calling thread and abort, naming both threads, when another
// one calls (detail/diag/owner_mark.hpp).
//
// Lifetime: the constructor is constexpr and the destructor trivial, so a heap can be
// `constinit` and used from any global constructor or destructor (the pool owns one
// that way). A heap therefore never unmaps by itself: chunks go back when their blocks
// are freed (and trim()).
//
// Sanitizers (detail/diag/tool_hooks.hpp): the payload of a free block is poisoned, a live block
// has exactly its requested bytes unpoisoned; block and chunk headers stay accessible
// (the heap reads them). An overrun of a request is caught even inside the block.
#pragma once

#include "sta/detail/block_move.hpp"
#include "sta/detail/config.hpp"
#include "sta/detail/diag/owner_mark.hpp"
#include "sta/detail/diag/tool_hooks.hpp"
#include "sta/detail/os/pages.hpp"
#include "sta/detail/os/process_secret.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sta {

class thread_heap;
namespace detail {
struct thread_heap_checker; // the tests' white-box checker (tests/support)
} // namespace detail

/// Where a heap gets its chunks. Tests inject sources that fail or count.
struct thread_heap_source {
    detail::map_pages_fn map = detail::os_map_pages;
    detail::unmap_pages_fn unmap = detail::os_unmap_pages;
};

/// What a heap holds now; derived by walking every chunk (O(blocks)).
struct thread_heap_stats {
    std::size_t chunks = 0;             ///< mappings held (the cached spare included)
    std::size_t bytes_mapped = 0;       ///< sum of the mappings' sizes
    std::size_t live_blocks = 0;        ///< blocks handed out and not freed
    std::size_t bytes_in_use = 0;       ///< the bytes callers asked for, summed
    std::size_t free_blocks = 0;        ///< blocks on the free lists
    std::size_t free_bytes = 0;         ///< payload bytes of the free blocks
    std::size_t largest_free_block = 0; ///< the largest payload one free block offers
};

/*  sta::thread_heap — chunks of blocks that tile them, and TLSF free lists.

    A chunk (chunk_bytes, or larger for a big request; page-aligned from the source):

      +--------------+--------------+--------------+-- ... --+--------------+----------+
      | chunk_header | block        | block        |         | block        | sentinel |
      | next, prev,  | hdr |payload | hdr |payload |         | hdr |payload | size 0   |
      | bytes        |              |              |         |              | "live"   |
      +--------------+--------------+--------------+-- ... --+--------------+----------+
      32 B            <- size ----->                                          32 B

    A block header (32 B, so the payload after it is 16-aligned):
      prev_phys   the block physically before it in its chunk (nullptr: the first)
      size_flags  the block's bytes, header included (a multiple of 16); bit 0 = free
      word2       free: next on its free list      live: the bytes the caller asked for
      word3       free: previous on its free list  live: 0
                  (a free block's links encoded: TL8)

    Free lists: a free block of `size` bytes lives on list [fl][sl]:
      size <  512:  fl = 0, sl = size / 16
      size >= 512:  fl = log2(size) - 8, sl = the 5 bits after the leading one
    fl_bitmap_ bit fl is set iff sl_bitmap_[fl] != 0; sl_bitmap_[fl] bit sl is set iff
    heads_[fl][sl] != nullptr. alloc rounds the request up to the next list boundary
    and takes the head of the first non-empty list at or above it (two bit scans).

    Invariants (detail::check_thread_heap enforces them in tests):
     TL1  chunks_ is a doubly linked list of chunk_count_ chunks; their bytes sum to
          bytes_mapped_.
     TL2  in every chunk the blocks tile [first block, sentinel) exactly: sizes are
          multiples of 16 and at least min_block_bytes, each prev_phys is the block
          before (the sentinel's is the last block).
     TL3  no two physically adjacent blocks are both free (neighbours merge on free).
     TL4  every free block is on exactly the list its size maps to, and nothing else is
          on any list; the bitmaps say exactly which lists are non-empty.
     TL5  a chunk whose blocks are all free consists of one free block and is spare_;
          spare_ is null or a chunk of chunk_bytes_.
     TL6  a live block's word2 is the size last asked for it (<= its payload).
     TL7  the heap follows a link or a size only where it is checked against its other
          end, and refuses (one line, abort) a header an overflow or a write after free
          changed: a block on a list is free, its list's neighbours (or its list's head)
          point back at it, the block after a freed or grown one names it as prev_phys,
          and the block before it ends at it.
     TL8  a free block's list links are stored as link ^ link_key_ ^ the block's address
          (link_key_: the process's secret, os/process_secret.hpp, taken at the first
          chunk), so a write after free cannot aim one at an address of its choosing
          without the secret: a forged link decodes to an address at random, which is
          refused where it is not 16-aligned (TL7's report) before it is followed.       */
class thread_heap {
  public:
    static constexpr std::size_t alignment = 16;
    static constexpr std::size_t default_chunk_bytes = std::size_t{4} << 20;
    static constexpr std::size_t min_chunk_bytes = std::size_t{64} << 10;
    /// Larger requests fail cleanly (nullptr); the limit keeps every size computation
    /// far from overflow and every block within the free-list index (2^46 bytes).
    static constexpr std::size_t max_request_bytes = std::size_t{1} << 45;

    /// A heap over `source` with standard chunks of `chunk_bytes` (a multiple of 4 KiB,
    /// at least 64 KiB; other values are rounded). Maps nothing until the first alloc.
    constexpr explicit thread_heap(thread_heap_source source = {},
                                   std::size_t chunk_bytes = default_chunk_bytes) noexcept
        : source_(source), chunk_bytes_(round_chunk(chunk_bytes)) {}

    thread_heap(const thread_heap&) = delete;
    thread_heap& operator=(const thread_heap&) = delete;

    [[nodiscard]] void* alloc(std::size_t bytes) noexcept {
        owner_.check("sta::thread_heap");
        if (bytes > max_request_bytes) [[unlikely]]
            return nullptr;
        const std::size_t need = block_bytes_for(bytes);
        block* b = take_free(need);
        if (b == nullptr) [[unlikely]] {
            b = map_chunk(need);
            if (b == nullptr)
                return nullptr;
        }
        split(b, need);
        b->word2 = bytes;
        b->word3 = 0;
        bytes_in_use_ += bytes;
        detail::hooks::region_handed_out(b->payload(), bytes);
        return b->payload();
    }

    void free(void* p) noexcept {
        owner_.check("sta::thread_heap");
        if (p == nullptr)
            return;
        block* b = block_of(p);
        check_live(b, p, "free");
        release(b);
    }

    /// Sized free: `bytes` must be the size p was allocated (or last reallocated) with.
    void free(void* p, [[maybe_unused]] std::size_t bytes) noexcept {
        owner_.check("sta::thread_heap");
        if (p == nullptr)
            return;
        block* b = block_of(p);
        check_live(b, p, "free");
#if STA_POOL_CHECKS
        if (b->word2 != bytes) {
            char text[96];
            std::snprintf(text, sizeof text, "freed with %llu bytes, allocated with %llu",
                          static_cast<unsigned long long>(bytes),
                          static_cast<unsigned long long>(b->word2));
            die("size mismatch", p, text);
        }
#endif
        release(b);
    }

    [[nodiscard]] void* realloc(void* p, std::size_t bytes) noexcept {
        if (p == nullptr)
            return alloc(bytes);
        owner_.check("sta::thread_heap");
        if (bytes > max_request_bytes) [[unlikely]]
            return nullptr;
        block* b = block_of(p);
        check_live(b, p, "realloc");
        const std::size_t old_bytes = b->word2;
        const std::size_t need = block_bytes_for(bytes);
        if (need > b->size()) {
            block* next = b->next_phys();
            if (next->prev_phys != b) [[unlikely]]
                overwritten(b); // TL7
            if (!next->is_free() || b->size() + next->size() < need)
                return move_to_new(b, bytes);
            unlink(next); // grow into the free right neighbour
            const std::size_t merged = b->size() + next->size();
            detail::hooks::region_released(next, header_bytes); // now inside b's payload
            b->set_size(merged, false);
            b->next_phys()->prev_phys = b;
        }
        // The live bytes first (before split writes a header in the old payload).
        if (bytes > old_bytes)
            detail::hooks::region_handed_out(b->payload() + old_bytes, bytes - old_bytes);
        else
            detail::hooks::region_released(b->payload() + bytes, old_bytes - bytes);
        b->word2 = bytes;
        bytes_in_use_ += bytes - old_bytes; // modulo 2^64: a shrink subtracts
        split(b, need);
        return p;
    }

    /// The bytes the caller may use at p (its block's payload).
    [[nodiscard]] std::size_t usable_size(const void* p) const noexcept {
        return block_of(const_cast<void*>(p))->size() - header_bytes;
    }

    /// The bytes of the chunks mapped now, and the bytes callers asked for of the live
    /// blocks: one integer each, which another thread may read as a snapshot while the
    /// owner works (stats() walks the chunks: the owner's only).
    [[nodiscard]] STA_RACY_READER std::size_t bytes_mapped() const noexcept {
        return bytes_mapped_;
    }
    [[nodiscard]] STA_RACY_READER std::size_t bytes_in_use() const noexcept {
        return bytes_in_use_;
    }

    [[nodiscard]] thread_heap_stats stats() const noexcept {
        thread_heap_stats s;
        s.chunks = chunk_count_;
        s.bytes_mapped = bytes_mapped_;
        for (const chunk_header* c = chunks_; c != nullptr; c = c->next) {
            for (const block* b = c->first(); b->size() != 0; b = b->next_phys()) {
                if (b->is_free()) {
                    ++s.free_blocks;
                    s.free_bytes += b->size() - header_bytes;
                    if (b->size() - header_bytes > s.largest_free_block)
                        s.largest_free_block = b->size() - header_bytes;
                } else {
                    ++s.live_blocks;
                    s.bytes_in_use += b->word2;
                }
            }
        }
        return s;
    }

    /// The heap belongs to the next thread that calls it (checked builds forget the
    /// owner; see detail/diag/owner_mark.hpp). The caller makes sure the old owner is done.
    void hand_over() noexcept {
        owner_.hand_over();
    }

    /// Give the cached wholly free chunk (if any) back to the OS.
    void trim() noexcept {
        owner_.check("sta::thread_heap");
        if (spare_ == nullptr)
            return;
        chunk_header* c = spare_;
        spare_ = nullptr;
        unlink(c->first());
        unmap_chunk(c);
    }

    [[nodiscard]] std::size_t chunk_bytes() const noexcept {
        return chunk_bytes_;
    }

  private:
    friend struct detail::thread_heap_checker;

    struct block {
        block* prev_phys;
        std::size_t size_flags;
        std::size_t word2; // free: next_free (as an address); live: requested bytes
        std::size_t word3; // free: prev_free (as an address); live: 0

        std::size_t size() const noexcept { return size_flags & ~std::size_t{15}; }
        bool is_free() const noexcept { return (size_flags & 1) != 0; }
        void set_size(std::size_t bytes, bool free) noexcept { size_flags = bytes | free; }
        std::byte* payload() noexcept { return reinterpret_cast<std::byte*>(this) + 32; }
        block* next_phys() const noexcept {
            return reinterpret_cast<block*>(reinterpret_cast<std::uintptr_t>(this) + size());
        }
        // TL8: a link as it is stored, and back (the same xor both ways)
        std::uintptr_t coded(std::uintptr_t word, std::uint64_t key) const noexcept {
            return word ^ key ^ reinterpret_cast<std::uintptr_t>(this);
        }
        block* next_free(std::uint64_t key) const noexcept {
            return reinterpret_cast<block*>(coded(word2, key));
        }
        block* prev_free(std::uint64_t key) const noexcept {
            return reinterpret_cast<block*>(coded(word3, key));
        }
        void set_next_free(block* b, std::uint64_t key) noexcept {
            word2 = coded(reinterpret_cast<std::uintptr_t>(b), key);
        }
        void set_prev_free(block* b, std::uint64_t key) noexcept {
            word3 = coded(reinterpret_cast<std::uintptr_t>(b), key);
        }
    };

    struct chunk_header {
        chunk_header* next;
        chunk_header* prev;
        std::size_t bytes;
        std::size_t unused;

        block* first() const noexcept {
            return reinterpret_cast<block*>(reinterpret_cast<std::uintptr_t>(this) + 32);
        }
        block* sentinel() const noexcept {
            return reinterpret_cast<block*>(reinterpret_cast<std::uintptr_t>(this) + bytes - 32);
        }
    };

    static constexpr std::size_t header_bytes = sizeof(block);
    static_assert(header_bytes == 32 && sizeof(chunk_header) == 32);
    static constexpr std::size_t min_block_bytes = header_bytes + alignment;
    static constexpr std::size_t chunk_overhead = sizeof(chunk_header) + header_bytes;
    static constexpr unsigned sl_log2 = 5;
    static constexpr unsigned sl_count = 1u << sl_log2;
    static constexpr unsigned fl_shift = sl_log2 + 4; // 4 = log2(alignment)
    static constexpr std::size_t small_block_bytes = std::size_t{1} << fl_shift;
    static constexpr unsigned fl_count = 46 - fl_shift + 1; // sizes < 2^46

    static constexpr std::size_t round_chunk(std::size_t bytes) noexcept {
        if (bytes < min_chunk_bytes)
            return min_chunk_bytes;
        if (bytes > (std::size_t{1} << 40))
            return std::size_t{1} << 40;
        return detail::os_round_up(bytes);
    }

    static constexpr std::size_t block_bytes_for(std::size_t bytes) noexcept {
        const std::size_t b = (bytes + header_bytes + alignment - 1) & ~(alignment - 1);
        return b < min_block_bytes ? min_block_bytes : b;
    }

    static block* block_of(void* p) noexcept {
        return reinterpret_cast<block*>(static_cast<std::byte*>(p) - header_bytes);
    }

    struct list_index {
        unsigned fl, sl;
    };
    static list_index index_of(std::size_t size) noexcept {
        if (size < small_block_bytes)
            return {0, static_cast<unsigned>(size / alignment)};
        const unsigned log2 = static_cast<unsigned>(std::bit_width(size)) - 1;
        return {log2 - fl_shift + 1, static_cast<unsigned>(size >> (log2 - sl_log2)) ^ sl_count};
    }

    void insert(block* b) noexcept {
        const list_index i = index_of(b->size());
        block* head = heads_[i.fl][i.sl];
        b->set_next_free(head, link_key_);
        b->set_prev_free(nullptr, link_key_);
        if (head != nullptr)
            head->set_prev_free(b, link_key_);
        heads_[i.fl][i.sl] = b;
        fl_bitmap_ |= std::uint64_t{1} << i.fl;
        sl_bitmap_[i.fl] |= 1u << i.sl;
    }

    void unlink(block* b) noexcept {
        block* next = b->next_free(link_key_);
        block* prev = b->prev_free(link_key_);
        const list_index i = index_of(b->size());
        if (((reinterpret_cast<std::uintptr_t>(next) | reinterpret_cast<std::uintptr_t>(prev)) &
             (alignment - 1)) != 0) [[unlikely]]
            overwritten(b); // TL8: a link written without the key
        if ((next != nullptr && next->prev_free(link_key_) != b) ||
            (prev != nullptr ? prev->next_free(link_key_) != b : heads_[i.fl][i.sl] != b))
            [[unlikely]]
            overwritten(b); // TL7
        if (next != nullptr)
            next->set_prev_free(prev, link_key_);
        if (prev != nullptr) {
            prev->set_next_free(next, link_key_);
            return;
        }
        heads_[i.fl][i.sl] = next;
        if (next == nullptr) {
            sl_bitmap_[i.fl] &= ~(1u << i.sl);
            if (sl_bitmap_[i.fl] == 0)
                fl_bitmap_ &= ~(std::uint64_t{1} << i.fl);
        }
    }

    /// A free block of at least `need` bytes, off its list and marked live; or nullptr.
    block* take_free(std::size_t need) noexcept {
        std::size_t rounded = need;
        if (need >= small_block_bytes) // good fit: any block on the list found is enough
            rounded += (std::size_t{1} << (std::bit_width(need) - 1 - sl_log2)) - 1;
        const list_index i = index_of(rounded);
        if (i.fl >= fl_count)
            return take_exact_head(need);
        unsigned fl = i.fl;
        std::uint32_t sl_map = sl_bitmap_[fl] & (~0u << i.sl);
        if (sl_map == 0) {
            const std::uint64_t fl_map = fl_bitmap_ & (~std::uint64_t{0} << (fl + 1));
            if (fl_map == 0)
                return take_exact_head(need);
            fl = static_cast<unsigned>(std::countr_zero(fl_map));
            sl_map = sl_bitmap_[fl];
        }
        return take(heads_[fl][static_cast<unsigned>(std::countr_zero(sl_map))]);
    }

    /// Before mapping a chunk: the head of the list `need` itself maps to may still be
    /// large enough (the rounded search skips that list). One look, still O(1).
    block* take_exact_head(std::size_t need) noexcept {
        const list_index i = index_of(need);
        block* b = heads_[i.fl][i.sl];
        return b != nullptr && b->size() >= need ? take(b) : nullptr;
    }

    block* take(block* b) noexcept {
        if (!b->is_free()) [[unlikely]]
            overwritten(b); // TL7: a block on a list is free
        unlink(b);
        b->set_size(b->size(), false);
        if (spare_ != nullptr && b == spare_->first()) // the cached chunk is in use again
            spare_ = nullptr;
        return b;
    }

    /// Cut a live block down to `need` bytes when the tail can be a block of its own;
    /// the tail is freed (merging with a free right neighbour).
    void split(block* b, std::size_t need) noexcept {
        const std::size_t size = b->size();
        if (size - need < min_block_bytes)
            return;
        auto* tail = reinterpret_cast<block*>(reinterpret_cast<std::uintptr_t>(b) + need);
        detail::hooks::region_handed_out(tail, header_bytes);
        tail->prev_phys = b;
        tail->set_size(size - need, true);
        b->set_size(need, false);
        block* after = tail->next_phys();
        if (after->is_free()) {
            unlink(after);
            tail->set_size(tail->size() + after->size(), true);
            detail::hooks::region_released(after, header_bytes);
            after = tail->next_phys();
        }
        after->prev_phys = tail;
        detail::hooks::region_released(tail->payload(), tail->size() - header_bytes);
        insert(tail);
    }

    /// Free a live block: merge with free neighbours; a wholly free chunk is cached
    /// (the first one) or unmapped.
    void release(block* b) noexcept {
        bytes_in_use_ -= b->word2;
        detail::hooks::region_released(b->payload(), b->size() - header_bytes);
        b->set_size(b->size(), true);
        block* next = b->next_phys();
        if (next->prev_phys != b) [[unlikely]]
            overwritten(b); // TL7: its size, or its neighbour's tag, was written
        if (next->is_free()) {
            unlink(next);
            b->set_size(b->size() + next->size(), true);
            detail::hooks::region_released(next, header_bytes);
        }
        block* prev = b->prev_phys;
        if (prev != nullptr && prev->next_phys() != b) [[unlikely]]
            overwritten(b); // TL7
        if (prev != nullptr && prev->is_free()) {
            unlink(prev);
            prev->set_size(prev->size() + b->size(), true);
            detail::hooks::region_released(b, header_bytes);
            b = prev;
        }
        next = b->next_phys();
        next->prev_phys = b;
        if (b->prev_phys == nullptr && next->size() == 0) { // the whole chunk is free
            chunk_header* c = chunk_of_first(b);
            if (spare_ == nullptr && c->bytes == chunk_bytes_) {
                spare_ = c;
            } else {
                unmap_chunk(c);
                return;
            }
        }
        insert(b);
    }

    static chunk_header* chunk_of_first(block* first) noexcept {
        return reinterpret_cast<chunk_header*>(reinterpret_cast<std::uintptr_t>(first) - 32);
    }

    /// A new chunk for a block of `need` bytes; returns that chunk's one block, live.
    STA_NOINLINE block* map_chunk(std::size_t need) noexcept {
        std::size_t bytes = chunk_bytes_;
        if (need > (chunk_bytes_ - chunk_overhead) / 4)
            bytes = detail::os_round_up(need + chunk_overhead);
        void* memory = source_.map(bytes);
        if (memory == nullptr)
            return nullptr;
        if (link_key_ == 0)
            link_key_ = detail::process_secret(); // TL8, before the first link is written
        auto* c = static_cast<chunk_header*>(memory);
        c->next = chunks_;
        c->prev = nullptr;
        c->bytes = bytes;
        c->unused = 0;
        if (chunks_ != nullptr)
            chunks_->prev = c;
        chunks_ = c;
        ++chunk_count_;
        bytes_mapped_ += bytes;
        block* b = c->first();
        b->prev_phys = nullptr;
        b->set_size(bytes - chunk_overhead, false);
        b->word2 = 0;
        b->word3 = 0;
        block* s = c->sentinel();
        s->prev_phys = b;
        s->set_size(0, false);
        s->word2 = 0;
        s->word3 = 0;
        detail::hooks::region_released(b->payload(), b->size() - header_bytes);
        return b;
    }

    void unmap_chunk(chunk_header* c) noexcept {
        if (c->prev != nullptr)
            c->prev->next = c->next;
        else
            chunks_ = c->next;
        if (c->next != nullptr)
            c->next->prev = c->prev;
        --chunk_count_;
        bytes_mapped_ -= c->bytes;
        const std::size_t bytes = c->bytes;
        // Give the memory back as the source gave it: accessible to the tools again.
        detail::hooks::region_handed_out(c, bytes);
        source_.unmap(c, bytes);
    }

    STA_NOINLINE void* move_to_new(block* b, std::size_t bytes) noexcept {
        return detail::move_block(
            b->payload(), b->word2, bytes, [this, bytes] { return alloc(bytes); },
            [this, b] { release(b); });
    }

    void check_live([[maybe_unused]] block* b, [[maybe_unused]] void* p,
                    [[maybe_unused]] const char* operation) noexcept {
#if STA_POOL_CHECKS
        if (reinterpret_cast<std::uintptr_t>(p) % alignment != 0)
            die("foreign pointer", p, operation, "not 16-aligned");
        if (b->is_free())
            die("double free", p, operation, "the block is free");
        if (b->size() < min_block_bytes || b->word2 > b->size() - header_bytes)
            die("foreign pointer", p, operation, "not the start of a live block");
#endif
    }

    /// TL7 does not hold around b: a write past the end of the block before it, or into
    /// a free block, changed a header. Reported before the header is followed.
    [[noreturn]] STA_NOINLINE static void overwritten(const block* b) noexcept {
        die("heap corrupted", b,
            "has a header that was overwritten (a write past the end of "
            "the block before it, or after its free)");
    }

    /// "<what>: block <p> <text>", reported (diag/misuse.hpp).
    [[noreturn]] STA_COLD static void die(const char* what, const void* p,
                                          const char* text) noexcept {
        char line[512];
        std::snprintf(line, sizeof line, "%s: block %p %s", what, p, text);
        detail::report_misuse("sta::thread_heap", line);
    }
    /// "<what>: block <p> (<operation>): <text>", reported.
    [[noreturn]] STA_COLD static void die(const char* what, const void* p, const char* operation,
                                          const char* text) noexcept {
        char line[512];
        std::snprintf(line, sizeof line, "(%s): %s", operation, text);
        die(what, p, line);
    }

    thread_heap_source source_;
    std::size_t chunk_bytes_;
    chunk_header* chunks_ = nullptr;
    chunk_header* spare_ = nullptr;
    std::size_t chunk_count_ = 0;
    std::size_t bytes_mapped_ = 0;
    std::size_t bytes_in_use_ = 0; // the bytes callers asked for, live blocks summed
    std::uint64_t fl_bitmap_ = 0;
    std::uint64_t link_key_ = 0; // TL8; 0 until the first chunk
    std::uint32_t sl_bitmap_[fl_count] = {};
    block* heads_[fl_count][sl_count] = {};
    [[no_unique_address]] detail::owner_mark owner_;
};

} // namespace sta
