// sta-pool: sta::pool_resource — a std::pmr::memory_resource over the pool.
//
// For code written against std::pmr: pmr containers on sta::pool_resource get the
// pool. Alignment up to 16 is served by the pool (a request is rounded up to its
// alignment, so the class is aligned enough); larger alignments by the global
// aligned operator new. All pool_resource objects over one pool compare equal.
// do_allocate throws std::bad_alloc when memory cannot be had.
#pragma once

#include "sta/memory_pool.hpp"

#include <cstddef>
#include <memory_resource>
#include <new>

namespace sta {

template <class Pool = memory_pool>
class basic_pool_resource final : public std::pmr::memory_resource {
  private:
    void* do_allocate(std::size_t bytes, std::size_t alignment) override {
        if (alignment > detail::max_block_align)
            return ::operator new (bytes, std::align_val_t{alignment});
        void* p = Pool::alloc(bytes < alignment ? alignment : bytes);
        if (p == nullptr)
            throw std::bad_alloc();
        return p;
    }

    void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
        if (alignment > detail::max_block_align)
            ::operator delete (p, std::align_val_t{alignment});
        else
            Pool::free(p, bytes < alignment ? alignment : bytes);
    }

    bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
        return dynamic_cast<const basic_pool_resource*>(&other) != nullptr;
    }
};

using pool_resource = basic_pool_resource<memory_pool>;

/// One pool_resource for the program, usable from static initialisation on.
template <class Pool = memory_pool>
basic_pool_resource<Pool>* pool_resource_instance() noexcept {
    static basic_pool_resource<Pool> resource;
    return &resource;
}

} // namespace sta
