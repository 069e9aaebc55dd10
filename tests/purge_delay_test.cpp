// The purge delay's rule (include/sta/detail/pool/purge_delay.hpp), on its own: refaults
// in batches stretch the wait up to its cap, a stray one does not, a refault after the
// cap is none, a quiet stretch halves it back towards the base, a segment mapped after an
// unmap is a refault, and never stays never. One test per edge. The span layout's use of
// it (a purged span taken again, a segment unmapped and mapped) is span_life_test's.
#include "sta/detail/pool/purge_delay.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace {
using sta::detail::purge_delay;
using sta::detail::purge_never;

constexpr std::uint32_t base = 500;
constexpr std::uint32_t cap = base * purge_delay::max_stretch;

/// `count` refaults of weight 1 at `now`, each idle for `idle` ms.
void refaults(purge_delay& d, std::uint32_t count, std::uint32_t now, std::uint32_t idle) {
    for (std::uint32_t i = 0; i < count; ++i)
        d.note_refault(now, idle, 1);
}

// Guards "a stray refault does not stretch": fewer than a batch leave the base.
TEST(PurgeDelay, FewerRefaultsThanABatchKeepTheBase) {
    purge_delay d(base);
    refaults(d, purge_delay::refaults_to_stretch - 1, 1000, base + 100);
    EXPECT_EQ(d.wait_ms, base);
}

// Guards the stretch: each batch doubles the wait, and the cap bounds it.
TEST(PurgeDelay, EachBatchOfRefaultsDoublesTheWaitUpToTheCap) {
    purge_delay d(base);
    refaults(d, purge_delay::refaults_to_stretch, 1000, base + 100);
    EXPECT_EQ(d.wait_ms, 2 * base);
    refaults(d, purge_delay::refaults_to_stretch, 1000, base + 100);
    EXPECT_EQ(d.wait_ms, 4 * base);
    refaults(d, 10 * purge_delay::refaults_to_stretch, 1000, base + 100);
    EXPECT_EQ(d.wait_ms, cap);
}

// Guards "within the cap": memory taken again after the longest wait would have given it
// back anyway, so it counts for nothing.
TEST(PurgeDelay, MemoryTakenAgainAfterTheCapIsNoRefault) {
    purge_delay d(base);
    refaults(d, 4 * purge_delay::refaults_to_stretch, 20'000, cap);
    EXPECT_EQ(d.wait_ms, base);
}

// Guards the way back: a stretched wait halves at a purge once no refault came for
// stretch_hold_waits waits, not before, and never goes below the base.
TEST(PurgeDelay, AQuietStretchHalvesBackToTheBase) {
    purge_delay d(base);
    refaults(d, 2 * purge_delay::refaults_to_stretch, 1000, base + 100); // 4 x base at 1000
    ASSERT_EQ(d.wait_ms, 4 * base);
    const std::uint32_t hold = 4 * base * purge_delay::stretch_hold_waits;
    d.note_purge(1000 + hold - 1);
    EXPECT_EQ(d.wait_ms, 4 * base) << "halved before the hold passed";
    d.note_purge(1000 + hold);
    EXPECT_EQ(d.wait_ms, 2 * base);
    d.note_purge(1000 + hold + 2 * base * purge_delay::stretch_hold_waits);
    EXPECT_EQ(d.wait_ms, base);
    d.note_purge(1'000'000);
    EXPECT_EQ(d.wait_ms, base);
}

// Guards segments: one mapped after an unmap within the cap is a batch of refaults; one
// mapped with no unmap before it (the heap grows) is none, and each unmap pairs with one
// mapping.
TEST(PurgeDelay, ASegmentMappedAfterAnUnmapIsARefault) {
    purge_delay d(base);
    d.note_mapped(100);
    EXPECT_EQ(d.wait_ms, base) << "a heap that grows is no refault";
    d.note_unmapped(1000);
    d.note_mapped(1200);
    EXPECT_EQ(d.wait_ms, 2 * base);
    d.note_mapped(1300);
    EXPECT_EQ(d.wait_ms, 2 * base) << "the unmap was paired already";
    d.note_unmapped(2000);
    d.note_mapped(2000 + cap);
    EXPECT_EQ(d.wait_ms, 2 * base) << "mapped after the cap: no refault";
}

// Guards the options: never stays never whatever happens; a zero delay stays zero; a new
// base starts the wait over.
TEST(PurgeDelay, NeverAndZeroStayAndANewBaseStartsOver) {
    purge_delay never(purge_never);
    refaults(never, 10 * purge_delay::refaults_to_stretch, 1000, 10);
    never.note_unmapped(1000);
    never.note_mapped(1001);
    never.note_purge(100'000);
    EXPECT_TRUE(never.never());
    purge_delay zero(0);
    refaults(zero, 10 * purge_delay::refaults_to_stretch, 1000, 0);
    EXPECT_EQ(zero.wait_ms, 0u);
    purge_delay d(base);
    refaults(d, purge_delay::refaults_to_stretch, 1000, base + 100);
    ASSERT_EQ(d.wait_ms, 2 * base);
    d.set_base(100);
    EXPECT_EQ(d.wait_ms, 100u);
    EXPECT_EQ(d.base_ms, 100u);
}

} // namespace
