// Guards the big tier's retained mappings (detail/heaps/retained_mappings.hpp, RM1-RM3): freed
// pages are handed out again — the front of the smallest range that fits, or the
// largest grown by mremap when it lacks little — with their bytes; ranges that touch are joined; a
// block grows in place into kept pages that follow it; the byte limit (the floor, or half of the
// big bytes in use) unmaps the oldest, the count limit the smallest. Linux only (the drop-in
// malloc's tier; part of a mapping is unmapped).
#include "sta/detail/heaps/retained_mappings.hpp"

#include "support/smaps.hpp"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

namespace {

using sta::detail::os_page_bytes;
using sta::detail::retained_mappings;
constexpr std::size_t page = os_page_bytes;

/// Is [p, p + pages) mapped? (mincore fails with ENOMEM on an unmapped range.)
bool mapped(const std::byte* p, std::size_t pages) {
    std::vector<unsigned char> residency(pages);
    return ::mincore(const_cast<std::byte*>(p), pages * page, residency.data()) == 0;
}
bool filled(const std::byte* p, std::size_t bytes, unsigned char fill) {
    for (std::size_t i = 0; i < bytes; ++i)
        if (p[i] != std::byte{fill})
            return false;
    return true;
}
/// RM2: held is the sum of the kept lengths.
std::size_t sum_of_lengths(const retained_mappings& r) {
    std::size_t sum = 0;
    for (std::size_t i = 0; i < r.count; ++i)
        sum += r.length[i];
    return sum;
}

/// Sets the family-wide limit for one test.
struct limit_scope {
    std::size_t saved = sta::detail::retained_limit_bytes.load();
    explicit limit_scope(std::size_t bytes) { sta::detail::retained_limit_bytes.store(bytes); }
    ~limit_scope() { sta::detail::retained_limit_bytes.store(saved); }
};

} // namespace

/// Each test's pages: ranges of one reservation with an unused page between any two,
/// so that no two of them touch (keep() would join them, RM1) unless a test cuts one.
class RetainedMappings : public ::testing::Test {
  protected:
    static constexpr std::size_t reserved_pages = 256;
    std::byte* const base =
        static_cast<std::byte*>(sta::detail::os_map_pages(reserved_pages * page));
    std::size_t next = 0;
    /// The test's state (a pool state's, in the library): what it keeps counts in the
    /// process's total (RM2) until the test ends.
    retained_mappings r;

    ~RetainedMappings() override {
        r.release_all();
        sta::detail::os_unmap_pages(base, reserved_pages * page);
    }

    std::byte* map(std::size_t pages, unsigned char fill) {
        EXPECT_NE(base, nullptr);
        EXPECT_LE(next + pages, reserved_pages);
        std::byte* const p = base + next * page;
        next += pages + 1;
        std::memset(p, fill, pages * page);
        return p;
    }
    /// map(pages, fill), then kept by r.
    std::byte* kept(retained_mappings& r, std::size_t pages, unsigned char fill) {
        std::byte* const p = map(pages, fill);
        EXPECT_TRUE(r.keep(p, pages * page, 0));
        return p;
    }
};

TEST_F(RetainedMappings, NothingKeptTakesNothing) {
    EXPECT_EQ(r.take(3 * page), nullptr);
    EXPECT_FALSE(r.last_taken);
}

TEST_F(RetainedMappings, AKeptMappingComesBackWithItsBytes) {
    std::byte* p = map(3, 0x5a);
    ASSERT_TRUE(r.keep(p, 3 * page, 0));
    EXPECT_EQ(r.held, 3 * page);
    EXPECT_EQ(r.take(3 * page), p);
    EXPECT_TRUE(r.last_taken); // not zero: calloc must clear it
    EXPECT_TRUE(filled(p, 3 * page, 0x5a));
    EXPECT_EQ(r.count, 0u);
    EXPECT_EQ(r.held, 0u);
    sta::detail::os_unmap_pages(p, 3 * page);
}

TEST_F(RetainedMappings, TheFrontOfTheSmallestThatFitsIsTakenAndTheRestStaysKept) {
    std::byte* eight = kept(r, 8, 1);
    std::byte* four = kept(r, 4, 2);
    std::byte* sixteen = kept(r, 16, 3);
    EXPECT_EQ(r.take(3 * page), four);
    EXPECT_TRUE(filled(four, 3 * page, 2));
    EXPECT_EQ(r.count, 3u);
    EXPECT_EQ(r.start[1], four + 3 * page); // RM3: the cut range keeps its place
    EXPECT_EQ(r.length[1], page);
    EXPECT_EQ(r.held, 25 * page);
    EXPECT_EQ(r.held, sum_of_lengths(r));
    EXPECT_EQ(r.take(page), four + 3 * page); // an exact fit leaves nothing
    EXPECT_EQ(r.count, 2u);
    EXPECT_EQ(r.start[0], eight);
    EXPECT_EQ(r.start[1], sixteen);
    sta::detail::os_unmap_pages(four, 4 * page);
    r.release_all();
    EXPECT_FALSE(mapped(eight, 8));
    EXPECT_FALSE(mapped(sixteen, 16));
    EXPECT_EQ(r.count, 0u);
    EXPECT_EQ(r.held, 0u);
}

TEST_F(RetainedMappings, RangesThatTouchAreJoined) {
    std::byte* p = map(6, 4);
    ASSERT_TRUE(r.keep(p + 2 * page, 2 * page, 0)); // the middle
    ASSERT_TRUE(r.keep(p, 2 * page, 0));            // before it
    EXPECT_EQ(r.count, 1u);
    EXPECT_EQ(r.start[0], p);
    EXPECT_EQ(r.length[0], 4 * page);
    ASSERT_TRUE(r.keep(p + 4 * page, 2 * page, 0)); // after it
    EXPECT_EQ(r.count, 1u);
    EXPECT_EQ(r.length[0], 6 * page);
    EXPECT_EQ(r.held, 6 * page);
    std::byte* q = map(2, 5);
    std::byte* s = map(2, 6);
    ASSERT_TRUE(r.keep(q, 2 * page, 0));
    ASSERT_TRUE(r.keep(s, 2 * page, 0));
    EXPECT_EQ(r.held, sum_of_lengths(r));
    r.release_all();
    EXPECT_FALSE(mapped(p, 6));
}

TEST_F(RetainedMappings, ABlockGrowsInPlaceIntoTheKeptPagesAfterIt) {
    std::byte* p = map(10, 7);
    ASSERT_TRUE(r.keep(p + 2 * page, 8 * page, 0));        // the block keeps [p, p + 2 pages)
    EXPECT_FALSE(r.grow_in_place(p, 2 * page, 11 * page)); // 9 pages more: too few
    EXPECT_FALSE(r.grow_in_place(p, page, 3 * page));      // no kept range follows [p, p + page)
    EXPECT_TRUE(r.grow_in_place(p, 2 * page, 5 * page));
    EXPECT_EQ(r.start[0], p + 5 * page);
    EXPECT_EQ(r.held, 5 * page);
    EXPECT_TRUE(r.grow_in_place(p, 5 * page, 10 * page)); // all of it
    EXPECT_EQ(r.count, 0u);
    EXPECT_EQ(r.held, 0u);
    EXPECT_TRUE(filled(p, 10 * page, 7));
    sta::detail::os_unmap_pages(p, 10 * page);
}

// A request a little above every kept range (at most an eighth of the largest's length
// more) grows the largest by mremap: its kept bytes move along, the pages added are zero.
TEST_F(RetainedMappings, ARequestJustAboveEveryKeptOneGrowsTheLargest) {
    std::byte* sixteen = map(16, 7);
    std::byte* one = map(1, 8);
    ASSERT_TRUE(r.keep(sixteen, 16 * page, 0));
    ASSERT_TRUE(r.keep(one, page, 0));
    auto* grown = static_cast<std::byte*>(r.take(18 * page)); // 2 pages more: 16 / 8
    ASSERT_NE(grown, nullptr);
    EXPECT_TRUE(r.last_taken);
    EXPECT_TRUE(filled(grown, 16 * page, 7)); // the kept bytes moved along
    EXPECT_TRUE(filled(grown + 16 * page, 2 * page, 0));
    std::memset(grown, 9, 18 * page); // all of it is usable
    EXPECT_EQ(r.count, 1u);
    EXPECT_EQ(r.start[0], one);
    sta::detail::os_unmap_pages(grown, 18 * page);
    r.release_all();
}

// A request far above every kept range takes nothing: a fresh mapping (huge pages) costs
// fewer faults than the pages mremap would add one by one; what is kept stays kept.
TEST_F(RetainedMappings, ARequestFarAboveEveryKeptOneTakesNothing) {
    std::byte* sixteen = map(16, 7);
    ASSERT_TRUE(r.keep(sixteen, 16 * page, 0));
    EXPECT_EQ(r.take(19 * page), nullptr); // 3 pages more: above 16 / 8
    EXPECT_FALSE(r.last_taken);
    EXPECT_EQ(r.count, 1u);
    EXPECT_EQ(r.start[0], sixteen);
    EXPECT_EQ(r.length[0], 16 * page);
    EXPECT_TRUE(filled(sixteen, 16 * page, 7));
    r.release_all();
}

// Ranges joined by keep() may be two kernel mappings, which mremap refuses to resize
// as one: os_remap_pages then moves them by hand.
TEST_F(RetainedMappings, PagesOfTwoKernelMappingsAreStillRemapped) {
    std::byte* const p = map(4, 6);
    // A flag on the second half splits the kernel's mapping in two.
    ASSERT_EQ(::madvise(p + 2 * page, 2 * page, MADV_DONTFORK), 0);
    errno = 0;
    EXPECT_EQ(::mremap(p, 4 * page, 8 * page, MREMAP_MAYMOVE), MAP_FAILED);
    EXPECT_EQ(errno, EFAULT); // what the fallback is for
    auto* const q = static_cast<std::byte*>(sta::detail::os_remap_pages(p, 4 * page, 8 * page));
    ASSERT_NE(q, nullptr);
    EXPECT_TRUE(filled(q, 4 * page, 6));
    EXPECT_TRUE(filled(q + 4 * page, 4 * page, 0));
    EXPECT_FALSE(mapped(p, 4)); // the old pages are gone
    sta::detail::os_unmap_pages(q, 8 * page);
}

TEST_F(RetainedMappings, OverTheByteLimitTheOldestIsUnmapped) {
    const limit_scope limit(10 * page);
    std::byte* a = kept(r, 4, 1);
    std::byte* b = kept(r, 4, 2);
    std::byte* c = map(4, 3);
    ASSERT_TRUE(r.keep(c, 4 * page, 0)); // 12 pages > 10: a goes
    EXPECT_FALSE(mapped(a, 4));
    EXPECT_EQ(r.count, 2u);
    EXPECT_EQ(r.held, 8 * page);
    EXPECT_LE(r.held, 10 * page);
    EXPECT_EQ(r.start[0], b);
    r.release_all();
}

TEST_F(RetainedMappings, AMappingAboveTheLimitIsNotKept) {
    const limit_scope limit(4 * page);
    std::byte* big = map(5, 1);
    EXPECT_FALSE(r.keep(big, 5 * page, 0));
    EXPECT_EQ(r.count, 0u);
    EXPECT_TRUE(mapped(big, 5)); // the caller's to unmap
    sta::detail::os_unmap_pages(big, 5 * page);
}

// However many big bytes are in use: 0 turns keeping off.
TEST_F(RetainedMappings, ALimitOfZeroKeepsNothing) {
    const limit_scope limit(0);
    sta::detail::os_memory.big_taken(64 * page);
    EXPECT_EQ(sta::detail::retained_limit_now(), 0u);
    std::byte* p = map(1, 1);
    EXPECT_FALSE(r.keep(p, page, 0));
    sta::detail::os_memory.big_freed(64 * page);
    sta::detail::os_unmap_pages(p, page);
}

// A fragment that the front of a range taken left behind serves fewer requests than any
// other range: when every entry is taken, the smallest range goes, whatever its age.
TEST_F(RetainedMappings, OverTheCountLimitTheSmallestIsUnmapped) {
    std::vector<std::byte*> kept;
    std::byte* smallest = nullptr;
    for (std::size_t i = 0; i < retained_mappings::max_count; ++i) {
        const std::size_t pages = i == 3 ? 1 : 2; // the fourth is the smallest
        kept.push_back(map(pages, static_cast<unsigned char>(i)));
        ASSERT_TRUE(r.keep(kept.back(), pages * page, 0));
        if (pages == 1)
            smallest = kept.back();
    }
    std::byte* const newest = map(2, 0xee);
    ASSERT_TRUE(r.keep(newest, 2 * page, 0));
    EXPECT_EQ(r.count, retained_mappings::max_count);
    EXPECT_FALSE(mapped(smallest, 1));
    EXPECT_TRUE(mapped(kept[0], 2)); // the oldest stays
    EXPECT_EQ(r.start[0], kept[0]);
    EXPECT_EQ(r.start[r.count - 1], newest);
    EXPECT_EQ(r.held, sum_of_lengths(r));
    r.release_all();
    for (std::byte* p : kept) {
        if (p != smallest) {
            EXPECT_FALSE(mapped(p, 2));
        }
    }
}

// A new range that touches none kept, smaller than every kept one when all entries are
// taken, is not kept: the caller unmaps it, and what is kept stays as it was.
TEST_F(RetainedMappings, OverTheCountLimitANewSmallestRangeIsNotKept) {
    std::vector<std::byte*> kept;
    for (std::size_t i = 0; i < retained_mappings::max_count; ++i) {
        kept.push_back(map(2, static_cast<unsigned char>(i)));
        ASSERT_TRUE(r.keep(kept.back(), 2 * page, 0));
    }
    const std::size_t held = r.held;
    const std::size_t total = sta::detail::retained_total_bytes.load();
    std::byte* const one = map(1, 0xee);
    EXPECT_FALSE(r.keep(one, page, 0));
    EXPECT_TRUE(mapped(one, 1)); // the caller's to unmap
    EXPECT_EQ(r.count, retained_mappings::max_count);
    EXPECT_EQ(r.held, held);
    EXPECT_EQ(sta::detail::retained_total_bytes.load(), total);
    for (std::size_t i = 0; i < kept.size(); ++i)
        EXPECT_EQ(r.start[i], kept[i]);
    sta::detail::os_unmap_pages(one, page);
    r.release_all();
}

// While big blocks are in use, the limit is half of their bytes when that is more than
// the floor (retained_limit_bytes): a range the floor alone would refuse is kept, and
// once the big blocks are gone the floor holds again.
TEST_F(RetainedMappings, TheLimitGrowsToHalfOfTheBigBytesInUse) {
    const std::size_t before = sta::detail::retained_total_bytes.load();
    const limit_scope limit(before + 4 * page);
    std::byte* a = map(6, 1);
    EXPECT_FALSE(r.keep(a, 6 * page, 0));                      // above the floor
    sta::detail::os_memory.big_taken(2 * (before + 8 * page)); // half: before + 8 pages
    EXPECT_EQ(sta::detail::retained_limit_now(), before + 8 * page);
    EXPECT_TRUE(r.keep(a, 6 * page, 0));
    sta::detail::os_memory.big_freed(2 * (before + 8 * page));
    EXPECT_EQ(sta::detail::retained_limit_now(), before + 4 * page);
    std::byte* b = map(1, 2);
    EXPECT_TRUE(r.keep(b, page, 0)); // a goes: the floor holds again
    EXPECT_FALSE(mapped(a, 6));
    EXPECT_EQ(r.count, 1u);
    EXPECT_EQ(r.start[0], b);
    r.release_all();
}

// Guards the purge delay of kept ranges: a range kept for the delay is unmapped, a newer
// one stays until its own delay has passed.
TEST_F(RetainedMappings, ARangeKeptForTheDelayIsUnmapped) {
    std::byte* older = map(2, 1);
    ASSERT_TRUE(r.keep(older, 2 * page, 1000));
    std::byte* newer = map(2, 2);
    ASSERT_TRUE(r.keep(newer, 2 * page, 1080));
    EXPECT_EQ(r.release_due(1099, 100), 0u);
    EXPECT_EQ(r.release_due(1100, 100), 2 * page);
    EXPECT_FALSE(mapped(older, 2));
    EXPECT_TRUE(mapped(newer, 2));
    EXPECT_EQ(r.count, 1u);
    EXPECT_EQ(r.release_due(1179, 100), 0u);
    EXPECT_EQ(r.release_due(1180, 100), 2 * page);
    EXPECT_FALSE(mapped(newer, 2));
}

// Guards the process's limit (RM2): what all states keep together stays within it. A
// state makes room by unmapping its own oldest ranges, and keeps nothing when the others
// hold the limit.
TEST_F(RetainedMappings, TheLimitHoldsForAllStatesTogether) {
    const std::size_t before = sta::detail::retained_total_bytes.load();
    const limit_scope limit(before + 6 * page);
    retained_mappings other;
    std::byte* a = map(4, 1);
    ASSERT_TRUE(other.keep(a, 4 * page, 0));
    std::byte* b = kept(r, 2, 2); // at the limit
    EXPECT_EQ(sta::detail::retained_total_bytes.load(), before + 6 * page);
    std::byte* c = map(1, 3);
    EXPECT_TRUE(r.keep(c, page, 0)); // b goes to make room
    EXPECT_FALSE(mapped(b, 2));
    EXPECT_TRUE(mapped(a, 4));
    EXPECT_EQ(sta::detail::retained_total_bytes.load(), before + 5 * page);
    std::byte* d = map(3, 4);
    EXPECT_FALSE(r.keep(d, 3 * page, 0)); // c goes too, and still 4 + 3 > 6
    EXPECT_EQ(r.count, 0u);
    EXPECT_EQ(sta::detail::retained_total_bytes.load(), before + 4 * page);
    EXPECT_TRUE(mapped(d, 3)); // the caller's to unmap
    sta::detail::os_unmap_pages(d, 3 * page);
    other.release_all();
    EXPECT_EQ(sta::detail::retained_total_bytes.load(), before);
}

#if defined(__linux__)
// A big block's mapping of 2 MiB or more, with huge pages, is aligned to 2 MiB and advised
// them (os_map_big_pages); below 2 MiB, or without, it is a plain mapping.
TEST(BigMappings, TwoMiBOrMoreWithHugePagesAreAlignedAndAdvised) {
    using sta::detail::os_huge_page_bytes;
    const std::size_t big = 2 * os_huge_page_bytes + 4096;
    void* const huge = sta::detail::os_map_big_pages(big, true);
    ASSERT_NE(huge, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(huge) % os_huge_page_bytes, 0u);
    EXPECT_TRUE(sta_test::advised_huge(huge));
    EXPECT_TRUE(sta_test::advised_huge(static_cast<std::byte*>(huge) + big - 1)); // one mapping
    void* const plain = sta::detail::os_map_big_pages(big, false);
    ASSERT_NE(plain, nullptr);
    EXPECT_FALSE(sta_test::advised_huge(plain));
    void* const small = sta::detail::os_map_big_pages(os_huge_page_bytes - 4096, true);
    ASSERT_NE(small, nullptr);
    EXPECT_FALSE(sta_test::advised_huge(small));
    sta::detail::os_unmap_pages(huge, big);
    sta::detail::os_unmap_pages(plain, big);
    sta::detail::os_unmap_pages(small, os_huge_page_bytes - 4096);
}
#endif
