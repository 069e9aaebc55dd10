// Memory goes back (include/sta/detail/layout/span_life.hpp): a span whose blocks have
// all come back keeps its pages for the purge delay, then gives them to the OS; a segment
// whose spans are all free goes whole; trim() gives back at once; purge_never keeps
// everything. What is resident is asked of the OS for the pool's own pages (Linux
// mincore, Windows the committed pages), never the RSS of the whole process. Every test
// ends with the accounting checker, which also asserts that a purged span has no page
// resident (S11).
#include "support/pool_test_support.hpp"
#include "support/smaps.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {
using namespace sta_test;
using sta::detail::check_accounting;
using sta::detail::held_block;
using sta::detail::os_resident_bytes;
using sta::detail::span_begin;
using sta::detail::span_of;
using sta::detail::span_usable_bytes;

template <class Variant>
class SpanLife : public ::testing::Test {};
/// The span layout in both of its thread modes.
using life_variants = ::testing::Types<table_spans, branch_spans, branch_spans_seed>;
TYPED_TEST_SUITE(SpanLife, life_variants, variant_names);

constexpr std::size_t block_bytes = 1024; // 64 to a span, 60 in a segment's first

/// Blocks of 1 KiB, each filled, until they lie in `spans` spans or more; the spans in
/// the order they were filled.
template <class Pool>
struct filled_spans {
    std::vector<void*> blocks;
    std::vector<const sta::detail::span*> spans;

    explicit filled_spans(std::size_t count) {
        while (spans.size() <= count) { // one more: the last is the class's current span
            void* p = Pool::alloc(block_bytes);
            EXPECT_NE(p, nullptr);
            std::memset(p, 0x5a, block_bytes);
            if (spans.empty() || spans.back() != span_of(p))
                spans.push_back(span_of(p));
            blocks.push_back(p);
        }
    }
    /// Free every block of span `i`, and flush the caches (S5): it is not its class's
    /// current span, so it comes clean.
    void free_span(std::size_t i) {
        std::erase_if(blocks, [&](void* p) {
            if (span_of(p) != spans[i])
                return false;
            Pool::free(p, block_bytes);
            return true;
        });
        sta::detail::flush_caches<Pool>();
    }
    std::vector<held_block> held() const {
        std::vector<held_block> out;
        for (void* p : blocks)
            out.push_back({p, block_bytes});
        return out;
    }
    void free_all() {
        for (void* p : blocks)
            Pool::free(p, block_bytes);
        blocks.clear();
        sta::detail::flush_caches<Pool>();
    }
};

std::size_t resident(const sta::detail::span* sp) {
    return os_resident_bytes(sta::detail::span_usable_begin(sp), span_usable_bytes(sp));
}

/// A refill of a class this test has not used yet, `bytes`: a slow path, where what is
/// due goes back.
template <class Pool>
void take_a_slow_path(std::size_t bytes) {
    Pool::free(Pool::alloc(bytes), bytes);
}

void sleep_ms(int ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// Guards "after the delay": a clean span keeps its pages at first, and has none resident
// once the delay has passed and a slow path has run.
TYPED_TEST(SpanLife, ACleanSpansPagesGoBackAfterTheDelay) {
    FRESH_POOL;
    pool::set_purge_delay(30);
    filled_spans<pool> f(4);
    f.free_span(1);
    EXPECT_GT(resident(f.spans[1]), 0u) << "purged before its delay";
    EXPECT_EQ(pool::stats().spans_clean, 1u);
    sleep_ms(60);
    f.free_span(2); // a span comes clean: a slow path, and span 1's delay has passed
    EXPECT_EQ(resident(f.spans[1]), 0u);
    EXPECT_GT(resident(f.spans[2]), 0u) << "purged before its delay";
    const sta::pool_stats s = pool::stats();
    EXPECT_GE(s.bytes_given_back, span_usable_bytes(f.spans[1]));
    EXPECT_EQ(s.spans_clean, 1u);
    EXPECT_EQ(check_accounting<pool>(f.held()), "");
    f.free_all();
}

// Guards the delay's purpose: a span emptied and taken again before its delay keeps its
// pages, comes back whole and loses no block.
TYPED_TEST(SpanLife, ASpanRefilledBeforeTheDelayKeepsItsPagesAndBlocks) {
    FRESH_POOL;
    pool::set_purge_delay(60'000);
    filled_spans<pool> f(3);
    const std::size_t blocks_before = f.blocks.size();
    const sta::detail::span* const cleaned = f.spans[1];
    f.free_span(1);
    std::size_t from_cleaned = 0;
    for (std::size_t i = 0; f.blocks.size() < blocks_before; ++i) {
        void* p = pool::alloc(block_bytes);
        ASSERT_NE(p, nullptr);
        from_cleaned += span_of(p) == cleaned;
        f.blocks.push_back(p);
    }
    EXPECT_GT(from_cleaned, 0u) << "the clean span was not taken again";
    EXPECT_GT(resident(cleaned), 0u);
    EXPECT_EQ(pool::stats().bytes_given_back, 0u);
    EXPECT_EQ(check_accounting<pool>(f.held()), "");
    f.free_all();
}

// Guards the rhythm of the slow-path checks (span_shape::checks_mask): a class whose span
// holds two blocks (32 KiB) runs them at one refill in 32, not at none, so the clean spans
// whose delay has passed go back within 64 such blocks (the refills take the newest
// clean spans first; the oldest wait for the checks).
TYPED_TEST(SpanLife, ABigClassRunsTheChecksWithinSixtyFourBlocks) {
    FRESH_POOL;
    pool::set_purge_delay(20);
    filled_spans<pool> f(40);
    f.free_all(); // every span but the class's current one comes clean
    EXPECT_GE(pool::stats().spans_clean, 39u);
    sleep_ms(50);
    std::vector<void*> big;
    for (int i = 0; i < 64; ++i)
        big.push_back(pool::alloc(32768));
    EXPECT_GT(pool::stats().bytes_given_back, 0u) << "64 blocks of 32 KiB and no check ran";
    for (void* p : big)
        pool::free(p, 32768);
    EXPECT_EQ(check_accounting<pool>({}), "");
}

// Guards trim(): everything free goes back at once, whatever the delay; a second trim
// has nothing left to give.
TYPED_TEST(SpanLife, TrimGivesBackAtOnce) {
    FRESH_POOL;
    pool::set_purge_delay(pool::purge_never);
    filled_spans<pool> f(3);
    f.free_span(0);
    f.free_span(1);
    EXPECT_GT(resident(f.spans[0]) + resident(f.spans[1]), 0u);
    EXPECT_GE(pool::trim(), span_usable_bytes(f.spans[0]) + span_usable_bytes(f.spans[1]));
    EXPECT_EQ(resident(f.spans[0]) + resident(f.spans[1]), 0u);
    EXPECT_EQ(pool::trim(), 0u);
    EXPECT_EQ(check_accounting<pool>(f.held()), "");
    f.free_all();
}

// Guards the seed's trade: with purge_never nothing goes back by itself.
TYPED_TEST(SpanLife, NeverKeepsEveryPage) {
    FRESH_POOL;
    pool::set_purge_delay(pool::purge_never);
    filled_spans<pool> f(4);
    f.free_span(1);
    const std::size_t before = resident(f.spans[1]);
    sleep_ms(30);
    f.free_span(2);
    take_a_slow_path<pool>(48);
    EXPECT_EQ(resident(f.spans[1]), before);
    EXPECT_GT(before, 0u);
    EXPECT_EQ(pool::stats().bytes_given_back, 0u);
    EXPECT_EQ(check_accounting<pool>(f.held()), "");
    f.free_all();
}

// Guards S12: when every span of a segment is free, the segment goes back whole and its
// addresses are no pool's any more, nor poisoned for ASan.
TYPED_TEST(SpanLife, ASegmentWhoseSpansAreAllFreeIsUnmapped) {
    FRESH_POOL;
    pool::set_purge_delay(0);
    const void* const first = pool::alloc(block_bytes);
    const auto* const seg = sta::detail::segment_of(first);
    pool::free(const_cast<void*>(first), block_bytes);
    filled_spans<pool> f(40); // more than a segment: the first one's spans are not current
    std::vector<void*> others;
    std::erase_if(f.blocks, [&](void* p) {
        if (sta::detail::segment_of(p) == seg)
            return false;
        others.push_back(p);
        return true;
    });
    f.free_all(); // the first segment's blocks
    const sta::pool_stats s = pool::stats();
    EXPECT_GE(s.segments_unmapped, 1u);
    EXPECT_FALSE(sta::detail::is_pool_segment(seg));
#if STA_POOL_ASAN
    // The tools forget it (hooks::page_unmapped): ASan keeps a poisoned shadow past munmap,
    // and whoever maps these addresses next (an arena, malloc) would be reported.
    EXPECT_EQ(__asan_region_is_poisoned(const_cast<sta::detail::segment*>(seg),
                                        sta::detail::segment_bytes),
              nullptr);
#endif
    std::vector<held_block> held;
    for (void* p : others)
        held.push_back({p, block_bytes});
    EXPECT_EQ(check_accounting<pool>(held), "");
    for (void* p : others)
        pool::free(p, block_bytes);
}

/// The segments of `blocks`, in the order they were first met.
std::vector<const sta::detail::segment*> segments_of(const std::vector<void*>& blocks) {
    std::vector<const sta::detail::segment*> out;
    for (void* p : blocks)
        if (out.empty() || out.back() != sta::detail::segment_of(p))
            out.push_back(sta::detail::segment_of(p));
    return out;
}

constexpr std::size_t big_block = 32768; // two to a span, 62 or 63 to a segment

/// Blocks of 32 KiB until `in_third` of them lie in a third segment, with the huge pages
/// that both rules give a heap that fills its segments asserted: the first two segments
/// plain, the third huge (segment::huge, and on Linux the kernel's advice).
template <class Pool>
std::vector<void*> fill_into_a_huge_third_segment(std::size_t in_third) {
    std::vector<void*> blocks;
    std::size_t third = 0;
    while (third < in_third) {
        void* p = Pool::alloc(big_block);
        EXPECT_NE(p, nullptr);
        if (p == nullptr)
            return blocks;
        blocks.push_back(p);
        third += segments_of(blocks).size() == 3;
    }
    const auto segments = segments_of(blocks);
    EXPECT_FALSE(segments[0]->huge);
    EXPECT_FALSE(segments[1]->huge);
    EXPECT_TRUE(segments[2]->huge);
#if defined(__linux__)
    EXPECT_FALSE(advised_huge(segments[0]));
    EXPECT_FALSE(advised_huge(segments[1]));
    EXPECT_TRUE(advised_huge(segments[2]));
#endif
    std::vector<held_block> held;
    for (void* p : blocks)
        held.push_back({p, big_block});
    EXPECT_EQ(check_accounting<Pool>(held), "");
    return blocks;
}

// Guards set_huge_pages_from: a pool advises huge pages only for the segments it maps
// once it holds the count set (the drop-in's default: a small heap stays on plain pages),
// and a segment that gives pages back takes plain pages from then on (a fault in it
// would bring in 2 MiB again).
TYPED_TEST(SpanLife, SegmentsGetHugePagesOnceThePoolHoldsTheCountSet) {
    FRESH_POOL;
    pool::set_huge_pages_from(2);
    constexpr std::size_t big = big_block;
    std::vector<void*> blocks = fill_into_a_huge_third_segment<pool>(4); // two spans of it
    const auto segments = segments_of(blocks);
    void* const kept = blocks.back(); // the third segment stays, a block of it in use
    blocks.pop_back();
    for (void* p : blocks)
        pool::free(p, big);
    EXPECT_GT(pool::trim(), 0u); // the third segment's first span, clean, is purged
    EXPECT_FALSE(segments[2]->huge);
#if defined(__linux__)
    EXPECT_FALSE(advised_huge(segments[2]));
#endif
    const std::vector<held_block> still{{kept, big}};
    EXPECT_EQ(check_accounting<pool>(still), "");
    pool::free(kept, big);
    pool::set_huge_pages(false);
}

// Guards the density rule (set_huge_pages_where_dense, the default): a heap whose blocks
// fill the segments it holds gets huge pages from its third segment, while the first two,
// mapped before the rule judges (huge_pages_dense_from), keep plain pages.
TYPED_TEST(SpanLife, ADenseHeapGetsHugePagesFromItsThirdSegment) {
    FRESH_POOL;
    pool::set_huge_pages_where_dense();
    static_assert(sta::detail::huge_pages_dense_from == 2);
    constexpr std::size_t big = big_block;
    const std::vector<void*> blocks = fill_into_a_huge_third_segment<pool>(1);
    for (void* p : blocks)
        pool::free(p, big);
    pool::set_huge_pages(false);
}

// Guards the other side of the rule (dense_enough_for_huge_pages, which map_segment asks
// once a pool holds huge_pages_dense_from segments): a heap that spreads a block of each
// class over its spans is not dense, even against one segment, so its next segment would
// stay plain (the dense side: ADenseHeapGetsHugePagesFromItsThirdSegment).
TYPED_TEST(SpanLife, ASparseHeapIsNotDenseEnoughForHugePages) {
    FRESH_POOL;
    using classes = typename pool::engine::classes;
    using core = typename pool::engine::core;
    std::vector<held_block> held;
    std::vector<void*> blocks;
    for (std::uint32_t n = 0; n < classes::count; ++n) {
        const std::size_t bytes = classes::bytes_of_slot(classes::slot_of_ordinal(n));
        void* p = pool::alloc(bytes);
        ASSERT_NE(p, nullptr);
        blocks.push_back(p);
        held.push_back({p, bytes});
    }
    const std::size_t held_segments = segments_of(blocks).size();
    ASSERT_GE(held_segments, 1u);
    EXPECT_FALSE(core::dense_enough_for_huge_pages(pool::detail_state(), held_segments));
    EXPECT_FALSE(core::dense_enough_for_huge_pages(pool::detail_state(), 1));
    EXPECT_EQ(check_accounting<pool>(held), "");
    for (std::size_t i = 0; i < blocks.size(); ++i)
        pool::free(blocks[i], held[i].bytes);
    pool::set_huge_pages(false);
}

// Guards the stretched delay (pool/purge_delay.hpp): spans given back and taken again
// within the cap are refaults; after three batches the wait is the cap, so spans that come
// clean again keep their pages well past the base delay.
TYPED_TEST(SpanLife, SpansGivenBackAndTakenAgainStretchTheDelay) {
    FRESH_POOL;
    constexpr std::uint32_t base_ms = 40;
    pool::set_purge_delay(base_ms);
    constexpr std::size_t spans = 3 * sta::detail::purge_delay::refaults_to_stretch + 2;
    filled_spans<pool> f(spans);
    const std::size_t count = f.blocks.size();
    for (std::size_t i = 0; i < spans; ++i)
        f.free_span(i);
    sleep_ms(2 * base_ms);
    sta::detail::flush_caches<pool>(); // the slow-path checks, no span taken
    for (std::size_t i = 0; i < spans; ++i)
        ASSERT_EQ(resident(f.spans[i]), 0u) << "span " << i << " not given back";
    EXPECT_EQ(pool::engine::state().purge.wait_ms, base_ms);
    while (f.blocks.size() < count) { // the class takes the purged spans again
        void* p = pool::alloc(block_bytes);
        ASSERT_NE(p, nullptr);
        std::memset(p, 0x5a, block_bytes);
        f.blocks.push_back(p);
    }
    EXPECT_EQ(pool::engine::state().purge.wait_ms, base_ms * sta::detail::purge_delay::max_stretch);
    f.free_all();          // the spans taken again (purged spans are taken first) come clean
    sleep_ms(3 * base_ms); // past the base, well before the cap
    sta::detail::flush_caches<pool>(); // the slow-path checks, no span taken
    std::size_t kept = 0;
    for (std::size_t i = 0; i < spans; ++i)
        kept += resident(f.spans[i]) != 0;
    EXPECT_EQ(kept, spans) << "spans purged at the base delay";
    EXPECT_EQ(check_accounting<pool>({}), "");
    pool::trim();
}

/// Is every anonymous mapping backed by huge pages (THP "always")? Then a segment's first
/// touch makes all of it resident, and its pages cannot tell what was touched.
bool huge_pages_always() {
    std::FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f == nullptr)
        return false;
    char line[128] = {};
    const bool got = std::fgets(line, sizeof line, f) != nullptr;
    std::fclose(f);
    return got && std::strstr(line, "[always]") != nullptr;
}

// Guards the short bitmap slots (S4): spans that serve classes of 32 B and more keep
// their bits in the first pages of the segment's bitmaps, so the pages of the long
// slots, which only classes below 32 B need, are never touched.
TYPED_TEST(SpanLife, SpansOfClassesFrom32BytesLeaveTheLongBitmapsUntouched) {
    FRESH_POOL;
#if defined(_WIN32)
    GTEST_SKIP() << "Windows: os_resident_bytes reports committed pages (VirtualQuery), and a "
                    "segment's bitmaps are committed whole; only touched pages tell the slots "
                    "apart";
#endif
    if (huge_pages_always())
        GTEST_SKIP() << "transparent huge pages are 'always': a segment is resident whole";
    filled_spans<pool> f(8);
    const std::byte* const base = sta::detail::segment_of(f.blocks[0])->bitmaps;
    using namespace sta::detail;
    EXPECT_GT(os_resident_bytes(base, spans_per_segment * short_bitmap_bytes), 0u);
    EXPECT_EQ(os_resident_bytes(base + long_bitmaps_offset, spans_per_segment * bitmap_bytes), 0u);
    void* small = pool::alloc(16); // a span of a class below 32 B takes its long slot
    EXPECT_GT(os_resident_bytes(base + long_bitmaps_offset, spans_per_segment * bitmap_bytes), 0u);
    std::vector<held_block> held = f.held();
    held.push_back({small, 16});
    EXPECT_EQ(check_accounting<pool>(held), "");
    pool::free(small, 16);
    f.free_all();
}

template <class Variant>
class SpanLifeThreads : public ::testing::Test {};
TYPED_TEST_SUITE(SpanLifeThreads, per_thread_variants, variant_names);

// Guards memory freed after its thread ended: the freeing thread takes the blocks back
// into the parked pool (nothing waits for a new thread to adopt it), and once the delay
// has passed a slow path of any thread of the family gives the pages back.
TYPED_TEST(SpanLifeThreads, AParkedPoolsBlocksFreedByAnotherThreadGoBack) {
    FRESH_POOL;
    pool::set_purge_delay(30);
    take_a_slow_path<pool>(48); // this thread's pool has a segment of its own
    std::vector<void*> blocks;
    std::vector<const sta::detail::span*> spans;
    std::thread([&] {
        filled_spans<pool> f(3);
        blocks = f.blocks;
        spans = f.spans;
    }).join(); // its pool is parked, every block still live
    const sta::detail::span_state* const parked = sta::detail::owner_of(spans.front());
    std::size_t before = 0;
    for (const auto* sp : spans)
        before += resident(sp);
    EXPECT_GT(before, 0u);
    for (void* p : blocks)
        pool::free(p, block_bytes); // into the parked pool
    sleep_ms(60);
    take_a_slow_path<pool>(200);
    // Each span's pages went back: purged, or its segment unmapped (and perhaps mapped
    // again since, for another pool).
    for (const auto* sp : spans) {
        if (sta::detail::is_pool_segment(sp) && sta::detail::owner_of(sp) == parked) {
            EXPECT_EQ(resident(sp), 0u) << "span " << sp;
        }
    }
    EXPECT_EQ(pool::thread_pools().pools_parked, 1u);
    EXPECT_EQ(check_accounting<pool>({}), "");
}

// Guards trim() over parked pools: what a parked pool holds free goes back at once.
TYPED_TEST(SpanLifeThreads, TrimGivesBackWhatParkedPoolsHold) {
    FRESH_POOL;
    pool::set_purge_delay(pool::purge_never);
    std::vector<const sta::detail::span*> spans;
    std::thread([&] {
        filled_spans<pool> f(3);
        spans = f.spans;
        f.free_all();
    }).join();
    std::size_t before = 0;
    for (const auto* sp : spans)
        before += resident(sp);
    EXPECT_GT(before, 0u);
    EXPECT_GT(pool::trim(), 0u);
    for (const auto* sp : spans) {
        if (sta::detail::is_pool_segment(sp)) {
            EXPECT_EQ(resident(sp), 0u) << "span " << sp;
        }
    }
}

} // namespace

// Guards S1's guard below a segment of the OS's own pages (os_map_aligned_guarded): the
// range is aligned and writable, what lies right below it is of the same mapping (no
// other mapping can take it) and of no access, and both go back to the OS together.
TEST(SegmentGuard, TheOSPagesOfASegmentHaveAGuardBelowThem) {
    using namespace sta::detail;
    constexpr std::size_t bytes = std::size_t{2} << 20;
    auto* const p = static_cast<std::byte*>(os_map_aligned_guarded(bytes, bytes));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % bytes, 0u);
    std::memset(p, 1, os_page_bytes);
    std::byte* const below = p - 1;
#if defined(_WIN32)
    MEMORY_BASIC_INFORMATION info{};
    ASSERT_NE(::VirtualQuery(below, &info, sizeof info), 0u);
    EXPECT_EQ(info.State, static_cast<DWORD>(MEM_RESERVE)) << "the guard is never committed";
    EXPECT_EQ(info.AllocationBase, static_cast<void*>(p - os_guard_bytes));
    ASSERT_NE(::VirtualQuery(p - os_guard_bytes, &info, sizeof info), 0u);
    EXPECT_EQ(info.State, static_cast<DWORD>(MEM_RESERVE));
    EXPECT_EQ(info.RegionSize, os_guard_bytes) << "all of the guard, and no more, uncommitted";
    os_unmap_guarded(p, bytes);
    ASSERT_NE(::VirtualQuery(below, &info, sizeof info), 0u);
    EXPECT_EQ(info.State, static_cast<DWORD>(MEM_FREE));
    ASSERT_NE(::VirtualQuery(p, &info, sizeof info), 0u);
    EXPECT_EQ(info.State, static_cast<DWORD>(MEM_FREE));
#elif defined(__linux__)
    EXPECT_EQ(permissions_at(p), "rw-p");
    EXPECT_EQ(permissions_at(below), "---p");
    EXPECT_EQ(permissions_at(p - os_guard_bytes), "---p");
    os_unmap_guarded(p, bytes);
    EXPECT_EQ(permissions_at(below), "");
    EXPECT_EQ(permissions_at(p), "");
#endif
}
