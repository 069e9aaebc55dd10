// sta-pool: what the C API's heaps share (c_api/header_heap.hpp, c_api/span_heap.hpp,
// c_api/malloc_heap.hpp): malloc's failure, the largest request, and the size header.
#pragma once

#include "sta/detail/os/process_secret.hpp"
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

/// The release checks of c_span_heap's free and realloc (the C API on spans, the drop-in
/// malloc): on unless the program turns them off (the drop-in's STA_MALLOC_CHECKS=0).
inline bool c_release_checks = true;

/// What names a refused call: the library and the functions as its callers know them.
struct c_api_names {
    static constexpr const char* library = "sta-pool";
    static constexpr const char* free = "sta_free()";
    static constexpr const char* realloc = "sta_realloc()";
    static constexpr const char* usable_size = "sta_usable_size()";
};

/// The word in front of the size in a 16-byte header (CS2, CS4): the block's own tag xor
/// the aligned block's lead (0 for the others), so a pointer that is no block with a
/// header finds a word that decodes to no lead (2^-58 odds for one of random bits). A
/// freed block's word decodes to header_freed. The tag is keyed by the process's secret
/// (os/process_secret.hpp): a program that writes a fake header in front of an address
/// cannot write its tag without reading the secret first.
inline std::size_t header_tag(const void* p) noexcept {
    return mix64((reinterpret_cast<std::uintptr_t>(p) >> 4) ^ process_secret());
}
inline constexpr std::size_t header_freed = 1;

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
    /// Header = 16 writes the tag of lead 0 in the word at p - 16 (header_tag): an aligned
    /// block of the drop-in malloc puts its nonzero lead there (c_api/span_heap.hpp, CS4).
    static void* with_header(std::byte* block, std::size_t bytes) noexcept {
        std::byte* const p = block + Header;
        std::memcpy(p - sizeof bytes, &bytes, sizeof bytes);
        if constexpr (Header == 16) {
            const std::size_t tag = header_tag(p); // the lead 0
            std::memcpy(block, &tag, sizeof tag);
        }
        return p;
    }
};

} // namespace sta::detail
