// sta-pool: where requests above 32 KiB go — the pool's second and third tiers.
//
//   (32 KiB, page_bytes / 2]   the pool's private heap, unsynchronized:
//                              Linux: sta::thread_heap (TLSF over OS chunks);
//                              Windows: HeapCreate(HEAP_NO_SERIALIZE), created on
//                              first use.
//   above page_bytes / 2       std::malloc, the process heap: memory other threads
//                              can reuse once it is freed.
//   above PTRDIFF_MAX          refused (nullptr) before any allocator is asked.
//
// The tier of a block is a function of its size and the page size, so the sized free
// and realloc find it again; that is why the page size cannot change once either the
// pool or its heap holds memory (set_page_bytes refuses).
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/size_class.hpp"
#include "sta/detail/tlsf_heap.hpp"
#include "sta/detail/windows.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace sta::detail {

/// No object can exceed PTRDIFF_MAX bytes: such a request fails before malloc (which
/// valgrind would report as a "fishy" size).
inline constexpr std::size_t max_request_bytes = static_cast<std::size_t>(PTRDIFF_MAX);

#if defined(_WIN32)
/// The Windows private heap: HeapCreate(HEAP_NO_SERIALIZE), made on first use.
class win32_private_heap {
  public:
    void* alloc(std::size_t bytes) noexcept {
        if (handle_ == nullptr && (handle_ = ::HeapCreate(HEAP_NO_SERIALIZE, 0, 0)) == nullptr)
            return nullptr;
        return ::HeapAlloc(handle_, 0, bytes);
    }
    void free(void* p, std::size_t) noexcept { ::HeapFree(handle_, 0, p); }
    void* realloc(void* p, std::size_t bytes) noexcept {
        return ::HeapReAlloc(handle_, 0, p, bytes);
    }
    bool holds_memory() const noexcept { return handle_ != nullptr; }

  private:
    HANDLE handle_ = nullptr;
};
using private_heap = win32_private_heap;
#else
/// The Linux private heap: sta::thread_heap.
class linux_private_heap {
  public:
    void* alloc(std::size_t bytes) noexcept { return heap_.alloc(bytes); }
    void free(void* p, std::size_t bytes) noexcept { heap_.free(p, bytes); }
    void* realloc(void* p, std::size_t bytes) noexcept { return heap_.realloc(p, bytes); }
    bool holds_memory() const noexcept { return heap_.stats().chunks != 0; }

  private:
    thread_heap heap_{};
};
using private_heap = linux_private_heap;
#endif

/// The tiers above the pool, one private heap per pool (`Engine`).
template <class Engine>
struct next_tiers {
    static constinit inline private_heap heap{};

    static bool in_heap(std::size_t bytes) noexcept {
        return bytes <= Engine::state().page_bytes / 2;
    }

    static void* alloc(std::size_t bytes) noexcept {
        if (in_heap(bytes))
            return heap.alloc(bytes);
        return bytes <= max_request_bytes ? std::malloc(bytes) : nullptr;
    }

    static void free(void* p, std::size_t bytes) noexcept {
        if (in_heap(bytes))
            heap.free(p, bytes);
        else
            std::free(p);
    }

    /// Both sizes above 32 KiB. nullptr on failure, and p is then untouched.
    static void* realloc(void* p, std::size_t old_bytes, std::size_t new_bytes) noexcept {
        if (new_bytes > max_request_bytes)
            return nullptr;
        const bool old_in_heap = in_heap(old_bytes);
        if (old_in_heap == in_heap(new_bytes))
            return old_in_heap ? heap.realloc(p, new_bytes) : std::realloc(p, new_bytes);
        void* q = alloc(new_bytes); // across the page/2 boundary: move
        if (q == nullptr)
            return nullptr;
        std::memcpy(q, p, old_bytes < new_bytes ? old_bytes : new_bytes);
        free(p, old_bytes);
        return q;
    }
};

/// The requests no class serves, out of line for every dispatch: size 0 gets a unique
/// block of the smallest class (like malloc(0)), the rest go to the next tiers.
template <class Engine>
struct outside {
    STA_NOINLINE static void* alloc(std::size_t bytes) noexcept {
        return bytes == 0 ? Engine::alloc_smallest() : next_tiers<Engine>::alloc(bytes);
    }
    STA_NOINLINE static void free(void* p, std::size_t bytes) noexcept {
        if (bytes == 0)
            Engine::push(smallest_class_slot, p);
        else
            next_tiers<Engine>::free(p, bytes);
    }
};

} // namespace sta::detail
