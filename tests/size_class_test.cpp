// The slot index: countl_zero(uint32_t(size - 1)), clamped for sizes above 4 GiB.
#include "sta/detail/pool/size_class.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>

namespace {
using namespace sta::detail;

// Guards against an off-by-one at a class boundary: every size 0..70000 must land
// in the slot whose class is the smallest power of two >= size (8 at least).
TEST(SizeClass, EverySizeUpTo70000LandsInItsSlot) {
    EXPECT_EQ(slot_of(0), 0u);
    for (std::size_t size = 1; size <= 70000; ++size) {
        const std::uint32_t slot = slot_of(size);
        ASSERT_EQ(slot, static_cast<std::uint32_t>(std::countl_zero(std::uint32_t(size - 1))))
            << size;
        if (size <= 32768) {
            ASSERT_TRUE(is_pooled_slot(slot)) << size;
            const std::size_t block = class_bytes_of_slot(slot);
            ASSERT_GE(block, size);
            ASSERT_EQ(block, std::max<std::size_t>(8, std::bit_ceil(size))) << size;
            ASSERT_EQ(block, class_bytes_of_size(size));
        } else {
            ASSERT_FALSE(is_pooled_slot(slot)) << size;
            ASSERT_GE(slot, 1u);
        }
    }
}

// The table layout the seed describes: 8 B in slots 29..32, 32 KiB in slot 17.
TEST(SizeClass, SeedTableLayout) {
    for (std::size_t size = 1; size <= 8; ++size)
        EXPECT_EQ(canonical_slot(slot_of(size)), 29u);
    EXPECT_EQ(slot_of(1), 32u);
    EXPECT_EQ(slot_of(9), 28u);
    EXPECT_EQ(slot_of(16384), 18u);
    EXPECT_EQ(slot_of(32768), 17u);
    EXPECT_EQ(slot_of(32769), 16u);
}

// Guards the 32-bit truncation: a size above 4 GiB must never alias a small class.
TEST(SizeClass, HugeSizesNeverReachASmallSlot) {
    const std::size_t huge[] = {(std::size_t{1} << 31) + 1,
                                std::size_t{1} << 32,
                                (std::size_t{1} << 32) + 1,
                                (std::size_t{1} << 32) + 8,
                                (std::size_t{1} << 32) + 64,
                                (std::size_t{1} << 40) + 16,
                                std::numeric_limits<std::size_t>::max(),
                                std::numeric_limits<std::size_t>::max() - 7};
    for (std::size_t size : huge) {
        EXPECT_EQ(slot_of(size), 0u) << size;
        EXPECT_FALSE(is_pooled_size(size)) << size;
    }
    EXPECT_EQ(slot_of(std::size_t{1} << 31), 1u);
}

} // namespace
