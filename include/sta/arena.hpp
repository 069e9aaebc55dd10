// sta-pool: sta::arena — the pool's twin for document-shaped data.
//
// Bump allocation in blocks of 64 KiB (a parameter), no per-object free, and the whole
// lot given back at once without running destructors: build a DOM, query it, drop it.
// Released blocks go to a per-thread block cache (detail/heaps/arena_block.hpp) that the next
// arena on the thread takes them from: no mmap, no page fault per document.
// Also here: arena_scope (a scoped rewind marker), arena_allocator<T> for the std
// containers (deallocate does nothing) and arena_resource, a std::pmr::memory_resource
// view of an arena.
//
// The thread rule: like the pool, an arena belongs to one thread at a time, the first
// one that calls it (again after release()). No atomics, no locks. Checked builds
// (STA_POOL_CHECKS) abort with a message naming both threads when another thread calls.
//
// Failure, in one place:
//   allocate(bytes, align)      nullptr when the block source refuses, when
//                               bytes + align + header cannot be represented, or when
//                               align is not a power of two. Never throws.
//   create<T>, create_array<T>, std::bad_alloc when memory cannot be had,
//   arena_allocator<T>          std::bad_array_new_length when n * sizeof(T) overflows.
//   arena_resource              std::bad_alloc; std::invalid_argument for an alignment
//                               that is not a power of two.
//   arena(block_bytes)          std::invalid_argument unless a power of two in
//                               [4 KiB, 1 GiB].
// allocate(0, a) returns a unique non-null pointer (it takes one byte).
//
// Sanitizers (detail/diag/tool_hooks.hpp): whatever is not handed out — the free part of a fresh
// block, alignment padding, what reset() or a rewind took back — is poisoned; a request
// unpoisons exactly its bytes; a block going back to its source is cleared first.
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/diag/bad_argument.hpp"
#include "sta/detail/diag/owner_mark.hpp"
#include "sta/detail/diag/tool_hooks.hpp"
#include "sta/detail/heaps/arena_block.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory_resource>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace sta {

class arena;
namespace detail {
std::string check_arena(const arena& a);
}

/// What an arena holds now. bytes_used counts what was handed out, with alignment
/// padding, in every block; bytes_reserved counts whole mappings, headers included.
struct arena_stats {
    std::size_t block_bytes = 0;      ///< the standard block size of this arena
    std::size_t blocks = 0;           ///< mappings held: standard + dedicated
    std::size_t dedicated_blocks = 0; ///< blocks holding one large request each
    std::size_t bytes_reserved = 0;   ///< sum of the mappings' sizes
    std::size_t bytes_used = 0;       ///< handed out since the last release/reset/rewind
};

/// A position in an arena, from arena::mark(); arena::rewind(m) gives back everything
/// allocated after it.
struct arena_mark {
    std::uint64_t block_serial = 0;     ///< the current standard block (0: none)
    std::byte* cursor = nullptr;        ///< the bump cursor in it
    std::uint64_t dedicated_serial = 0; ///< the newest dedicated block (0: none)
};

/*  sta::arena — two lists of blocks (newest first) and a bump range.

      current_ ---> [standard block S5] --older--> [S2] --older--> [S1]  (the first)
                     | used | [cursor_, end_) |
      dedicated_ -> [D4: one request] --older--> [D3: one request]

    A request that fits in [cursor_, end_) moves cursor_ and returns: one compare of
    room, one add. Otherwise (the slow path): a request of more than a quarter of a
    standard block's capacity gets a dedicated block of its own, pushed on dedicated_,
    and the current block keeps bumping; anything else retires the current block and
    maps a new standard one, so a retired block wastes less than a quarter of itself.

    Invariants (detail::check_arena enforces them in tests; B1-B3 in heaps/arena_block.hpp):
     A1  cursor_ and end_ are both null when current_ is null; otherwise
         current_->data() <= cursor_ <= end_ == current_->limit().
     A2  every block on current_'s list is block_bytes_ long; every block on
         dedicated_'s list holds exactly one request.
     A3  blocks_ and bytes_reserved_ equal the count and the total size of both lists;
         dedicated_blocks_ the length of dedicated_'s list.
     A4  serials strictly decrease along each list, and are below next_serial_.
     A5  after reset(), or a rewind to a mark taken on an empty arena, the oldest
         standard block (if any) is kept with cursor_ at its data().              */
class arena {
  public:
    static constexpr std::size_t default_block_bytes = std::size_t{64} * 1024;
    static constexpr std::size_t min_block_bytes = detail::os_page_bytes;
    static constexpr std::size_t max_block_bytes = std::size_t{1} << 30;
    static constexpr std::size_t default_align = alignof(std::max_align_t);

    /// An arena of blocks of `block_bytes` (a power of two in [4 KiB, 1 GiB]) from
    /// `source`. Maps nothing until the first allocation.
    explicit arena(std::size_t block_bytes = default_block_bytes, arena_block_source source = {})
        : block_bytes_(block_bytes), source_(source) {
        detail::require_power_of_two_within("sta::arena", "", block_bytes, "the block size",
                                            min_block_bytes, max_block_bytes);
    }

    arena(const arena&) = delete;
    arena& operator=(const arena&) = delete;
    ~arena() { release(); }

    /// `bytes` aligned to `align` (a power of two), or nullptr: see the file comment.
    [[nodiscard]] STA_FORCE_INLINE void* allocate(std::size_t bytes,
                                                  std::size_t align = default_align) noexcept {
        check_owner();
        const std::size_t want = bytes + (bytes == 0); // a unique pointer for 0
        const auto at = reinterpret_cast<std::uintptr_t>(cursor_);
        const std::size_t pad = static_cast<std::size_t>(0 - at) & (align - 1);
        const auto room = static_cast<std::size_t>(end_ - cursor_);
        // pad <= room - want cannot overflow; align - 1 as a mask is only right for a
        // power of two, which the slow path checks (a bad align never bumps: see below).
        if (want <= room && pad <= room - want && (align & (align - 1)) == 0) [[likely]] {
            std::byte* p = cursor_ + pad;
            cursor_ = p + want;
            detail::hooks::region_handed_out(p, want);
            return p;
        }
        return allocate_slow(want, align);
    }

    /// Construct a T in the arena. T must be trivially destructible: the arena never
    /// runs destructors. Throws std::bad_alloc, or whatever T's constructor throws
    /// (the memory then stays in the arena until release/reset/rewind).
    template <class T, class... Args>
    [[nodiscard]] T* create(Args&&... args) {
        static_assert(std::is_trivially_destructible_v<T>,
                      "sta::arena::create<T>: T has a destructor the arena would never run; "
                      "use create_never_destroyed<T> if skipping it is really fine");
        return create_never_destroyed<T>(std::forward<Args>(args)...);
    }

    /// Construct a T whose destructor will never run: the caller promises that skipping
    /// it is fine (its state lives in this arena, it holds no other resource).
    template <class T, class... Args>
    [[nodiscard]] T* create_never_destroyed(Args&&... args) {
        void* p = allocate(sizeof(T), alignof(T));
        if (p == nullptr)
            throw std::bad_alloc();
        if constexpr (std::is_constructible_v<T, Args...>)
            return ::new (p) T(std::forward<Args>(args)...);
        else // an aggregate: T{...} (clang 14 lacks parenthesised aggregate init)
            return ::new (p) T{std::forward<Args>(args)...};
    }

    /// `count` value-initialised T (trivially destructible). Throws
    /// std::bad_array_new_length when count * sizeof(T) overflows, std::bad_alloc.
    template <class T>
    [[nodiscard]] T* create_array(std::size_t count) {
        static_assert(std::is_trivially_destructible_v<T>,
                      "sta::arena::create_array<T>: the arena never runs destructors");
        if (count > std::numeric_limits<std::size_t>::max() / sizeof(T))
            throw std::bad_array_new_length();
        void* p = allocate(count * sizeof(T), alignof(T));
        if (p == nullptr)
            throw std::bad_alloc();
        T* first = static_cast<T*>(p);
        for (std::size_t i = 0; i < count; ++i)
            ::new (static_cast<void*>(first + i)) T();
        return first;
    }

    /// Give every block back to the source (by default: this thread's block cache, for
    /// the next arena; see arena_block_cache). Every pointer from this arena dangles; no
    /// destructor runs. The arena may then be used again, by any one thread.
    void release() noexcept {
        check_owner();
        retire_current();
        unmap_list(current_, 0);
        unmap_list(dedicated_, 0);
        current_ = nullptr;
        dedicated_ = nullptr;
        cursor_ = end_ = nullptr;
        owner_.hand_over();
    }

    /// Like release(), but keep the first standard block, empty, for the next use.
    void reset() noexcept {
        check_owner();
        rewind_standard_to_empty();
        unmap_list(dedicated_, 0);
        dedicated_ = nullptr;
    }

    /// The current position, for rewind().
    [[nodiscard]] arena_mark mark() const noexcept {
        return {current_ ? current_->serial : 0, cursor_, dedicated_ ? dedicated_->serial : 0};
    }

    /// Give back everything allocated after `m` was taken. Marks are meant to be
    /// rewound last-taken first; a mark whose position is already gone (an earlier
    /// reset, release or outer rewind) rewinds only what came after it and still
    /// exists: a rewind never takes back memory handed out before its mark.
    void rewind(const arena_mark& m) noexcept {
        check_owner();
        if (m.block_serial == 0) {
            rewind_standard_to_empty();
        } else {
            retire_current();
            unmap_list(current_, m.block_serial);
            if (current_ != nullptr && current_->serial == m.block_serial &&
                m.cursor < current_->data() + current_->used) {
                detail::hooks::region_released(
                    m.cursor,
                    static_cast<std::size_t>(current_->data() + current_->used - m.cursor));
                current_->used = static_cast<std::size_t>(m.cursor - current_->data());
            }
            enter_current();
        }
        unmap_list(dedicated_, m.dedicated_serial);
    }

    /// What the arena holds now. Walks the blocks: O(blocks).
    [[nodiscard]] arena_stats stats() const noexcept {
        arena_stats s;
        s.block_bytes = block_bytes_;
        s.blocks = blocks_;
        s.dedicated_blocks = dedicated_blocks_;
        s.bytes_reserved = bytes_reserved_;
        for (const detail::arena_block* b = current_; b != nullptr; b = b->older)
            s.bytes_used +=
                b == current_ ? static_cast<std::size_t>(cursor_ - current_->data()) : b->used;
        for (const detail::arena_block* b = dedicated_; b != nullptr; b = b->older)
            s.bytes_used += b->used;
        return s;
    }

    [[nodiscard]] std::size_t block_bytes() const noexcept { return block_bytes_; }
    /// Bytes a standard block offers after its header.
    [[nodiscard]] std::size_t block_capacity() const noexcept {
        return block_bytes_ - detail::arena_block_header_bytes;
    }

  private:
    friend std::string detail::check_arena(const arena& a);

    STA_FORCE_INLINE void check_owner() noexcept { owner_.check("sta::arena", "", "the arena"); }

    /// Everything allocate() could not do in the bump range: validate, then map.
    STA_NOINLINE void* allocate_slow(std::size_t want, std::size_t align) noexcept {
        if (!std::has_single_bit(align))
            return nullptr;
        constexpr std::size_t header = detail::arena_block_header_bytes;
        constexpr std::size_t page = detail::os_page_bytes;
        // Where the request starts in a fresh mapping, as an upper bound.
        const std::size_t offset = align <= page ? (align < header ? header : align)
                                                 : header + align; // aligned at run time
        if (want > std::numeric_limits<std::size_t>::max() - offset - page)
            return nullptr; // bytes + align (+ header) cannot be represented
        if (want <= block_capacity() / 4 && align <= page && offset + want <= block_bytes_) {
            std::byte* fresh = map_standard();
            if (fresh == nullptr)
                return nullptr;
            return allocate(want, align); // fits now: the fast path takes it
        }
        return allocate_dedicated(want, align, offset);
    }

    void* allocate_dedicated(std::size_t want, std::size_t align, std::size_t offset) noexcept {
        constexpr std::size_t page = detail::os_page_bytes;
        const std::size_t bytes = (offset + want + page - 1) & ~(page - 1);
        auto* b = static_cast<detail::arena_block*>(source_.map(bytes));
        if (b == nullptr)
            return nullptr;
        const auto data = reinterpret_cast<std::uintptr_t>(b->data());
        const std::uintptr_t at = (data + align - 1) & ~static_cast<std::uintptr_t>(align - 1);
        std::byte* p = b->data() + (at - data);
        *b = {dedicated_, bytes, static_cast<std::size_t>(p + want - b->data()), next_serial_++};
        detail::hooks::region_released(b->data(), bytes - detail::arena_block_header_bytes);
        dedicated_ = b;
        ++dedicated_blocks_;
        ++blocks_;
        bytes_reserved_ += bytes;
        detail::hooks::region_handed_out(p, want);
        return p;
    }

    /// Retire the current block and bump in a fresh standard one.
    std::byte* map_standard() noexcept {
        auto* b = static_cast<detail::arena_block*>(source_.map(block_bytes_));
        if (b == nullptr)
            return nullptr;
        retire_current();
        *b = {current_, block_bytes_, 0, next_serial_++};
        detail::hooks::region_released(b->data(), block_capacity()); // nothing handed out yet
        current_ = b;
        ++blocks_;
        bytes_reserved_ += block_bytes_;
        enter_current();
        return cursor_;
    }

    /// Write the cursor back into the current block's header (B3).
    void retire_current() noexcept {
        if (current_ != nullptr)
            current_->used = static_cast<std::size_t>(cursor_ - current_->data());
    }
    /// Take the bump range from the current block's header.
    void enter_current() noexcept {
        if (current_ == nullptr) {
            cursor_ = end_ = nullptr;
        } else {
            cursor_ = current_->data() + current_->used;
            end_ = current_->limit();
        }
    }

    /// Unmap the newest blocks of `list` while their serial is above `keep_serial`.
    void unmap_list(detail::arena_block*& list, std::uint64_t keep_serial) noexcept {
        const bool dedicated = &list == &dedicated_;
        while (list != nullptr && list->serial > keep_serial) {
            detail::arena_block* b = list;
            list = b->older;
            // The mapping goes back whole: clear the tools' marks first, so whoever maps
            // this address next starts clean (the MMU guards it until then).
            detail::hooks::region_handed_out(b->data(),
                                             b->bytes - detail::arena_block_header_bytes);
            --blocks_;
            dedicated_blocks_ -= dedicated;
            bytes_reserved_ -= b->bytes;
            source_.unmap(b, b->bytes);
        }
    }

    /// A5: unmap every standard block but the oldest, and empty that one.
    void rewind_standard_to_empty() noexcept {
        retire_current();
        if (current_ == nullptr)
            return;
        detail::arena_block* first = current_;
        while (first->older != nullptr)
            first = first->older;
        unmap_list(current_, first->serial);
        detail::hooks::region_released(first->data(), first->used);
        first->used = 0;
        enter_current();
    }

    std::byte* cursor_ = nullptr; // A1: the hot pair first
    std::byte* end_ = nullptr;
    detail::arena_block* current_ = nullptr;
    detail::arena_block* dedicated_ = nullptr;
    std::size_t block_bytes_;
    arena_block_source source_;
    std::size_t blocks_ = 0; // A3
    std::size_t dedicated_blocks_ = 0;
    std::size_t bytes_reserved_ = 0;
    std::uint64_t next_serial_ = 1;                  // A4: 0 means "no block" in a mark
    [[no_unique_address]] detail::owner_mark owner_; // the thread rule (diag/owner_mark.hpp)
};

/// A scoped rewind marker: everything allocated in the arena during the scope's life
/// is given back when it ends. Nest them freely; they rewind innermost first.
class arena_scope {
  public:
    explicit arena_scope(arena& a) noexcept : arena_(a), mark_(a.mark()) {}
    arena_scope(const arena_scope&) = delete;
    arena_scope& operator=(const arena_scope&) = delete;
    ~arena_scope() { arena_.rewind(mark_); }

  private:
    arena& arena_;
    arena_mark mark_;
};

/// A std-conforming allocator over an arena. deallocate does nothing: memory comes
/// back with the arena's release/reset/rewind. Two arena_allocators are equal when
/// they share the arena. Like std::pmr's allocator, it does not propagate on copy,
/// move or swap: a container's memory stays in the arena it was built in.
template <class T>
class arena_allocator {
    static_assert(!std::is_const_v<T> && !std::is_volatile_v<T> && !std::is_reference_v<T>,
                  "sta::arena_allocator<T>: T must be a cv-unqualified object type");

  public:
    using value_type = T;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using propagate_on_container_copy_assignment = std::false_type;
    using propagate_on_container_move_assignment = std::false_type;
    using propagate_on_container_swap = std::false_type;
    using is_always_equal = std::false_type;

    template <class U>
    struct rebind {
        using other = arena_allocator<U>;
    };

    arena_allocator(arena& a) noexcept : arena_(&a) {} // NOLINT: implicit on purpose
    template <class U>
    arena_allocator(const arena_allocator<U>& other) noexcept : arena_(&other.get_arena()) {}

    [[nodiscard]] T* allocate(std::size_t n) {
        if (n > max_size())
            throw std::bad_array_new_length();
        void* p = arena_->allocate(n * sizeof(T), alignof(T));
        if (p == nullptr)
            throw std::bad_alloc();
        return static_cast<T*>(p);
    }

    void deallocate(T*, std::size_t) noexcept {}

    static constexpr size_type max_size() noexcept {
        return std::numeric_limits<std::size_t>::max() / sizeof(T);
    }

    arena& get_arena() const noexcept { return *arena_; }

    template <class U>
    friend bool operator==(const arena_allocator& a, const arena_allocator<U>& b) noexcept {
        return &a.get_arena() == &b.get_arena();
    }

  private:
    arena* arena_;
};

/// A std::pmr::memory_resource view of an arena: do_deallocate does nothing. Equal to
/// another arena_resource over the same arena.
class arena_resource final : public std::pmr::memory_resource {
  public:
    explicit arena_resource(arena& a) noexcept : arena_(&a) {}
    arena& get_arena() const noexcept { return *arena_; }

  private:
    void* do_allocate(std::size_t bytes, std::size_t alignment) override {
        if (!std::has_single_bit(alignment))
            throw std::invalid_argument("sta::arena_resource: alignment " +
                                        std::to_string(alignment) + " is not a power of two");
        void* p = arena_->allocate(bytes, alignment);
        if (p == nullptr)
            throw std::bad_alloc();
        return p;
    }
    void do_deallocate(void*, std::size_t, std::size_t) override {}
    bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
        const auto* o = dynamic_cast<const arena_resource*>(&other);
        return o != nullptr && o->arena_ == arena_;
    }

    arena* arena_;
};

} // namespace sta
