// sta::memory_pool: one named test per behaviour, each run on every variant
// (dispatch x layout); the mechanics of each layout have a file of their own
// (shared_cursor_layout_test.cpp, span_layout_test.cpp).
// Every test gets a pool of its own (a local tag type) and ends with the accounting
// checker, so a test that leaves the pages mis-tiled fails even if its own
// assertions pass.
#include "support/pool_test_support.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace {
using namespace sta_test;
using sta::detail::check_accounting;
using sta::detail::held_block;

template <class Variant>
class MemoryPool : public ::testing::Test {};
TYPED_TEST_SUITE(MemoryPool, pool_variants, variant_names);

template <class Pool>
void expect_tiled(std::vector<held_block> held) {
    EXPECT_EQ(check_accounting<Pool>(held), "");
}

// Guards the guarantee: every block aligned to its class's alignment (the largest power of
// two dividing it, at most 16: detail::class_alignment), bumped or recycled.
TYPED_TEST(MemoryPool, EveryClassIsAlignedAsItsClassPromises) {
    FRESH_POOL;
    std::vector<held_block> held;
    for (int round = 0; round < 3; ++round) {
        for (std::size_t bytes = 1; bytes <= 32768; bytes = bytes * 3 / 2 + 1) {
            void* p = pool::alloc(bytes);
            ASSERT_NE(p, nullptr);
            EXPECT_TRUE(aligned(p, guaranteed_alignment<typename pool::classes>(bytes))) << bytes;
            if (round == 1)
                pool::free(p, bytes);
            else
                held.push_back({p, bytes});
        }
    }
    expect_tiled<pool>(held);
}

// Guards malloc(0) semantics: a unique, freeable block, served through slot 0.
TYPED_TEST(MemoryPool, ZeroSizeGivesUniqueBlocks) {
    FRESH_POOL;
    void* a = pool::alloc(0);
    void* b = pool::alloc(0);
    void* c = pool::template alloc<0>();
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_NE(a, b);
    EXPECT_NE(c, a);
    EXPECT_NE(c, b);
    expect_tiled<pool>({{a, 0}, {b, 0}, {c, 0}});
    pool::free(a, 0);
    pool::template free<0>(b);
    pool::free(c, 0);
    expect_tiled<pool>({});
}

// Guards free(nullptr, n): it must not push a null block on a list.
TYPED_TEST(MemoryPool, FreeOfNullDoesNothing) {
    FRESH_POOL;
    void* a = pool::alloc(64);
    const auto slot = sta::detail::slot_of_size<typename pool::classes>(64);
    const void* const list = pool::detail_state().heads[slot];
    pool::free(nullptr, 64);
    pool::template free<64>(nullptr);
    pool::free(nullptr, 0);
    pool::free(nullptr, 100000);
    EXPECT_EQ(pool::detail_state().heads[slot], list); // no block went on the class's list
    void* b = pool::alloc(64);
    EXPECT_NE(b, nullptr);
    expect_tiled<pool>({{a, 64}, {b, 64}});
}

// Guards the tier boundary: 32 KiB is pooled, one byte more is not.
TYPED_TEST(MemoryPool, SizesAbove32KiBLeaveThePool) {
    FRESH_POOL;
    void* pooled = pool::alloc(32768);
    void* next_tier = pool::alloc(32769);
    void* large = pool::alloc(3 << 20);
    ASSERT_NE(next_tier, nullptr);
    ASSERT_NE(large, nullptr);
    std::memset(next_tier, 0x5A, 32769);
    std::memset(large, 0xA5, 3 << 20);
    // Only the pooled block is in a page: the tiling holds without the other two.
    expect_tiled<pool>({{pooled, 32768}, {next_tier, 32769}, {large, 3 << 20}});
    EXPECT_EQ(pool::stats().mappings, 1u);
    pool::free(next_tier, 32769);
    pool::free(large, 3 << 20);
    pool::free(pooled, 32768);
}

// Guards the tier routing: (32 KiB, page/2] goes to the pool's private heap, larger
// sizes to malloc, and the page size is frozen once the heap holds memory (a block's
// tier is a function of its size and the page size).
TYPED_TEST(MemoryPool, MidSizesGoToThePrivateHeapAndFreezeThePageSize) {
    FRESH_POOL;
    void* big = pool::alloc(600 * 1024); // above page/2 (512 KiB): malloc
    EXPECT_FALSE(pool::detail_state().heap.holds_memory());
    void* mid = pool::alloc(40000);
    ASSERT_NE(mid, nullptr);
    EXPECT_TRUE(pool::detail_state().heap.holds_memory());
    std::memset(mid, 0x2D, 40000);
    mid = pool::realloc(mid, 40000, 500 * 1024); // stays in the heap
    ASSERT_NE(mid, nullptr);
    EXPECT_EQ(static_cast<unsigned char*>(mid)[39999], 0x2D);
    mid = pool::realloc(mid, 500 * 1024, 700 * 1024); // crosses into malloc
    ASSERT_NE(mid, nullptr);
    EXPECT_EQ(static_cast<unsigned char*>(mid)[39999], 0x2D);
    EXPECT_THROW(pool::set_page_bytes(512 * 1024), std::logic_error);
    pool::free(mid, 700 * 1024);
    pool::free(big, 600 * 1024);
    EXPECT_EQ(pool::stats().mappings, 0u);
}

// Guards the 4 GiB truncation end to end: a huge request must fail cleanly (or be
// served by malloc), never come back as a small pooled block.
TYPED_TEST(MemoryPool, HugeSizesFailCleanlyWithNullptr) {
    FRESH_POOL;
    EXPECT_EQ(pool::alloc(std::size_t{1} << 62), nullptr);
    EXPECT_EQ(pool::alloc(~std::size_t{0}), nullptr);
    EXPECT_EQ(pool::alloc(~std::size_t{0} - 7), nullptr);
    EXPECT_EQ(pool::stats().mappings, 0u) << "a huge size reached a pooled class";
}

// Guards out-of-memory: nullptr from every entry point, and the pool stays usable.
TYPED_TEST(MemoryPool, RefusedPageGivesNullptr) {
    FRESH_POOL;
    using pages = limited_pages<tag>;
    pages::budget = 0;
    pool::detail_state().map_pages = &pages::map;
    EXPECT_EQ(pool::alloc(32), nullptr);
    EXPECT_EQ(pool::template alloc<32>(), nullptr);
    EXPECT_EQ(pool::alloc(8), nullptr);
    EXPECT_EQ(pool::alloc(0), nullptr);
    pages::budget = 1;
    void* p = pool::alloc(32);
    EXPECT_NE(p, nullptr);
    expect_tiled<pool>({{p, 32}});
}

// Guards realloc's failure contract: nullptr, and the old block unchanged and usable.
TYPED_TEST(MemoryPool, FailedReallocLeavesTheOldBlockIntact) {
    FRESH_POOL;
    using pages = limited_pages<tag>;
    pages::budget = 1;
    pool::detail_state().map_pages = &pages::map;
    pool::set_page_bytes(256 * 1024);
    auto* p = static_cast<unsigned char*>(pool::alloc(100));
    std::memset(p, 0x3C, 100);
    void* blocker = pool::alloc(16); // p is no longer the last bumped block
    std::vector<held_block> held{{p, 100}, {blocker, 16}};
    while (void* q = pool::alloc(32768)) // the one mapping is spent
        held.push_back({q, 32768});
    EXPECT_EQ(pool::realloc(p, 100, 32768), nullptr);
    for (int i = 0; i < 100; ++i)
        ASSERT_EQ(p[i], 0x3C);
    EXPECT_EQ(check_accounting<pool>(held), "");
}

// Guards realloc within a class: no move, no copy.
TYPED_TEST(MemoryPool, ReallocWithinAClassKeepsThePointer) {
    FRESH_POOL;
    // The class of 40 B: 64 B in powers of two, 40 B in quarter classes; either way 33 B
    // (one byte above the 32 B class) is its smallest request.
    using classes = typename pool::classes;
    const std::size_t top = sta::detail::bytes_of_size<classes>(40);
    ASSERT_EQ(sta::detail::bytes_of_size<classes>(33), top);
    ASSERT_EQ(sta::detail::bytes_of_size<classes>(32), 32u);
    void* p = pool::alloc(40);
    EXPECT_EQ(pool::realloc(p, 40, top), p);
    EXPECT_EQ(pool::realloc(p, top, 33), p);
    void* z = pool::alloc(0);
    EXPECT_EQ(pool::realloc(z, 0, 8), z);
    expect_tiled<pool>({{p, 33}, {z, 8}});
}

// Guards realloc across tiers, both ways: content kept, the sized free finds each block.
TYPED_TEST(MemoryPool, ReallocAcrossTiersKeepsContent) {
    FRESH_POOL;
    auto* p = static_cast<unsigned char*>(pool::alloc(1000));
    std::memset(p, 0x77, 1000);
    auto* big = static_cast<unsigned char*>(pool::realloc(p, 1000, 100000));
    ASSERT_NE(big, nullptr);
    for (int i = 0; i < 1000; ++i)
        ASSERT_EQ(big[i], 0x77);
    std::memset(big, 0x66, 100000);
    auto* bigger = static_cast<unsigned char*>(pool::realloc(big, 100000, 300000));
    ASSERT_NE(bigger, nullptr);
    EXPECT_EQ(bigger[99999], 0x66);
    auto* small = static_cast<unsigned char*>(pool::realloc(bigger, 300000, 500));
    ASSERT_NE(small, nullptr);
    for (int i = 0; i < 500; ++i)
        ASSERT_EQ(small[i], 0x66);
    expect_tiled<pool>({{small, 500}});
    pool::free(small, 500);
    EXPECT_EQ(pool::realloc(nullptr, 0, 10) != nullptr, true);
}

// Guards set_page_bytes: each bad argument is refused with a message that says why.
TYPED_TEST(MemoryPool, SetPageBytesRefusesBadSizesWithAReason) {
    FRESH_POOL;
    auto message_of = [](std::size_t bytes) -> std::string {
        try {
            pool::set_page_bytes(bytes);
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "accepted";
    };
    EXPECT_NE(message_of(128 * 1024).find("below the minimum"), std::string::npos);
    EXPECT_NE(message_of(0).find("below the minimum"), std::string::npos);
    EXPECT_NE(message_of(3 * 256 * 1024).find("not a power of two"), std::string::npos);
    EXPECT_NE(message_of(std::size_t{1} << 31).find("above the maximum"), std::string::npos);
    EXPECT_EQ(message_of(512 * 1024), "accepted");
    EXPECT_EQ(pool::page_bytes(), 512u * 1024);
    void* p = pool::alloc(8);
    try {
        pool::set_page_bytes(1 << 20);
        ADD_FAILURE() << "set_page_bytes after first use was accepted";
    } catch (const std::logic_error& e) {
        EXPECT_NE(std::string(e.what()).find("already mapped a page"), std::string::npos);
    }
    if constexpr (!is_spans<TypeParam>) {
        EXPECT_EQ(pool::stats().bytes_reserved, 512u * 1024);
    }
    pool::free(p, 8);
}

// Guards the shared cursor across classes: mixed sizes still tile the page.
TYPED_TEST(MemoryPool, MixedSizesTileThePage) {
    FRESH_POOL;
    std::vector<held_block> held;
    const std::size_t sizes[] = {1, 9, 17, 33, 65, 129, 257, 513, 1025, 2049, 4097, 8193, 16385};
    for (int round = 0; round < 20; ++round)
        for (std::size_t bytes : sizes)
            held.push_back({pool::alloc(bytes), bytes});
    for (std::size_t i = 0; i < held.size(); i += 3)
        pool::free(const_cast<void*>(held[i].p), held[i].bytes);
    std::vector<held_block> still;
    for (std::size_t i = 0; i < held.size(); ++i)
        if (i % 3 != 0)
            still.push_back(held[i]);
    EXPECT_EQ(check_accounting<pool>(still), "");
}

// Guards the checker itself: it must notice a block the pool forgot about.
TYPED_TEST(MemoryPool, CheckerNoticesALostBlock) {
    FRESH_POOL;
    void* a = pool::alloc(64);
    void* b = pool::alloc(64);
    EXPECT_EQ(check_accounting<pool>(std::vector<held_block>{{a, 64}, {b, 64}}), "");
    EXPECT_NE(check_accounting<pool>(std::vector<held_block>{{a, 64}}), "");
    EXPECT_NE(check_accounting<pool>(std::vector<held_block>{{a, 64}, {b, 64}, {a, 64}}), "");
}

} // namespace
