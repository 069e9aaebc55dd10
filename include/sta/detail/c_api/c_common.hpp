// sta-pool: what the C API's heaps share (c_api/header_heap.hpp, c_api/span_heap.hpp,
// c_api/malloc_heap.hpp): malloc's failure, the largest request, and the size header.
#pragma once

#include "sta/detail/pool/size_class.hpp"

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace sta::detail {

/// malloc's failure: NULL with errno = ENOMEM.
inline void* out_of_memory() noexcept {
    errno = ENOMEM;
    return nullptr;
}

/// The largest size a C caller may ask for when a heap puts `header_bytes` in front of
/// the block: size + header stays within max_request_bytes (pool/size_class.hpp).
constexpr std::size_t max_c_request(std::size_t header_bytes) noexcept {
    return max_request_bytes - header_bytes;
}

/// The size a caller asked for, in the last 8 bytes of a `Header`-byte header in front
/// of its pointer: c_header_heap's every block, c_span_heap's blocks outside the spans.
template <std::size_t Header>
struct size_header {
    static std::byte* block_of(void* p) noexcept { return static_cast<std::byte*>(p) - Header; }
    static std::size_t size_of(const void* p) noexcept {
        std::size_t bytes;
        std::memcpy(&bytes, static_cast<const std::byte*>(p) - sizeof bytes, sizeof bytes);
        return bytes;
    }
    /// Header = 16 writes 0 in the unused word (p - 16): an aligned block of the
    /// drop-in malloc puts its nonzero lead there (c_api/span_heap.hpp, CS4).
    static void* with_header(std::byte* block, std::size_t bytes) noexcept {
        std::byte* const p = block + Header;
        std::memcpy(p - sizeof bytes, &bytes, sizeof bytes);
        if constexpr (Header == 16) {
            constexpr std::size_t unused = 0;
            std::memcpy(block, &unused, sizeof unused);
        }
        return p;
    }
};

} // namespace sta::detail
