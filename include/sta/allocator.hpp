// sta-pool: sta::allocator<T> — the pool under the std containers.
//
// allocator_adapter<T, Pool> meets the C++ allocator requirements over any pool with
// static alloc/free (sta::memory_pool, its dispatch variants, a tagged pool).
// Stateless and always equal: containers move and swap in O(1).
//
// Failure: allocate(n) throws std::bad_array_new_length when n * sizeof(T) cannot
// be represented, std::bad_alloc when memory cannot be had.
//
// Alignment: the pool aligns every block to min(class size, 16). Types with
// alignof(T) <= 16 are served by the pool; over-aligned types (alignas(32),
// alignas(64), ...) are served by the global aligned operator new, chosen at
// compile time, so they work and cost the pool nothing.
//
// Inlining: allocate's inline part is a test and a call — one object (n == 1, every node
// of a map, set, list or unordered container) to a function of the type's own that asks
// the pool with the size known at compile time, any other n to one that asks with a
// run-time size. The pool's fast path inlined at every allocate made each container
// member that allocates too large for the compiler to inline into its caller, so the
// caller's constant work stayed unfolded: the GUI scene (bench/gui_scene.hpp) runs 9-10 %
// faster with the call (std::string's constructors inlined, their strlen and memcpy of
// literals folded), the tree scene 3-6 % slower (a call a node, +3 % instructions), which
// its teardown's direct frees more than make up (span_core::release; docs/design.md,
// "Decisions"). deallocate stays inline: its call sites are few and its fast path short.
#pragma once

#include "sta/memory_pool.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <type_traits>

namespace sta {

template <class T, class Pool>
class allocator_adapter {
    static_assert(!std::is_const_v<T> && !std::is_volatile_v<T> && !std::is_reference_v<T>,
                  "sta::allocator_adapter<T>: T must be a cv-unqualified object type");

  public:
    using value_type = T;
    using pool_type = Pool;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using propagate_on_container_copy_assignment = std::true_type;
    using propagate_on_container_move_assignment = std::true_type;
    using propagate_on_container_swap = std::true_type;
    using is_always_equal = std::true_type;

    template <class U>
    struct rebind {
        using other = allocator_adapter<U, Pool>;
    };

    constexpr allocator_adapter() noexcept = default;
    template <class U>
    constexpr allocator_adapter(const allocator_adapter<U, Pool>&) noexcept {}

    [[nodiscard]] T* allocate(std::size_t n) {
        if constexpr (over_aligned) {
            if (n > max_size())
                throw std::bad_array_new_length();
            return static_cast<T*>(::operator new (block_bytes(n), std::align_val_t{alignof(T)}));
        } else {
            return static_cast<T*>(n == 1 ? allocate_one() : allocate_n(n));
        }
    }

    void deallocate(T* p, std::size_t n) noexcept {
        if constexpr (over_aligned)
            ::operator delete (p, std::align_val_t{alignof(T)});
        else
            Pool::free(p, block_bytes(n));
    }

    static constexpr size_type max_size() noexcept {
        return std::numeric_limits<std::size_t>::max() / sizeof(T);
    }

    template <class U>
    friend constexpr bool operator==(const allocator_adapter&,
                                     const allocator_adapter<U, Pool>&) noexcept {
        return true;
    }

  private:
    /// One T: with the size known at compile time where the pool takes one (alloc<N>).
    STA_NOINLINE static void* allocate_one() {
        if constexpr (compile_time_size)
            return or_throw(Pool::template alloc<static_cast<std::uint32_t>(block_bytes(1))>());
        else
            return or_throw(Pool::alloc(block_bytes(1)));
    }
    /// n T, any n but 1.
    STA_NOINLINE static void* allocate_n(std::size_t n) {
        if (n > max_size())
            throw std::bad_array_new_length();
        return or_throw(Pool::alloc(block_bytes(n)));
    }
    /// The pool's answer, or std::bad_alloc when it had no memory.
    static void* or_throw(void* p) {
        if (p == nullptr)
            throw std::bad_alloc();
        return p;
    }
    static constexpr bool over_aligned = alignof(T) > detail::max_block_align;

    /// Bytes asked of the pool for n objects. allocate(0) still yields a block aligned
    /// for T: the 8 B class is only 8-aligned, so 16-aligned types ask for 16.
    static constexpr std::size_t block_bytes(std::size_t n) noexcept {
        const std::size_t bytes = n * sizeof(T);
        if constexpr (alignof(T) > detail::min_class_bytes)
            return bytes < alignof(T) ? alignof(T) : bytes;
        else
            return bytes;
    }
    /// The pool takes a size known at compile time (basic_memory_pool::alloc<N>).
    static constexpr bool compile_time_size = block_bytes(1) <= UINT32_MAX && requires {
        Pool::template alloc<std::uint32_t{1}>();
    };
};

/// The std-conforming allocator over sta::memory_pool.
template <class T>
using allocator = allocator_adapter<T, memory_pool>;

} // namespace sta
