// sta-pool: sta::unique_ptr<T> and sta::make_unique<T>(...) — single objects in the pool.
//
// The deleter frees sizeof(T) bytes, so a sta::unique_ptr<T> must own exactly a T:
// it does not convert to sta::unique_ptr<Base> (the base's size would be freed).
// For class hierarchies, give the base a virtual destructor and sta::pooled (sized
// operator delete sees the dynamic size) and use std::unique_ptr.
#pragma once

#include "sta/memory_pool.hpp"

#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace sta {

template <class T, class Pool = memory_pool>
struct pool_delete {
    static_assert(!std::is_array_v<T>, "sta::pool_delete: use sta::vector for arrays");
    static_assert(alignof(T) <= detail::max_block_align,
                  "sta::pool_delete: the pool aligns blocks to 16 bytes at most; "
                  "over-aligned types need std::unique_ptr");
    void operator()(T* p) const noexcept {
        p->~T();
        Pool::free(p, sizeof(T));
    }
};

template <class T, class Pool = memory_pool>
using unique_ptr = std::unique_ptr<T, pool_delete<T, Pool>>;

/// Construct a T in the pool. Throws std::bad_alloc when memory cannot be had and
/// passes on what T's constructor throws (the block is given back first).
template <class T, class Pool = memory_pool, class... Args>
unique_ptr<T, Pool> make_unique(Args&&... args) {
    static_assert(alignof(T) <= detail::max_block_align,
                  "sta::make_unique: over-aligned types need std::make_unique");
    void* p = Pool::template alloc<sizeof(T)>();
    if (p == nullptr)
        throw std::bad_alloc();
    try {
        return unique_ptr<T, Pool>(::new (p) T(std::forward<Args>(args)...));
    } catch (...) {
        Pool::free(p, sizeof(T));
        throw;
    }
}

} // namespace sta
