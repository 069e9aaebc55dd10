// sta-pool benchmarks: the allocators measured side by side, behind one small shape.
//
//   struct Peer {
//       static constexpr const char* name;      // as the report prints it
//       static constexpr bool reuses;           // false: freed blocks are never reused
//                                               // (monotonic, stack): no get/balanced
//       static constexpr bool single_size;      // true: one block size per instance
//       static bool available();                // false when a peer could not be loaded
//       explicit Peer(std::size_t block_bytes); // one instance per measurement
//       void* alloc(std::size_t bytes);
//       void free(void* p, std::size_t bytes);
//       void release_all();                     // after a fresh run: give memory back so
//   };                                          // the next run starts fresh again
//
// The pool variants also offer alloc<N>() / free<N>(p): the compile-time size path.
// General-purpose peers have no such path (a constant size passed to malloc is still
// a call), so they are measured once, with the size at run time.
//
// jemalloc and tcmalloc (and mimalloc, a second time) are measured by running the
// `malloc` and `std::allocator` rows of the same binary under LD_PRELOAD: linking
// them would replace malloc for the whole process.
#pragma once

#ifndef STA_BENCH_HAVE_BOOST
#define STA_BENCH_HAVE_BOOST 0
#endif
#ifndef STA_BENCH_HAVE_FOONATHAN
#define STA_BENCH_HAVE_FOONATHAN 0
#endif

#include <sta/memory_pool.hpp>

#if STA_BENCH_HAVE_BOOST
#include <boost/pool/pool.hpp>
#include <boost/pool/pool_alloc.hpp>
#endif
#if STA_BENCH_HAVE_FOONATHAN
#include <foonathan/memory/memory_pool.hpp>
#include <foonathan/memory/memory_stack.hpp>
#endif

#include <cstddef>
#include <cstdlib>
#include <dlfcn.h>
#include <malloc.h>
#include <memory>
#include <memory_resource>
#include <new>
#include <optional>

namespace bench {

/// Make an object reachable from code the compiler cannot see, once: every compiler
/// barrier after this (benchmark::ClobberMemory, an empty asm with a "memory" clobber)
/// may read and write it, so a peer's free-list head is stored and reloaded around each
/// call, as the pool's (a global) is. The measurements call it on each peer before its
/// loops; it emits no instruction.
template <class T>
inline void escape(T& object) noexcept {
    T* address = &object;
    __asm__ __volatile__("" : : "r"(address) : "memory");
}

/// The pool, one instance per (dispatch policy, tag, layout): a tag gives a benchmark its
/// own pages and free lists, so "fresh" really starts with empty lists. The layout is
/// named, not defaulted: the seed's shared cursor unless a row asks for spans, whatever
/// STA_POOL_SPANS makes sta::memory_pool's default. The thread policy is the layout's
/// default (sta::threads::default_for: per_thread on spans, one_owner on the shared
/// cursor) unless a row names it: the "-seed" rows take spans in threads::one_owner.
template <class Policy, class Tag, class Layout = sta::layout::shared_cursor,
          class Threads = sta::threads::default_for<Layout>>
struct pool_peer {
    using pool = sta::basic_memory_pool<Policy, Tag, Layout, Threads>;
    static constexpr bool reuses = true;
    static constexpr bool single_size = false;
    static constexpr bool compile_time = true;
    static bool available() { return true; }
    /// A per-thread family gives the thread its pool here, before any measurement: the
    /// one-time adoption (mapping the state, the thread-exit key) is not an allocation.
    explicit pool_peer(std::size_t) { (void)pool::detail_state(); }
    void* alloc(std::size_t bytes) { return pool::alloc(bytes); }
    void free(void* p, std::size_t bytes) { pool::free(p, bytes); }
    template <std::uint32_t Bytes>
    void* alloc() {
        return pool::template alloc<Bytes>();
    }
    template <std::uint32_t Bytes>
    void free(void* p) {
        pool::template free<Bytes>(p);
    }
    void release_all() {} // pool memory is kept until the process ends, by design
};

/// glibc malloc — or jemalloc / tcmalloc / mimalloc when the process runs under LD_PRELOAD.
struct malloc_peer {
    static constexpr const char* name = "malloc";
    static constexpr bool reuses = true;
    static constexpr bool single_size = false;
    static constexpr bool compile_time = false;
    static bool available() { return true; }
    explicit malloc_peer(std::size_t) {}
    void* alloc(std::size_t bytes) { return std::malloc(bytes); }
    void free(void* p, std::size_t) { std::free(p); }
    // glibc keeps freed chunks in its bins; malloc_trim consolidates them into the top
    // chunk so the next fresh run splits the top again. The huge pad keeps the pages
    // mapped (no page faults next time). Elsewhere a harmless no-op.
    void release_all() { ::malloc_trim(std::size_t{1} << 40); }
};

/// std::allocator: the global operator new and (where enabled) sized delete.
struct new_delete_peer {
    static constexpr const char* name = "std::allocator";
    static constexpr bool reuses = true;
    static constexpr bool single_size = false;
    static constexpr bool compile_time = false;
    static bool available() { return true; }
    explicit new_delete_peer(std::size_t) {}
    void* alloc(std::size_t bytes) { return std::allocator<char>().allocate(bytes); }
    void free(void* p, std::size_t bytes) {
        std::allocator<char>().deallocate(static_cast<char*>(p), bytes);
    }
    void release_all() { ::malloc_trim(std::size_t{1} << 40); }
};

/// mimalloc in this process, beside glibc: dlopen(RTLD_LOCAL) + dlsym, so it does not
/// replace malloc for everything else. Each call goes through a function pointer.
struct mimalloc_dl_peer {
    static constexpr const char* name = "mimalloc (dlopen)";
    static constexpr bool reuses = true;
    static constexpr bool single_size = false;
    static constexpr bool compile_time = false;
    using malloc_fn = void* (*)(std::size_t);
    using free_fn = void (*)(void*);
    struct entry_points {
        malloc_fn malloc = nullptr;
        free_fn free = nullptr;
    };
    static const entry_points& entries() {
        static const entry_points e = [] {
            entry_points r;
            if (void* lib = ::dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_LOCAL)) {
                r.malloc = reinterpret_cast<malloc_fn>(::dlsym(lib, "mi_malloc"));
                r.free = reinterpret_cast<free_fn>(::dlsym(lib, "mi_free"));
            }
            return r;
        }();
        return e;
    }
    static bool available() { return entries().malloc != nullptr && entries().free != nullptr; }
    explicit mimalloc_dl_peer(std::size_t) {}
    void* alloc(std::size_t bytes) { return entries().malloc(bytes); }
    void free(void* p, std::size_t) { entries().free(p); }
    void release_all() {}
};

/// std::pmr::unsynchronized_pool_resource over new/delete; a new one per measurement.
struct pmr_pool_peer {
    static constexpr const char* name = "pmr::unsynchronized_pool";
    static constexpr bool reuses = true;
    static constexpr bool single_size = false;
    static constexpr bool compile_time = false;
    static bool available() { return true; }
    std::pmr::unsynchronized_pool_resource resource;
    std::pmr::memory_resource* base = &resource; // called as users call it: virtually
    explicit pmr_pool_peer(std::size_t) {}
    void* alloc(std::size_t bytes) { return base->allocate(bytes, alignof(std::max_align_t)); }
    void free(void* p, std::size_t bytes) { base->deallocate(p, bytes, alignof(std::max_align_t)); }
    void release_all() { resource.release(); }
};

/// std::pmr::monotonic_buffer_resource: a bump allocator that never reuses.
struct pmr_monotonic_peer {
    static constexpr const char* name = "pmr::monotonic";
    static constexpr bool reuses = false;
    static constexpr bool single_size = false;
    static constexpr bool compile_time = false;
    static bool available() { return true; }
    std::pmr::monotonic_buffer_resource resource;
    std::pmr::memory_resource* base = &resource;
    explicit pmr_monotonic_peer(std::size_t) {}
    void* alloc(std::size_t bytes) { return base->allocate(bytes, alignof(std::max_align_t)); }
    void free(void* p, std::size_t bytes) { base->deallocate(p, bytes, alignof(std::max_align_t)); }
    void release_all() { resource.release(); }
};

inline std::size_t peer_block_bytes(std::size_t node_bytes) {
    const std::size_t mib = std::size_t{1} << 20;
    return node_bytes * 64 > mib ? node_bytes * 64 : mib;
}

#if STA_BENCH_HAVE_FOONATHAN
/// foonathan::memory::memory_pool (node_pool): one node size per pool.
struct foonathan_pool_peer {
    static constexpr const char* name = "foonathan::memory_pool";
    static constexpr bool reuses = true;
    static constexpr bool single_size = true;
    static constexpr bool compile_time = false;
    static bool available() { return true; }
    foonathan::memory::memory_pool<> pool;
    explicit foonathan_pool_peer(std::size_t bytes) : pool(bytes, peer_block_bytes(bytes)) {}
    void* alloc(std::size_t) { return pool.allocate_node(); }
    void free(void* p, std::size_t) { pool.deallocate_node(p); }
    void release_all() {}
};

/// foonathan::memory::memory_stack: bump allocation, released by unwinding.
struct foonathan_stack_peer {
    static constexpr const char* name = "foonathan::memory_stack";
    static constexpr bool reuses = false;
    static constexpr bool single_size = false;
    static constexpr bool compile_time = false;
    static bool available() { return true; }
    foonathan::memory::memory_stack<> stack;
    foonathan::memory::memory_stack<>::marker bottom;
    explicit foonathan_stack_peer(std::size_t bytes)
        : stack(peer_block_bytes(bytes)), bottom(stack.top()) {}
    void* alloc(std::size_t bytes) { return stack.allocate(bytes, alignof(std::max_align_t)); }
    void free(void*, std::size_t) {}
    void release_all() {
        stack.unwind(bottom);
        stack.shrink_to_fit();
    }
};

#endif // STA_BENCH_HAVE_FOONATHAN

#if STA_BENCH_HAVE_BOOST
/// boost::pool<>: a single-size free list (the floor for a free-list design).
struct boost_pool_peer {
    static constexpr const char* name = "boost::pool";
    static constexpr bool reuses = true;
    static constexpr bool single_size = true;
    static constexpr bool compile_time = false;
    static bool available() { return true; }
    boost::pool<> pool;
    explicit boost_pool_peer(std::size_t bytes) : pool(bytes, 32, 0) {}
    void* alloc(std::size_t) { return pool.malloc(); }
    void free(void* p, std::size_t) { pool.free(p); }
    void release_all() { pool.purge_memory(); }
};

/// boost::fast_pool_allocator: a singleton pool per type size. Measured with
/// null_mutex — the single-thread configuration (the default takes a mutex).
template <std::size_t Bytes>
struct boost_fast_peer {
    struct blob {
        alignas(Bytes < 16 ? Bytes : 16) unsigned char bytes[Bytes];
    };
    using allocator = boost::fast_pool_allocator<blob, boost::default_user_allocator_new_delete,
                                                 boost::details::pool::null_mutex, 32, 0>;
    using singleton = boost::singleton_pool<boost::fast_pool_allocator_tag, sizeof(blob),
                                            boost::default_user_allocator_new_delete,
                                            boost::details::pool::null_mutex, 32, 0>;
    static constexpr const char* name = "boost::fast_pool_allocator";
    static constexpr bool reuses = true;
    static constexpr bool single_size = true;
    static constexpr bool compile_time = false;
    static bool available() { return true; }
    explicit boost_fast_peer(std::size_t) {}
    void* alloc(std::size_t) { return allocator::allocate(); }
    void free(void* p, std::size_t) { allocator::deallocate(static_cast<blob*>(p)); }
    void release_all() { singleton::purge_memory(); }
};

#endif // STA_BENCH_HAVE_BOOST

} // namespace bench
