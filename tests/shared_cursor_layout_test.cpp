// The shared-cursor layout (the seed's): one cursor, LIFO lists, carving — the mechanics
// of the layout, run on both dispatch policies (sta::memory_pool's behaviour on every
// variant: memory_pool_test.cpp; the span layout's mechanics: span_layout_test.cpp).
// Every test gets a pool of its own (a local tag type) and ends with the accounting
// checker, so a test that leaves the pages mis-tiled fails even if its own assertions pass.
#include "support/pool_test_support.hpp"

#include <cstddef>
#include <cstring>
#include <vector>

namespace {
using namespace sta_test;
using sta::detail::check_accounting;
using sta::detail::held_block;

template <class Variant>
class SharedCursorLayout : public ::testing::Test {};
TYPED_TEST_SUITE(SharedCursorLayout, shared_cursor_variants, variant_names);

template <class Pool>
void expect_tiled(std::vector<held_block> held) {
    EXPECT_EQ(check_accounting<Pool>(held), "");
}

// Guards the bump path: blocks taken from a fresh page must follow each other, the
// first one right after the page header.
TYPED_TEST(SharedCursorLayout, FreshBlocksAreContiguousWithinAPage) {
    FRESH_POOL;
    std::vector<held_block> held;
    auto* first = static_cast<std::byte*>(pool::alloc(32));
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(sta::detail::page_begin(pool::detail_state().pages, pool::page_bytes()), first);
    held.push_back({first, 32});
    for (int i = 1; i < 100; ++i) {
        auto* p = static_cast<std::byte*>(pool::alloc(32));
        EXPECT_EQ(p, first + 32 * i);
        held.push_back({p, 32});
    }
    expect_tiled<pool>(held);
}

// Guards the LIFO discipline: the most recently freed (warmest) block comes back first.
TYPED_TEST(SharedCursorLayout, FreedBlocksComeBackLastInFirstOut) {
    FRESH_POOL;
    void* a = pool::alloc(48);
    void* b = pool::alloc(48);
    void* c = pool::alloc(48);
    pool::free(a, 48);
    pool::free(b, 48);
    pool::free(c, 48);
    EXPECT_EQ(pool::alloc(64), c); // 48 and 64 share the 64 B class
    EXPECT_EQ(pool::alloc(33), b);
    EXPECT_EQ(pool::alloc(64), a);
    expect_tiled<pool>({{a, 64}, {b, 64}, {c, 64}});
}

// Guards the slot state machine: after a free the slot serves the list; when the
// list drains, allocation goes back to bumping right where it left off.
TYPED_TEST(SharedCursorLayout, SlotServesFreeListThenBumpsWhenDrained) {
    FRESH_POOL;
    constexpr std::uint32_t slot = 27; // 32 B
    auto* a = static_cast<std::byte*>(pool::alloc(32));
    auto* b = static_cast<std::byte*>(pool::alloc(32));
    EXPECT_FALSE(pool::detail_state().heads[slot] != nullptr);
    pool::free(a, 32);
    EXPECT_TRUE(pool::engine::slot_serves_list(slot));
    EXPECT_EQ(pool::alloc(32), a); // from the list
    auto* c = static_cast<std::byte*>(pool::alloc(32));
    EXPECT_EQ(c, b + 32); // the list drained: bump again
    auto* d = static_cast<std::byte*>(pool::alloc(32));
    EXPECT_EQ(d, c + 32);
    expect_tiled<pool>({{a, 32}, {b, 32}, {c, 32}, {d, 32}});
}

// Guards I3: the 8 B class must not leave the shared cursor 8-aligned, or the next
// 16 B block would be misaligned.
TYPED_TEST(SharedCursorLayout, EightByteClassKeepsLargerBlocksSixteenAligned) {
    FRESH_POOL;
    auto* a = static_cast<std::byte*>(pool::alloc(8));
    void* b = pool::alloc(16);
    auto* c = static_cast<std::byte*>(pool::alloc(3));
    EXPECT_TRUE(aligned(b, 16));
    EXPECT_EQ(c, a + 8); // the next block of the 8 B run
    void* d = pool::alloc(32);
    EXPECT_TRUE(aligned(d, 16));
    expect_tiled<pool>({{a, 8}, {b, 16}, {c, 3}, {d, 32}});
}

// Guards the page tail: when a page runs out, its tail is carved into the free lists
// and nothing is lost.
TYPED_TEST(SharedCursorLayout, PageExhaustionCarvesTheTailIntoFreeLists) {
    FRESH_POOL;
    pool::set_page_bytes(256 * 1024);
    std::vector<held_block> held;
    held.push_back({pool::alloc(16), 16});
    while (pool::stats().mappings < 2)
        held.push_back({pool::alloc(32768), 32768});
    const sta::pool_stats s = pool::stats();
    // The first page's tail (256 KiB - 16 - 7 x 32 KiB) now sits on the free lists.
    std::size_t free_bytes = 0;
    for (const auto& c : s.classes)
        free_bytes += c.free_blocks * c.block_bytes;
    EXPECT_EQ(free_bytes, 256 * 1024 - 16 - 7 * 32768);
    EXPECT_EQ(check_accounting<pool>(held), "");
    // Those tail blocks are served before the cursor moves.
    auto* from_tail = static_cast<std::byte*>(pool::alloc(32));
    std::byte* first_page =
        sta::detail::page_begin(pool::detail_state().pages->older, pool::page_bytes());
    EXPECT_TRUE(from_tail >= first_page && from_tail < first_page + 256 * 1024);
    held.push_back({from_tail, 32});
    EXPECT_EQ(check_accounting<pool>(held), "");
}

// Guards shrinking: it never moves and gives the tail back as power-of-two pieces.
TYPED_TEST(SharedCursorLayout, ShrinkNeverMovesAndReturnsTheTail) {
    FRESH_POOL;
    auto* p = static_cast<unsigned char*>(pool::alloc(4096));
    void* after = pool::alloc(16); // p is not the last bumped block
    std::memset(p, 0x11, 4096);
    EXPECT_EQ(pool::realloc(p, 4096, 100), p);
    for (int i = 0; i < 100; ++i)
        ASSERT_EQ(p[i], 0x11);
    // 4096 -> 128: the tail 128..4096 is 128+256+512+1024+2048 on the lists.
    const sta::pool_stats s = pool::stats();
    EXPECT_EQ(s.classes[4].free_blocks, 1u); // 128 B
    EXPECT_EQ(s.classes[8].free_blocks, 1u); // 2048 B
    EXPECT_EQ(pool::realloc(p, 100, 0), p);  // to the 8 B class
    expect_tiled<pool>({{p, 0}, {after, 16}});
}

// Guards the in-place growth BSTR-style appends rely on: the last bumped block
// grows without moving while the page has room.
TYPED_TEST(SharedCursorLayout, LastBumpedBlockGrowsInPlace) {
    FRESH_POOL;
    void* p = pool::alloc(16);
    std::memset(p, 0x22, 16);
    EXPECT_EQ(pool::realloc(p, 16, 17), p);
    EXPECT_EQ(pool::realloc(p, 17, 1000), p);
    EXPECT_EQ(pool::realloc(p, 1000, 32768), p);
    EXPECT_EQ(static_cast<unsigned char*>(p)[15], 0x22);
    expect_tiled<pool>({{p, 32768}});
}

// Guards growth that must move: the content follows, the old block is freed.
TYPED_TEST(SharedCursorLayout, GrowthThatMovesCopiesAndFreesTheOldBlock) {
    FRESH_POOL;
    auto* p = static_cast<unsigned char*>(pool::alloc(24));
    void* blocker = pool::alloc(24);
    for (int i = 0; i < 24; ++i)
        p[i] = static_cast<unsigned char>(i);
    auto* q = static_cast<unsigned char*>(pool::realloc(p, 24, 200));
    ASSERT_NE(q, nullptr);
    EXPECT_NE(q, p);
    for (int i = 0; i < 24; ++i)
        ASSERT_EQ(q[i], i);
    EXPECT_EQ(pool::alloc(32), p); // the old block went back to its list
    expect_tiled<pool>({{q, 200}, {blocker, 24}, {p, 32}});
}

// Guards compile-time and runtime sizes sharing one set of lists.
TYPED_TEST(SharedCursorLayout, CompileTimeAndRuntimeSizesShareTheLists) {
    FRESH_POOL;
    void* a = pool::template alloc<24>();
    pool::free(a, 24);
    EXPECT_EQ(pool::alloc(32), a);
    pool::template free<32>(a);
    EXPECT_EQ(pool::template alloc<17>(), a);
    expect_tiled<pool>({{a, 17}});
}

// Guards the statistics: derived figures agree with what the test did.
TYPED_TEST(SharedCursorLayout, StatsReportFreeListsAndBytesInUse) {
    FRESH_POOL;
    void* a = pool::alloc(100); // 128 B class
    void* b = pool::alloc(100);
    void* c = pool::alloc(5); // 8 B class: the rest of its run of 16 is on the list
    pool::free(a, 100);
    sta::pool_stats s = pool::stats();
    EXPECT_EQ(s.mappings, 1u);
    EXPECT_EQ(s.bytes_reserved, pool::page_bytes());
    EXPECT_EQ(s.classes[4].block_bytes, 128u);
    EXPECT_EQ(s.classes[4].free_blocks, 1u);
    EXPECT_EQ(s.classes[0].free_blocks, 15u);
    EXPECT_EQ(s.bytes_in_use, 128u + 8u);
    EXPECT_EQ(s.bytes_in_use + s.bytes_free, s.bytes_reserved);
    if (s.counters) {
        EXPECT_EQ(s.classes[4].allocations, 2u);
        EXPECT_EQ(s.classes[4].frees, 1u);
        EXPECT_EQ(s.classes[4].live_blocks, 1u);
        EXPECT_EQ(s.bytes_in_use_high_water, 128u * 2 + 8u);
    } else {
        EXPECT_GE(s.bytes_in_use_high_water, s.bytes_in_use);
    }
    pool::free(b, 100);
    pool::free(c, 5);
    EXPECT_EQ(pool::stats().bytes_in_use, 0u);
}

} // namespace
