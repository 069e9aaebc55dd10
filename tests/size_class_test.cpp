// The slot index: countl_zero(uint32_t(size - 1)), clamped for sizes above 4 GiB; the two
// class sets (the seed's powers of two, the quarter classes) and the span's reciprocal.
#include "support/class_sets.hpp"

#include "sta/detail/layout/span_types.hpp"
#include "sta/detail/pool/size_class.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

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

// ---------------------------------------------------------------------------------
// Both class sets (issue 26): the seed's powers of two and the quarter classes, through
// the size_class_set contract: slot_of_key, bytes_of_slot, the ordinals, and what the
// pools build on them (class_alignment, aligned_request, the span's reciprocal).
// ---------------------------------------------------------------------------------
using sta_test::class_entry;
using sta_test::classes_of;

/// The naive reference: the slot of the smallest class that holds `size` bytes.
template <class Classes>
std::uint32_t reference_slot(std::size_t size) {
    for (const class_entry& c : classes_of<Classes>())
        if (c.bytes >= size)
            return c.slot;
    return ~std::uint32_t{0};
}

template <class Classes>
class ClassSet : public ::testing::Test {};
struct class_set_names {
    template <class T>
    static std::string GetName(int) {
        return T::name;
    }
};
using class_sets = ::testing::Types<quarter_classes, power_of_two_classes>;
TYPED_TEST_SUITE(ClassSet, class_sets, class_set_names);

// Guards the contract's shape: the sets span 8 B .. 32 KiB with the number of classes
// they name (44 quarters, 13 powers of two), and ordinals and slots map back and forth.
TYPED_TEST(ClassSet, SpansEightBytesToThirtyTwoKiBInCountClasses) {
    using classes = TypeParam;
    const std::vector<class_entry> all = classes_of<classes>();
    ASSERT_EQ(all.size(), (std::is_same_v<classes, quarter_classes> ? 44u : 13u));
    EXPECT_EQ(all.front().bytes, min_class_bytes);
    EXPECT_EQ(all.back().bytes, max_class_bytes);
    for (std::uint32_t ordinal = 0; ordinal < classes::count; ++ordinal) {
        EXPECT_EQ(classes::ordinal_of_slot(classes::slot_of_ordinal(ordinal)), ordinal);
        EXPECT_LT(classes::slot_of_ordinal(ordinal), class_slots) << ordinal;
    }
}

// Guards an off-by-one at every class edge: a class's own bytes land in it, one byte
// more in the next class (or past the pool, for 32 KiB).
TYPED_TEST(ClassSet, BoundarySizesLandInTheClassAndTheNext) {
    using classes = TypeParam;
    const std::vector<class_entry> all = classes_of<classes>();
    for (std::size_t i = 0; i < all.size(); ++i) {
        const class_entry& c = all[i];
        EXPECT_EQ(slot_of_size<classes>(c.bytes), c.slot) << c.bytes;
        EXPECT_EQ(bytes_of_size<classes>(c.bytes), c.bytes) << c.bytes;
        EXPECT_EQ(classes::slot_of_key(c.bytes - 1), c.slot) << c.bytes;
        if (i + 1 < all.size()) {
            EXPECT_EQ(slot_of_size<classes>(c.bytes + 1), all[i + 1].slot) << c.bytes + 1;
            EXPECT_EQ(bytes_of_size<classes>(c.bytes + 1), all[i + 1].bytes) << c.bytes + 1;
        } else {
            EXPECT_FALSE(is_pooled_size(c.bytes + 1)) << c.bytes + 1;
        }
        if (i > 0) { // the size just past the class below is the first of this one
            EXPECT_EQ(slot_of_size<classes>(all[i - 1].bytes + 1), c.slot) << c.bytes;
        }
    }
    EXPECT_EQ(slot_of_size<classes>(0), all.front().slot); // size 0 takes the smallest
}

// Guards the one-lzcnt slot formula against the definition: for every key 0..32767
// (sizes 1..32768) the slot is that of the smallest class >= the size.
TYPED_TEST(ClassSet, SlotOfEveryKeyMatchesTheSmallestClassThatHoldsIt) {
    using classes = TypeParam;
    std::size_t wrong = 0, first_wrong = 0;
    for (std::size_t key = 0; key < max_class_bytes; ++key)
        if (classes::slot_of_key(key) != reference_slot<classes>(key + 1) && wrong++ == 0)
            first_wrong = key;
    EXPECT_EQ(wrong, 0u) << "first wrong key " << first_wrong << ": slot "
                         << classes::slot_of_key(first_wrong) << ", expected "
                         << reference_slot<classes>(first_wrong + 1);
}

// Guards the order the stats and the reference rely on: block bytes grow strictly with
// the ordinal, so no two classes overlap and none is skipped.
TYPED_TEST(ClassSet, BytesOfSlotIsStrictlyIncreasing) {
    const std::vector<class_entry> all = classes_of<TypeParam>();
    for (std::size_t i = 1; i < all.size(); ++i)
        EXPECT_GT(all[i].bytes, all[i - 1].bytes) << "ordinal " << i;
}

// Guards the block alignment each class promises: 8 for the 8, 24, 40 and 56 B
// classes, 16 for every multiple of 16 (the only classes there are).
TYPED_TEST(ClassSet, ClassAlignmentIsEightOrSixteenAsTheBytesAllow) {
    for (const class_entry& c : classes_of<TypeParam>()) {
        if (c.bytes % 16 == 0) {
            EXPECT_EQ(class_alignment(c.bytes), 16u) << c.bytes;
        } else {
            EXPECT_TRUE(c.bytes == 8 || c.bytes == 24 || c.bytes == 40 || c.bytes == 56)
                << c.bytes << " is neither a multiple of 16 nor one of the small classes";
            EXPECT_EQ(class_alignment(c.bytes), 8u) << c.bytes;
        }
        EXPECT_EQ(c.bytes % class_alignment(c.bytes), 0u) << c.bytes;
    }
    EXPECT_EQ(class_alignment(24), 8u);
    EXPECT_EQ(class_alignment(40), 8u);
    EXPECT_EQ(class_alignment(56), 8u);
    EXPECT_EQ(class_alignment(8), 8u);
    EXPECT_EQ(class_alignment(48), 16u);
    EXPECT_EQ(class_alignment(32768), 16u);
}

// Guards memalign's pooled path: for every alignment 8..4096 and size up to 32 KiB,
// the request rounded up to the alignment takes a class that is a multiple of it.
TYPED_TEST(ClassSet, AlignedRequestsTakeAClassThatIsAMultipleOfTheAlignment) {
    using classes = TypeParam;
    for (std::size_t a = 8; a <= 4096; a *= 2) {
        EXPECT_EQ(aligned_request(0, a), a);
        std::size_t wrong = 0, first_wrong = 0;
        for (std::size_t n = 1; n <= max_class_bytes; ++n) {
            const std::size_t request = aligned_request(n, a);
            if (request > max_class_bytes)
                break;
            const std::size_t block = bytes_of_size<classes>(request);
            const bool ok =
                request % a == 0 && request >= n && request < n + a && block % a == 0 && block >= n;
            if (!ok && wrong++ == 0)
                first_wrong = n;
        }
        EXPECT_EQ(wrong, 0u) << "alignment " << a << ", first wrong size " << first_wrong
                             << ": class "
                             << bytes_of_size<classes>(aligned_request(first_wrong, a));
    }
}

// Guards the block index of a span (S2): for every class and every offset in 64 KiB,
// offset * reciprocal_of(bytes) >> 32 is offset / bytes, and its low 32 bits are below
// the reciprocal exactly on block boundaries (the release checks' "is a block start").
TYPED_TEST(ClassSet, ReciprocalIsExactForEveryOffsetOfASpan) {
    for (const class_entry& c : classes_of<TypeParam>()) {
        const std::uint32_t recip = reciprocal_of(c.bytes);
        std::size_t wrong_index = 0, wrong_boundary = 0, first_wrong = 0;
        for (std::uint64_t offset = 0; offset < span_bytes; ++offset) {
            const std::uint64_t product = offset * recip;
            const bool index_ok = (product >> 32) == offset / c.bytes;
            const bool boundary_ok =
                (static_cast<std::uint32_t>(product) < recip) == (offset % c.bytes == 0);
            if ((!index_ok || !boundary_ok) && wrong_index + wrong_boundary == 0)
                first_wrong = offset;
            wrong_index += index_ok ? 0 : 1;
            wrong_boundary += boundary_ok ? 0 : 1;
        }
        EXPECT_EQ(wrong_index, 0u) << c.bytes << " B: first wrong offset " << first_wrong;
        EXPECT_EQ(wrong_boundary, 0u) << c.bytes << " B: first wrong offset " << first_wrong;
    }
}

// Guards the tail of a span whose class does not divide 64 KiB (S2): exact_block_index
// names each of its blocks, and the block boundary at the limit has index capacity, one
// past the blocks (its bit, set, refuses it in the release checks).
TYPED_TEST(ClassSet, ExactBlockIndexFindsEveryBlockAndRefusesTheTail) {
    constexpr std::uintptr_t base = std::uintptr_t{1} << 30; // 64 KiB-aligned, never read
    for (const class_entry& c : classes_of<TypeParam>()) {
        span sp;
        sp.recip = reciprocal_of(c.bytes);
        sp.capacity = static_cast<std::uint32_t>(span_bytes / c.bytes);
        sp.block_bytes = static_cast<std::uint32_t>(c.bytes);
        std::size_t blocks = 0, wrong = 0, first_wrong = 0;
        for (std::size_t offset = 0; offset < span_bytes; ++offset) {
            const void* p = reinterpret_cast<const void*>(base + offset);
            const std::uint32_t i = exact_block_index(&sp, p);
            const bool is_block = i < sp.capacity;
            const bool expected = offset % c.bytes == 0 && offset / c.bytes < sp.capacity;
            if (is_block != expected || (is_block && i != offset / c.bytes)) {
                if (wrong++ == 0)
                    first_wrong = offset;
            }
            blocks += is_block ? 1 : 0;
        }
        EXPECT_EQ(wrong, 0u) << c.bytes << " B: first wrong offset " << first_wrong;
        EXPECT_EQ(blocks, sp.capacity) << c.bytes;
        const std::size_t limit = std::size_t{sp.capacity} * c.bytes;
        if (limit < span_bytes) { // the tail's first byte is a boundary, and no block
            const std::uint32_t i =
                exact_block_index(&sp, reinterpret_cast<const void*>(base + limit));
            EXPECT_EQ(i, sp.capacity) << c.bytes;
        }
    }
}

// Guards the quarter classes' promise (the file comment): above 64 B no size is
// rounded up by more than 25 %, and at or below 64 B by less than one 8 B step.
TEST(QuarterClasses, NoClassRoundsASizeUpByMoreThanAQuarterAbove64Bytes) {
    for (std::size_t n = 1; n <= max_class_bytes; ++n) {
        const std::size_t block = bytes_of_size<quarter_classes>(n);
        ASSERT_GE(block, n);
        if (n <= 64)
            ASSERT_LT(block - n, 8u) << n;
        else // block < 1.25 n; the worst are the sizes just past a power of two
            ASSERT_LT(4 * block, 5 * n) << n << " B takes a " << block << " B block";
    }
    EXPECT_EQ(bytes_of_size<quarter_classes>(65), 80u);
    EXPECT_EQ(bytes_of_size<quarter_classes>(16385), 20480u);
}

// Guards the run-time rule against the formula it stands for: the table spelled out in
// pool/quarter_slot_table.hpp gives the formula's slot for every key 0..32767 (sizes
// 1..32768).
TEST(QuarterClasses, TableGivesTheFormulasSlotForEveryKey) {
    std::size_t wrong = 0, first_wrong = 0;
    for (std::size_t key = 0; key < max_class_bytes; ++key)
        if (quarter_classes::slot_table[key >> 3] != quarter_slot_by_formula(key) && wrong++ == 0)
            first_wrong = key;
    EXPECT_EQ(wrong, 0u) << "first wrong key " << first_wrong << ": table "
                         << int{quarter_classes::slot_table[first_wrong >> 3]} << ", formula "
                         << quarter_slot_by_formula(first_wrong);
}

// Guards the seed's mode against the quarters leaking into it: power_of_two_classes
// is every power of two 8..32768 and nothing else, in the seed's slots 29..17.
TEST(PowerOfTwoClasses, AreThePowersOfTwoInTheSeedsSlots) {
    const std::vector<class_entry> all = classes_of<power_of_two_classes>();
    std::size_t bytes = 8;
    std::uint32_t slot = smallest_class_slot;
    for (const class_entry& c : all) {
        EXPECT_EQ(c.bytes, bytes);
        EXPECT_EQ(c.slot, slot);
        bytes *= 2;
        --slot;
    }
    EXPECT_EQ(bytes, 2 * max_class_bytes);
}

} // namespace
