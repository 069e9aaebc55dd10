// sta-pool: size classes and the slot index. Two class sets, one contract
// (`size_class_set` below): the seed's powers of two, and quarter classes, four per
// power of two. A pool's dispatch engine names its set (`Engine::classes`); everything
// that knows a class asks it.
//
// The seed's powers of two (power_of_two_classes): the slot of a request is the number of
// leading zeros of (size - 1) as a 32-bit value: one `lzcnt`. It rounds the size up to a
// power of two and turns it into an index at once. The tables are laid out in that
// "reversed" order; nothing subtracts the index from a constant on the fast path.
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
//
// Quarter classes (quarter_classes): steps of 8 B up to 64 B, then four classes per
// power of two, each a quarter of it apart (at most 25 % rounding, 12.5 % on average
// over sizes spread evenly). The slot, from key = size - 1 < 32 KiB, is one `lzcnt`
// (b = bit_width(key | 32) - 1, the power of two below the size, at least 32) and a shift
// of the next two bits: slot = 4 b - 20 + (key >> (b - 2)). The `| 32` makes sizes up
// to 32 B land in the 8 B steps by the same formula. At run time the pool reads that
// formula's answer from a table of key / 8 (slot_table): fewer instructions.
//
//     size          slot    block        size            slot    block
//     1 .. 8        0       8            65 .. 80        8       80
//     9 .. 16       1       16           81 .. 96        9       96
//     ...                                ...
//     57 .. 64      7       64           24577 .. 32768  43      32768
//
// Alignment: a block is aligned to the largest power of two dividing its class, at most
// 16 (max_block_align): 8 for 24, 40 and 56 B, 16 for every class of 64 B or more; the
// blocks of a power-of-two class are aligned to their size (spans and pages start
// 64 KiB-aligned), which memalign uses (c_api/malloc_heap.hpp).
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/pool/quarter_slot_table.hpp"

#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace sta::detail {

/// The seed's slots: 0..32, from one lzcnt of a 32-bit key.
inline constexpr std::uint32_t slot_count = 33;
/// Arrays indexed by the slot of either class set hold this many: the seed's slots
/// 17..32, the quarter classes' 0..43.
inline constexpr std::uint32_t class_slots = 44;
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

/// What a pool needs of a class set: a request's slot, a slot's block bytes, and the
/// classes in order of size (`ordinal` 0 is the smallest; stats list them so).
template <class Classes>
concept size_class_set = requires(std::size_t n, std::uint32_t slot) {
    { Classes::name } -> std::convertible_to<const char*>;
    { Classes::count } -> std::convertible_to<std::uint32_t>;
    { Classes::slot_of_key(n) } -> std::same_as<std::uint32_t>;
    { Classes::bytes_of_slot(slot) } -> std::same_as<std::size_t>;
    { Classes::slot_of_ordinal(slot) } -> std::same_as<std::uint32_t>;
    { Classes::ordinal_of_slot(slot) } -> std::same_as<std::uint32_t>;
};

/// The seed's classes: every power of two from 8 B to 32 KiB, slots 17..29.
struct power_of_two_classes {
    static constexpr const char* name = "power_of_two";
    static constexpr std::uint32_t count = class_count;
    /// The canonical slot of key = size - 1 < max_class_bytes.
    STA_FORCE_INLINE static constexpr std::uint32_t slot_of_key(std::size_t key) noexcept {
        return pooled_slot_of_key(key);
    }
    static constexpr std::size_t bytes_of_slot(std::uint32_t slot) noexcept {
        return class_bytes_of_slot(slot);
    }
    static constexpr std::uint32_t slot_of_ordinal(std::uint32_t ordinal) noexcept {
        return smallest_class_slot - ordinal;
    }
    static constexpr std::uint32_t ordinal_of_slot(std::uint32_t slot) noexcept {
        return smallest_class_slot - slot;
    }
};

/// The quarter classes' rule (the file comment): b = bit_width(key | 32) - 1, then the
/// two bits below the top one.
constexpr std::uint32_t quarter_slot_by_formula(std::size_t key) noexcept {
    const auto k = static_cast<std::uint32_t>(key);
    const auto b = static_cast<std::uint32_t>(31 - std::countl_zero(k | 32u));
    return 4 * b - 20 + (k >> (b - 2));
}

/// Four classes per power of two above 64 B, 8 B steps below (the file comment).
struct quarter_classes {
    static constexpr const char* name = "quarter";
    static constexpr std::uint32_t count = 44;
    static constexpr std::uint32_t slot_by_formula(std::size_t key) noexcept {
        return quarter_slot_by_formula(key);
    }
    /// The rule for every key / 8 (every class boundary is a multiple of 8): at run time
    /// one shift and one byte load, as cheap as the seed's lzcnt, where the formula takes
    /// six instructions without BMI2 (docs/size_classes.md). 4 KiB; a program touches the
    /// 64-byte lines of the sizes it asks for. Spelled out in pool/quarter_slot_table.hpp.
    static constexpr const std::array<std::uint8_t, max_class_bytes / 8>& slot_table =
        quarter_slot_table;
    /// The canonical slot of key = size - 1 < max_class_bytes: the formula, through the
    /// table at run time.
    STA_FORCE_INLINE static constexpr std::uint32_t slot_of_key(std::size_t key) noexcept {
        if (std::is_constant_evaluated())
            return slot_by_formula(key);
        return slot_table[key >> 3];
    }
    static constexpr std::size_t bytes_of_slot(std::uint32_t slot) noexcept {
        return slot < 4 ? std::size_t{slot + 1} * 8
                        : std::size_t{(slot & 3u) + 5} << ((slot >> 2) + 2);
    }
    static constexpr std::uint32_t slot_of_ordinal(std::uint32_t ordinal) noexcept {
        return ordinal;
    }
    static constexpr std::uint32_t ordinal_of_slot(std::uint32_t slot) noexcept { return slot; }
};

/// The canonical slot of a request of `bytes` (0 <= bytes <= max_class_bytes; 0 takes
/// the smallest class).
template <class Classes>
constexpr std::uint32_t slot_of_size(std::size_t bytes) noexcept {
    return Classes::slot_of_key(bytes == 0 ? 0 : bytes - 1);
}
/// Block bytes behind a pooled request of `bytes` (0 takes the smallest class).
template <class Classes>
constexpr std::size_t bytes_of_size(std::size_t bytes) noexcept {
    return Classes::bytes_of_slot(slot_of_size<Classes>(bytes));
}
/// The alignment every block of a class has: the largest power of two dividing its
/// bytes, at most max_block_align.
constexpr std::size_t class_alignment(std::size_t class_bytes) noexcept {
    const std::size_t low = class_bytes & (~class_bytes + 1);
    return low < max_block_align ? low : max_block_align;
}

/// The request whose class is aligned to `alignment` (a power of two): `bytes` (at least
/// 1) rounded up to a multiple of it. The class of a multiple of a power of two a is a
/// multiple of a, in either set (tests/size_class_test.cpp checks every size), and a class's blocks
/// lie at multiples of it from a 64 KiB-aligned start.
constexpr std::size_t aligned_request(std::size_t bytes, std::size_t alignment) noexcept {
    return ((bytes == 0 ? 1 : bytes) + alignment - 1) & ~(alignment - 1);
}

static_assert(size_class_set<power_of_two_classes> && size_class_set<quarter_classes>);
static_assert(quarter_classes::bytes_of_slot(0) == 8 && quarter_classes::bytes_of_slot(7) == 64 &&
              quarter_classes::bytes_of_slot(8) == 80 &&
              quarter_classes::bytes_of_slot(12) == 160 &&
              quarter_classes::bytes_of_slot(43) == max_class_bytes);
static_assert(quarter_classes::count <= class_slots && slot_count <= class_slots);

} // namespace sta::detail
