// sta-pool benchmarks: the allocators measured beside the pool, behind one small shape
// (the pool itself takes the same shape: bench::pool_peer, bench/harness.hpp).
//
//   struct Peer {
//       static constexpr const char* name;      // as the programs take it on their
//                                               // command lines and print it
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
// The peers over the process's heaps (malloc, std::allocator, mimalloc) also name a
// stateless std allocator over the same heap: `template <class T> using std_allocator`.
// General-purpose peers have no compile-time size path (a constant size passed to malloc
// is still a call), so they are measured once, with the size at run time.
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

#if STA_BENCH_HAVE_BOOST
#include <boost/pool/pool.hpp>
#include <boost/pool/pool_alloc.hpp>
#endif
#if STA_BENCH_HAVE_FOONATHAN
#include <foonathan/memory/memory_pool.hpp>
#include <foonathan/memory/memory_stack.hpp>
#endif

#include "escape.hpp"

#include <cstddef>
#include <cstdlib>
#include <dlfcn.h>
#include <malloc.h>
#include <memory>
#include <memory_resource>
#include <new>

namespace bench {

/// glibc malloc — or jemalloc / tcmalloc / mimalloc when the process runs under LD_PRELOAD.
struct malloc_peer {
    static constexpr const char* name = "malloc";
    template <class T>
    using std_allocator = std::allocator<T>; // operator new: malloc underneath
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
    template <class T>
    using std_allocator = std::allocator<T>;
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

/// mimalloc's entry points in this process, beside glibc: dlopen(RTLD_LOCAL) + dlsym,
/// so it does not replace malloc for everything else. The one dlopen of mimalloc in the
/// benchmarks, done at the first call; all null when libmimalloc.so.2 is not installed.
struct mimalloc_entry_points {
    void* (*malloc)(std::size_t) = nullptr;
    void* (*realloc)(void*, std::size_t) = nullptr;
    void (*free)(void*) = nullptr;
};
inline const mimalloc_entry_points& mimalloc_dl() {
    static const mimalloc_entry_points e = [] {
        mimalloc_entry_points r;
        if (void* lib = ::dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_LOCAL)) {
            r.malloc = reinterpret_cast<decltype(r.malloc)>(::dlsym(lib, "mi_malloc"));
            r.realloc = reinterpret_cast<decltype(r.realloc)>(::dlsym(lib, "mi_realloc"));
            r.free = reinterpret_cast<decltype(r.free)>(::dlsym(lib, "mi_free"));
        }
        if (r.malloc == nullptr || r.realloc == nullptr || r.free == nullptr)
            r = {};
        return r;
    }();
    return e;
}

/// A stateless std allocator over mimalloc reached through dlopen. Check
/// mimalloc_dl_peer::available() before using it.
template <class T>
struct mimalloc_dl_allocator {
    using value_type = T;
    mimalloc_dl_allocator() noexcept = default;
    template <class U>
    mimalloc_dl_allocator(const mimalloc_dl_allocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T))
            throw std::bad_array_new_length();
        void* p = mimalloc_dl().malloc(n * sizeof(T));
        if (p == nullptr)
            throw std::bad_alloc();
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t) noexcept { mimalloc_dl().free(p); }
    template <class U>
    friend bool operator==(const mimalloc_dl_allocator&, const mimalloc_dl_allocator<U>&) noexcept {
        return true;
    }
};

/// mimalloc in this process (mimalloc_dl): each call goes through a function pointer.
struct mimalloc_dl_peer {
    static constexpr const char* name = "mimalloc-dlopen";
    template <class T>
    using std_allocator = mimalloc_dl_allocator<T>;
    static constexpr bool reuses = true;
    static constexpr bool single_size = false;
    static constexpr bool compile_time = false;
    static bool available() { return mimalloc_dl().malloc != nullptr; }
    explicit mimalloc_dl_peer(std::size_t) {}
    void* alloc(std::size_t bytes) { return mimalloc_dl().malloc(bytes); }
    void free(void* p, std::size_t) { mimalloc_dl().free(p); }
    void release_all() {}
};

/// std::pmr::unsynchronized_pool_resource over new/delete; a new one per measurement.
struct pmr_pool_peer {
    static constexpr const char* name = "pmr-unsync-pool";
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
    static constexpr const char* name = "pmr-monotonic";
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
    static constexpr const char* name = "foonathan-pool";
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
    static constexpr const char* name = "foonathan-stack";
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
    static constexpr const char* name = "boost-pool";
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
    static constexpr const char* name = "boost-fast-pool";
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
