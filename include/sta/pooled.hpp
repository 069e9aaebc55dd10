// sta-pool: sta::pooled — a base that gives a class pooled, sized operator new/delete.
//
//     struct widget : sta::pooled<> { ... };      // new widget / delete p use the pool
//
// Sized operator delete receives the size the object was created with (the dynamic
// type's size when the destructor is virtual), which is what the pool's sized free
// needs. Arrays (new widget[n]) use the pool too. Over-aligned classes
// (alignas(32) and up) get the aligned overloads below, which forward to the global
// aligned operator new: the pool only guarantees 16.
#pragma once

#include "sta/memory_pool.hpp"

#include <cstddef>
#include <new>

namespace sta {

template <class Pool = memory_pool>
struct pooled {
    static void* operator new(std::size_t bytes) {
        void* p = Pool::alloc(bytes);
        if (p == nullptr)
            throw std::bad_alloc();
        return p;
    }
    static void* operator new[](std::size_t bytes) { return operator new(bytes); }
    static void operator delete(void* p, std::size_t bytes) noexcept { Pool::free(p, bytes); }
    static void operator delete[](void* p, std::size_t bytes) noexcept { Pool::free(p, bytes); }
    static void* operator new(std::size_t bytes, std::align_val_t alignment) {
        return ::operator new(bytes, alignment);
    }
    static void* operator new[](std::size_t bytes, std::align_val_t alignment) {
        return ::operator new[](bytes, alignment);
    }
    static void operator delete(void* p, std::size_t, std::align_val_t alignment) noexcept {
        ::operator delete(p, alignment);
    }
    static void operator delete[](void* p, std::size_t, std::align_val_t alignment) noexcept {
        ::operator delete[](p, alignment);
    }
    // The non-allocating placement forms stay usable alongside the class-specific ones.
    static void* operator new(std::size_t, void* where) noexcept { return where; }
    static void operator delete(void*, void*) noexcept {}
};

} // namespace sta
