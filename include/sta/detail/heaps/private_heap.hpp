// sta-pool: the private heap of a pool — the unsynchronized tier for requests above
// 32 KiB and up to page_bytes / 2 (detail/pool/next_tiers.hpp routes them). Each pool state
// holds one (pool/state.hpp), so a per-thread pool has a heap per thread.
//
//   Linux:   sta::thread_heap (TLSF over OS chunks, detail/heaps/tlsf_heap.hpp).
//   Windows: HeapCreate(HEAP_NO_SERIALIZE), created on first use.
//
// Both are constant-initialised and used by one thread at a time; hand_over() lets
// the heap move to the next thread (a parked per-thread pool adopted by a new thread).
#pragma once

#include "sta/detail/heaps/tlsf_heap.hpp"
#include "sta/detail/os/windows.hpp"

#include <cstddef>

namespace sta::detail {

#if defined(_WIN32)
/// The Windows private heap: HeapCreate(HEAP_NO_SERIALIZE), made on first use. It counts
/// the bytes of its live blocks (HeapSize: the size asked) for process_stats.
class win32_private_heap {
  public:
    void* alloc(std::size_t bytes) noexcept {
        if (handle_ == nullptr && (handle_ = ::HeapCreate(HEAP_NO_SERIALIZE, 0, 0)) == nullptr)
            return nullptr;
        void* const p = ::HeapAlloc(handle_, 0, bytes);
        if (p != nullptr)
            bytes_in_use_ += bytes;
        return p;
    }
    void free(void* p, std::size_t) noexcept { free(p); }
    void free(void* p) noexcept {
        if (p == nullptr)
            return;
        bytes_in_use_ -= ::HeapSize(handle_, 0, p);
        ::HeapFree(handle_, 0, p);
    }
    void* realloc(void* p, std::size_t bytes) noexcept {
        const std::size_t old = ::HeapSize(handle_, 0, p);
        void* const q = ::HeapReAlloc(handle_, 0, p, bytes);
        if (q != nullptr)
            bytes_in_use_ += bytes - old; // modulo 2^64: a shrink subtracts
        return q;
    }
    bool holds_memory() const noexcept { return handle_ != nullptr; }
    /// Windows does not tell a heap's free space: the bytes in use only.
    thread_heap_stats stats() const noexcept {
        thread_heap_stats s;
        s.bytes_in_use = bytes_in_use_;
        return s;
    }
    std::size_t bytes_mapped() const noexcept { return 0; }
    /// A snapshot any thread may read.
    std::size_t bytes_in_use() const noexcept { return bytes_in_use_; }
    void hand_over() noexcept {}
    /// Free memory back to the OS: the heap decommits what it can. Bytes given back are
    /// not told by Windows: 0.
    std::size_t trim() noexcept {
        if (handle_ != nullptr)
            (void)::HeapCompact(handle_, 0);
        return 0;
    }

  private:
    HANDLE handle_ = nullptr;
    std::size_t bytes_in_use_ = 0;
};
using private_heap = win32_private_heap;
#else
/// The Linux private heap: sta::thread_heap.
class linux_private_heap {
  public:
    void* alloc(std::size_t bytes) noexcept { return heap_.alloc(bytes); }
    void free(void* p, std::size_t bytes) noexcept { heap_.free(p, bytes); }
    void free(void* p) noexcept { heap_.free(p); }
    void* realloc(void* p, std::size_t bytes) noexcept { return heap_.realloc(p, bytes); }
    bool holds_memory() const noexcept { return heap_.stats().chunks != 0; }
    /// Walked: by the thread that holds the heap's state, or under a parked state's lock.
    thread_heap_stats stats() const noexcept { return heap_.stats(); }
    /// Snapshots any thread may read (thread_heap::bytes_mapped, bytes_in_use).
    std::size_t bytes_mapped() const noexcept { return heap_.bytes_mapped(); }
    std::size_t bytes_in_use() const noexcept { return heap_.bytes_in_use(); }
    void hand_over() noexcept { heap_.hand_over(); }
    /// The cached wholly free chunk back to the OS. The bytes given back.
    std::size_t trim() noexcept {
        const std::size_t before = heap_.stats().bytes_mapped;
        heap_.trim();
        return before - heap_.stats().bytes_mapped;
    }

  private:
    thread_heap heap_{};
};
using private_heap = linux_private_heap;
#endif

} // namespace sta::detail
