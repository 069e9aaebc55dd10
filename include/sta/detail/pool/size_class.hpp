// sta-pool: size classes and the slot index.
//
// The slot of a request is the number of leading zeros of (size - 1) as a 32-bit
// value: one `lzcnt`. It rounds the size up to a power of two and turns it into an
// index at once. The tables are laid out in that "reversed" order; nothing
// subtracts the index from a constant on the fast path.
//
//     size            size-1 (u32)    slot   served by
//     0               0xFFFFFFFF      0      zero-size / huge handler
//     1 .. 8          0 .. 7          32..29 the 8 B class
//     9 .. 16         8 .. 15         28     16 B class
//     ...
//     16385 .. 32768                  17     32 KiB class (the largest)
//     32769 .. 2^31                   16..1  next tiers (thread_heap, malloc)
//     2^31+1 .. 2^32                  0      zero-size / huge handler
//     above 2^32      clamped to 0xFFFFFFFF, slot 0: a size above 4 GiB never
//                     reaches the 32-bit index truncated.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace sta::detail {

inline constexpr std::uint32_t slot_count = 33;
inline constexpr std::size_t min_class_bytes = 8;
inline constexpr std::size_t max_class_bytes = 32768;
/// The slot of the largest class (32 KiB) and of the smallest (8 B; slots 30..32 alias it).
inline constexpr std::uint32_t largest_class_slot = 17;
inline constexpr std::uint32_t smallest_class_slot = 29;
inline constexpr std::uint32_t class_count = smallest_class_slot - largest_class_slot + 1;
/// No object can exceed PTRDIFF_MAX bytes: a larger request fails before any allocator
/// is asked (valgrind would report it to malloc as a "fishy" size). A heap that puts a
/// header in front of its blocks takes the header off this (c_api/c_common.hpp).
inline constexpr std::size_t max_request_bytes = static_cast<std::size_t>(PTRDIFF_MAX);
/// Every block is aligned to at least min(class bytes, max_block_align).
inline constexpr std::size_t max_block_align = 16;

/// The slot for a size, as the seed computes it: countl_zero(uint32_t(size - 1)),
/// with sizes above 4 GiB (and size 0) clamped to slot 0.
constexpr std::uint32_t slot_of(std::size_t bytes) noexcept {
    const std::size_t key = bytes - 1; // 0 wraps to SIZE_MAX
    const std::size_t clamped = key < 0xFFFFFFFFu ? key : 0xFFFFFFFFu;
    return static_cast<std::uint32_t>(std::countl_zero(static_cast<std::uint32_t>(clamped)));
}

/// The canonical slot of a pooled request, from key = size - 1 < 32 KiB: the same
/// lzcnt with sizes 1..8 folded into the 8 B class's slot 29 (the `| 7`), so that no
/// alias slot 30..32 appears. The inline-branch dispatch uses it.
constexpr std::uint32_t pooled_slot_of_key(std::size_t key) noexcept {
    return static_cast<std::uint32_t>(std::countl_zero(static_cast<std::uint32_t>(key) | 7u));
}

/// True for slots served by the pool's free lists (17..32).
constexpr bool is_pooled_slot(std::uint32_t slot) noexcept {
    return slot >= largest_class_slot;
}

/// The free list a pooled slot uses: slots 30..32 share the 8 B class of slot 29.
constexpr std::uint32_t canonical_slot(std::uint32_t slot) noexcept {
    return slot > smallest_class_slot ? smallest_class_slot : slot;
}

/// Block bytes of the class behind a pooled slot (slow paths only).
constexpr std::size_t class_bytes_of_slot(std::uint32_t slot) noexcept {
    return std::size_t{1} << (32 - canonical_slot(slot));
}

/// True when `bytes` is served by the pool's free lists; size 0 is (an 8 B block).
constexpr bool is_pooled_size(std::size_t bytes) noexcept {
    return bytes <= max_class_bytes;
}

/// Block bytes behind a pooled request size; size 0 gets the 8 B class.
constexpr std::size_t class_bytes_of_size(std::size_t bytes) noexcept {
    return bytes <= min_class_bytes ? min_class_bytes : std::bit_ceil(bytes);
}

static_assert(slot_of(0) == 0);
static_assert(slot_of(1) == 32 && slot_of(8) == 29 && slot_of(9) == 28);
static_assert(slot_of(16384) == 18 && slot_of(32768) == 17 && slot_of(32769) == 16);
static_assert(slot_of(std::size_t{1} << 31) == 1 && slot_of((std::size_t{1} << 31) + 1) == 0);
static_assert(class_bytes_of_slot(17) == 32768 && class_bytes_of_slot(32) == 8);
static_assert(pooled_slot_of_key(0) == 29 && pooled_slot_of_key(8) == 28 &&
              pooled_slot_of_key(32767) == 17);

} // namespace sta::detail
