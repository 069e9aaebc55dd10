// sta-pool: the C API (sta/pool.h) over a pool of the seed's shared-cursor layout.
//
// Each block carries the size its caller asked for in a header just in front of the
// pointer the caller gets; free reads it and calls the pool's sized free. The pool
// itself is untouched: its sized C++ path does not pay for this API.
//
//   Header = 8 (the default)                 Header = 16
//   +---------+-------------------+          +---------+---------+-------------------+
//   | size_t n| n bytes of caller |          | unused  | size_t n| n bytes of caller |
//   +---------+-------------------+          +---------+---------+-------------------+
//   ^ block   ^ p = block + 8                ^ block             ^ p = block + 16
//
// Invariants (for every live p handed out):
//  C1  the size_t at p - 8 holds n, the size last asked for p: 1 <= n <= max_request.
//  C2  block = p - Header is a live block of Pool, allocated (or last reallocated)
//      with n + Header bytes, so every free and realloc gives the pool its exact size.
//  C3  p is aligned to Header: pool blocks of 16 bytes or more are 16-aligned, and
//      n + Header >= 9 always asks for at least 16.
// Nothing else is stored: no table, no per-page metadata.
#pragma once

#include "sta/detail/c_api/c_common.hpp"
#include "sta/detail/pool/size_class.hpp"

#include <cstddef>

namespace sta::detail {

template <class Pool, std::size_t Header>
struct c_header_heap : private size_header<Header> {
    static_assert(Header == 8 || Header == 16, "the header is 8 or 16 bytes");
    static constexpr std::size_t header_bytes = Header;
    static constexpr std::size_t max_request = max_c_request(Header);

    static void* malloc(std::size_t bytes) noexcept {
        if (bytes == 0)
            return nullptr;
        if (bytes > max_request)
            return out_of_memory();
        auto* const block = static_cast<std::byte*>(Pool::alloc(bytes + Header));
        if (block == nullptr)
            return out_of_memory();
        return with_header(block, bytes);
    }

    static void free(void* p) noexcept {
        if (p == nullptr)
            return;
        Pool::free(block_of(p), size_of(p) + Header);
    }

    static void* realloc(void* p, std::size_t bytes) noexcept {
        if (p == nullptr)
            return malloc(bytes);
        if (bytes == 0) {
            free(p);
            return nullptr;
        }
        if (bytes > max_request)
            return out_of_memory();
        auto* const block = static_cast<std::byte*>(
            Pool::realloc(block_of(p), size_of(p) + Header, bytes + Header));
        if (block == nullptr)
            return out_of_memory();
        return with_header(block, bytes);
    }

    static std::size_t usable_size(const void* p) noexcept { return p == nullptr ? 0 : size_of(p); }

    /// The most a block of `bytes` could hold: what SQLite's xRoundup asks.
    static constexpr std::size_t good_size(std::size_t bytes) noexcept {
        if (bytes == 0 || bytes > max_class_bytes - Header)
            return bytes;
        return bytes_of_size<typename Pool::classes>(bytes + Header) - Header;
    }

  private:
    using header = size_header<Header>;
    using header::block_of;
    using header::size_of;
    using header::with_header;
};

} // namespace sta::detail
