// The span layout's own mechanics (detail/layout/spans.hpp), on both dispatch policies.
// Each test has a pool of its own and ends with the accounting checker (S1..S13).
#include "support/pool_test_support.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

namespace {
using namespace sta_test;
using sta::detail::check_accounting;
using sta::detail::held_block;
using sta::detail::span_of;

template <class Variant>
class SpanLayout : public ::testing::Test {};
TYPED_TEST_SUITE(SpanLayout, span_variants, variant_names);

/// Is the block free in its span's bitmap (S4)?
bool in_bitmap(const void* p) {
    const auto* sp = span_of(p);
    const std::uint32_t i = sta::detail::block_index(sp, p);
    return ((sta::detail::span_bitmap(sp)[i / 64] >> (i % 64)) & 1) != 0;
}

/// Blocks of one span of `bytes`: its capacity, allocated fresh.
template <class Pool>
std::vector<void*> fill_one_span(std::size_t bytes) {
    std::vector<void*> out;
    out.push_back(Pool::alloc(bytes));
    const auto* sp = span_of(out.front());
    for (std::uint32_t i = 1; i < sp->capacity; ++i)
        out.push_back(Pool::alloc(bytes));
    return out;
}

/// The class's first span handed out whole by its cursor (S5), then every block of it
/// freed without a size: the span is still current, every block free in its bitmap, and
/// the class's next block starts its second pass, a window of its first word.
template <class Pool>
void spend_first_pass(std::size_t bytes) {
    const std::vector<void*> first = fill_one_span<Pool>(bytes);
    for (void* p : first)
        Pool::engine::core::release_unsized(p);
}

// Guards the refill's count of a bitmap word's free blocks (bits_set, std::popcount's
// stand-in without -mpopcnt): every bit counts, the top one and the bottom one too.
TEST(SpanBits, BitsSetCountsEveryBitOfAWord) {
    std::uint64_t x = 0x9e3779b97f4a7c15ull;
    for (std::uint64_t word : {std::uint64_t{0}, ~std::uint64_t{0}, std::uint64_t{1},
                               std::uint64_t{1} << 63, std::uint64_t{0x8000000000000001ull}})
        EXPECT_EQ(sta::detail::bits_set(word), static_cast<std::uint32_t>(std::popcount(word)))
            << word;
    for (int i = 0; i < 1000; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        EXPECT_EQ(sta::detail::bits_set(x), static_cast<std::uint32_t>(std::popcount(x))) << x;
    }
}

// Guards free-list sharding's first half: each class bumps in a span of its own, so
// interleaved allocations of two classes are each contiguous.
TYPED_TEST(SpanLayout, EachClassBumpsInItsOwnSpan) {
    FRESH_POOL;
    std::vector<held_block> held;
    auto* first32 = static_cast<std::byte*>(pool::alloc(32));
    auto* first64 = static_cast<std::byte*>(pool::alloc(64));
    held.push_back({first32, 32});
    held.push_back({first64, 64});
    EXPECT_NE(span_of(first32), span_of(first64));
    for (int i = 1; i < 100; ++i) {
        auto* a = static_cast<std::byte*>(pool::alloc(32));
        auto* b = static_cast<std::byte*>(pool::alloc(64));
        EXPECT_EQ(a, first32 + 32 * i);
        EXPECT_EQ(b, first64 + 64 * i);
        held.push_back({a, 32});
        held.push_back({b, 64});
    }
    EXPECT_EQ(check_accounting<pool>(held), "");
}

// Guards the free path: a freed block goes on its class's cache and comes back first
// (LIFO, the warmest block), whatever span it lies in; a flush sends the cached blocks to
// their spans' bitmaps, where a block of a retired span waits while the class has others.
TYPED_TEST(SpanLayout, FreesFeedTheClassCacheUntilAFlush) {
    FRESH_POOL;
    using classes = typename pool::classes;
    // A 48 B request and the whole class it takes (64 B in powers of two, 48 B itself
    // in quarter classes).
    const std::size_t whole = sta::detail::bytes_of_size<classes>(48);
    void* a = pool::alloc(48);
    void* b = pool::alloc(48);
    pool::free(a, 48);
    EXPECT_EQ(pool::detail_state().heads[sta::detail::slot_of_size<classes>(48)], a);
    EXPECT_FALSE(in_bitmap(a));
    EXPECT_EQ(pool::alloc(whole), a);
    std::vector<void*> rest = fill_one_span<pool>(whole); // b's span is spent, then another
    const auto* old_span = span_of(b);
    ASSERT_NE(span_of(rest.back()), old_span);
    pool::free(b, 48); // b's span is no longer current: the cache takes it all the same
    EXPECT_FALSE(in_bitmap(b));
    EXPECT_EQ(pool::alloc(whole), b);
    pool::free(b, whole);
    sta::detail::flush_caches<pool>();
    EXPECT_TRUE(in_bitmap(b));
    EXPECT_EQ(pool::detail_state().heads[sta::detail::slot_of_size<classes>(48)], nullptr);
    auto* c = static_cast<std::byte*>(pool::alloc(whole));
    EXPECT_NE(static_cast<void*>(c), b); // the current span's window, not b
    std::vector<held_block> held{{a, whole}, {c, whole}};
    for (void* p : rest)
        held.push_back({p, whole});
    EXPECT_EQ(check_accounting<pool>(held), "");
}

// Guards the caches' bound (S5): every cache_frees-th free flushes every class's cache,
// so no more than cache_frees blocks are ever held outside the bitmaps.
TYPED_TEST(SpanLayout, EveryCacheFreesthFreeFlushesTheCaches) {
    FRESH_POOL;
    std::vector<void*> blocks;
    for (std::uint32_t i = 0; i < 2 * sta::detail::cache_frees; ++i)
        blocks.push_back(pool::alloc(i % 2 == 0 ? 32 : 200));
    sta::detail::flush_caches<pool>(); // the count starts over
    for (std::uint32_t i = 0; i + 1 < sta::detail::cache_frees; ++i)
        pool::free(blocks[i], i % 2 == 0 ? 32 : 200);
    for (std::uint32_t i = 0; i + 1 < sta::detail::cache_frees; ++i)
        EXPECT_FALSE(in_bitmap(blocks[i])) << i;
    pool::free(blocks[sta::detail::cache_frees - 1], 200); // the cache_frees-th
    for (std::uint32_t i = 0; i < sta::detail::cache_frees; ++i)
        EXPECT_TRUE(in_bitmap(blocks[i])) << i;
    std::vector<held_block> held;
    for (std::uint32_t i = sta::detail::cache_frees; i < blocks.size(); ++i)
        held.push_back({blocks[i], i % 2 == 0 ? 32u : 200u});
    EXPECT_EQ(check_accounting<pool>(held), "");
}

// Guards the flush's interval while a program frees more than it allocates (S5): a flush
// that finds at least half of its interval's frees on the caches makes the next one come
// after cache_frees_freeing frees, and until a class refills, a sized free's block goes to
// its span's bitmap at once (direct_frees), uncounted; after the refill, frees go on the
// caches again, and a flush after frees that allocations took back restores cache_frees.
TYPED_TEST(SpanLayout, FreesThatOutrunAllocationsGoToTheirSpansAtOnce) {
    FRESH_POOL;
    using sta::detail::cache_frees;
    using sta::detail::cache_frees_freeing;
    auto& st = pool::detail_state();
    const std::uint32_t slot = pool::classes::slot_of_key(47);
    std::vector<void*> blocks;
    for (std::uint32_t i = 0; i < cache_frees + 2 * cache_frees_freeing; ++i)
        blocks.push_back(pool::alloc(48));
    sta::detail::flush_caches<pool>(); // nothing on the caches: the long interval
    EXPECT_EQ(st.flush_every, cache_frees);
    EXPECT_FALSE(st.direct_frees);
    std::uint32_t next = 0;
    for (; next + 1 < cache_frees; ++next) // frees only
        pool::free(blocks[next], 48);
    EXPECT_FALSE(in_bitmap(blocks[next - 1])); // on the cache
    pool::free(blocks[next++], 48);            // the cache_frees-th: flushed
    EXPECT_TRUE(in_bitmap(blocks[0]));
    EXPECT_EQ(st.flush_every, cache_frees_freeing);
    EXPECT_TRUE(st.direct_frees);
    for (std::uint32_t i = 0; i < cache_frees_freeing; ++i) { // more frees only: at once
        pool::free(blocks[next++], 48);
        EXPECT_TRUE(in_bitmap(blocks[next - 1])) << i;
        EXPECT_EQ(st.heads[slot], nullptr) << i;
    }
    EXPECT_EQ(st.frees_to_flush, cache_frees_freeing); // not counted
    // Allocations until the class refills (its cursor or window spent): the frees go on
    // the caches again.
    std::vector<void*> taken;
    for (int i = 0; st.direct_frees && i < 100000; ++i)
        taken.push_back(pool::alloc(48));
    EXPECT_FALSE(st.direct_frees);
    pool::free(taken.back(), 48);
    EXPECT_EQ(st.heads[slot], taken.back());
    taken.back() = pool::alloc(48); // taken back from the cache
    // Each free now followed by an allocation of its class, which takes it back: the
    // caches hold nothing at the next flush, and the interval is the long one again.
    for (std::uint32_t i = 0; i < cache_frees_freeing; ++i) {
        pool::free(blocks[next], 48);
        blocks[next] = pool::alloc(48);
        EXPECT_EQ(st.heads[slot], nullptr) << i;
    }
    EXPECT_EQ(st.flush_every, cache_frees);
    std::vector<held_block> held;
    for (std::uint32_t i = cache_frees + cache_frees_freeing; i < blocks.size(); ++i)
        held.push_back({blocks[i], 48});
    for (void* p : taken)
        held.push_back({p, 48});
    EXPECT_EQ(check_accounting<pool>(held), "");
}

// Guards the flush's return to the window (S5): a cached block of the word its class's
// window holds goes back into the window, not to the bitmap, and comes out before the
// word's blocks never handed out; a block of an earlier word goes to the bitmap, and the
// class's next word taken is the span's lowest with free blocks (rescan).
TYPED_TEST(SpanLayout, AFlushPutsTheWindowsOwnBlocksBackIntoTheWindow) {
    FRESH_POOL;
    using classes = typename pool::classes;
    constexpr std::size_t bytes = 32;
    spend_first_pass<pool>(bytes); // the span's second pass takes its words into windows
    std::vector<void*> blocks;
    for (int i = 0; i < 64 + 3; ++i) // word 0 spent, word 1 the window: 61 blocks left
        blocks.push_back(pool::alloc(bytes));
    ASSERT_EQ(span_of(blocks.front()), span_of(blocks.back()));
    pool::free(blocks[65], bytes); // of the window's word
    pool::free(blocks[10], bytes); // of word 0
    sta::detail::flush_caches<pool>();
    EXPECT_FALSE(in_bitmap(blocks[65]));
    EXPECT_TRUE(in_bitmap(blocks[10]));
    const std::uint32_t slot = sta::detail::slot_of_size<classes>(bytes);
    EXPECT_EQ(pool::detail_state().heads[slot], nullptr);
    EXPECT_EQ(pool::alloc(bytes), blocks[65]); // before block 67, never handed out
    std::vector<held_block> held;
    for (int i = 67; i < 128; ++i) // the window's word, spent
        held.push_back({pool::alloc(bytes), bytes});
    // rescan: the next word taken is word 0 again (block 10), not word 2, though one free
    // block is less than the sixteenth of the taken ones that sends take_word back itself
    EXPECT_EQ(pool::alloc(bytes), blocks[10]);
    for (std::size_t i = 0; i < blocks.size(); ++i)
        held.push_back({blocks[i], bytes});
    EXPECT_EQ(check_accounting<pool>(held), "");
}

// Guards the cursor (S5): a span that starts serving a class hands out its blocks in
// address order, one block's bytes apart, and nothing but the frees writes its bitmap;
// a free of a block the cursor has not handed out yet is refused, and the block stays
// the cursor's next.
TYPED_TEST(SpanLayout, AFreshSpanIsABumpRegionWhoseBitmapOnlyTheFreesWrite) {
    FRESH_POOL;
    using core = typename pool::engine::core;
    using sta::detail::free_verdict;
    constexpr std::size_t bytes = 48;
    std::vector<held_block> held;
    for (int i = 0; i < 200; ++i)
        held.push_back({pool::alloc(bytes), bytes});
    const auto* sp = span_of(held.front().p);
    EXPECT_TRUE(sp->bumping);
    const std::size_t step = sp->block_bytes; // its class's: 48 B, or 64 B (powers of two)
    for (std::size_t i = 1; i < held.size(); ++i)
        ASSERT_EQ(static_cast<const std::byte*>(held[i].p),
                  static_cast<const std::byte*>(held[i - 1].p) + step)
            << i;
    for (std::uint32_t w = 0; w < 4; ++w) // 200 blocks handed out: their words still clear
        EXPECT_EQ(sta::detail::span_bitmap(sp)[w], 0u) << w;
    auto* const next = static_cast<std::byte*>(const_cast<void*>(held.back().p)) + step;
    EXPECT_EQ(core::block_state(next), free_verdict::not_a_block);
    EXPECT_EQ(core::release_checked(next), free_verdict::not_a_block);
    EXPECT_FALSE(in_bitmap(next));
    core::release_unsized(const_cast<void*>(held[7].p)); // a free writes its bit
    EXPECT_TRUE(in_bitmap(held[7].p));
    held.erase(held.begin() + 7);
    void* const fresh = pool::alloc(bytes); // the cursor's next, not the block freed
    EXPECT_EQ(fresh, next);
    held.push_back({fresh, bytes});
    EXPECT_EQ(check_accounting<pool>(held), "");
    for (const held_block& h : held)
        pool::free(const_cast<void*>(h.p), h.bytes);
}

// Guards the cursor's heartbeat rule (S5, S7): once a sixteenth of the blocks the cursor
// handed out are free again, the cursor stops and the class takes the freed blocks,
// lowest first, before it touches the span's fresh ones.
TYPED_TEST(SpanLayout, TheCursorStopsOnceASixteenthOfItsBlocksComeBack) {
    FRESH_POOL;
    constexpr std::size_t bytes = 32;
    std::vector<void*> blocks;
    for (int i = 0; i < 512; ++i)
        blocks.push_back(pool::alloc(bytes));
    const auto* sp = span_of(blocks.front());
    ASSERT_TRUE(sp->bumping);
    for (int i = 100; i < 100 + 64; ++i) // 64 unsized frees: a heartbeat; 64 > 512 / 16
        pool::engine::core::release_unsized(blocks[static_cast<std::size_t>(i)]);
    EXPECT_FALSE(sp->bumping);
    EXPECT_EQ(pool::alloc(bytes), blocks[100]); // reused, lowest first
    std::vector<held_block> held{{blocks[100], bytes}};
    for (int i = 0; i < 512; ++i)
        if (i < 100 || i >= 164)
            held.push_back({blocks[static_cast<std::size_t>(i)], bytes});
    EXPECT_EQ(check_accounting<pool>(held), "");
    for (const held_block& h : held)
        pool::free(const_cast<void*>(h.p), h.bytes);
}

// Guards the reuse threshold's rule: an eighth of a span's blocks for the small classes,
// never fewer than 128 blocks nor more than a quarter, at least one.
TEST(SpanLayoutRules, TheReuseThresholdIsAnEighthAtLeast128BlocksAtMostAQuarter) {
    using sta::detail::reuse_threshold;
    EXPECT_EQ(reuse_threshold(4096), 512u); // 16 B: an eighth
    EXPECT_EQ(reuse_threshold(1024), 128u); // 64 B: an eighth is 128
    EXPECT_EQ(reuse_threshold(682), 128u);  // 96 B: 128 blocks, below a quarter (170)
    EXPECT_EQ(reuse_threshold(512), 128u);  // 128 B: a quarter is 128
    EXPECT_EQ(reuse_threshold(256), 64u);   // 256 B: a quarter, below 128
    EXPECT_EQ(reuse_threshold(170), 42u);   // 384 B: a quarter
    EXPECT_EQ(reuse_threshold(16), 4u);     // 4 KiB: a quarter
    EXPECT_EQ(reuse_threshold(2), 1u);      // 32 KiB: at least one
    EXPECT_EQ(reuse_threshold(1), 1u);
}

// Guards the choice of the next span: a spent span with less than its reuse threshold
// free (an eighth of a 64 B span's blocks) sleeps (the class takes a clean span); once
// that much is free it is partial, and the class takes it back when its current span runs
// out.
TYPED_TEST(SpanLayout, ASpanIsTakenAgainOnlyOnceAnEighthIsFree) {
    FRESH_POOL;
    std::vector<void*> first = fill_one_span<pool>(64);
    const auto* sp = span_of(first.front());
    void* next = pool::alloc(64); // the span is spent: it sleeps, the class moves on
    EXPECT_NE(span_of(next), sp);
    EXPECT_EQ(sp->role, sta::detail::span_role::sleeping);
    pool::free(first[5], 64); // one free block: not worth taking
    sta::detail::flush_caches<pool>();
    EXPECT_EQ(sp->role, sta::detail::span_role::sleeping);
    const std::uint32_t threshold = sta::detail::reuse_threshold(sp->capacity);
    EXPECT_EQ(threshold, sp->capacity / 8);
    for (std::uint32_t i = 1; i < threshold; ++i)
        pool::free(first[5 + 2 * i], 64);
    sta::detail::flush_caches<pool>();
    EXPECT_EQ(sp->role, sta::detail::span_role::partial);
    std::vector<held_block> held{{next, 64}};
    for (std::uint32_t i = 1; i < span_of(next)->capacity; ++i) // spend the current span
        held.push_back({pool::alloc(64), 64});
    void* back = pool::alloc(64);
    EXPECT_EQ(span_of(back), sp);
    EXPECT_EQ(back, first[5]); // the lowest freed comes first, not the last freed
    held.push_back({back, 64});
    for (std::size_t i = 0; i < first.size(); ++i)
        if (i < 5 || i > 5 + 2 * (threshold - 1) || (i - 5) % 2 != 0)
            held.push_back({first[i], 64});
    for (std::uint32_t i = 1; i < threshold; ++i) // the class holds the rest of them
        held.push_back({pool::alloc(64), 64});
    EXPECT_EQ(check_accounting<pool>(held), "");
}

// Guards the order of a lived-in span: whatever order its blocks were freed in, a
// partial span taken back by its class hands them out in ascending address order.
TYPED_TEST(SpanLayout, APartialSpanHandsOutItsFreeBlocksInAscendingOrder) {
    FRESH_POOL;
    std::vector<void*> first = fill_one_span<pool>(16);
    const auto* sp = span_of(first.front());
    std::vector<held_block> held{{pool::alloc(16), 16}}; // `sp` is retired
    std::vector<void*> freed;
    for (std::size_t i = 0; i < first.size() / 2; ++i) // half of it, scrambled
        freed.push_back(first[(i * 7919) % first.size()]);
    for (void* p : freed)
        pool::free(p, 16);
    sta::detail::flush_caches<pool>(); // the blocks still cached go to the span too
    ASSERT_EQ(sp->role, sta::detail::span_role::partial);
    for (std::uint32_t i = 1; i < span_of(held.front().p)->capacity; ++i)
        held.push_back({pool::alloc(16), 16}); // spend the current span
    std::sort(freed.begin(), freed.end());
    for (std::size_t i = 0; i < freed.size(); ++i) {
        void* p = pool::alloc(16);
        EXPECT_EQ(p, freed[i]) << "block " << i;
        held.push_back({p, 16});
    }
    for (void* p : first)
        if (!std::binary_search(freed.begin(), freed.end(), p))
            held.push_back({p, 16});
    EXPECT_EQ(check_accounting<pool>(held), "");
}

// Guards S8 and the ordering rule: when every block of a span is back, the span is
// clean, and the next class to take it allocates in ascending address order.
TYPED_TEST(SpanLayout, AWhollyFreedSpanServesAnyClassInAscendingOrder) {
    FRESH_POOL;
    std::vector<void*> first = fill_one_span<pool>(32);
    const auto* sp = span_of(first.front());
    void* other = pool::alloc(32); // the class moves on: `sp` is retired
    ASSERT_NE(span_of(other), sp);
    for (std::size_t i = 0; i < first.size(); ++i) // scrambled: 7919 is prime
        pool::free(first[(i * 7919) % first.size()], 32);
    sta::detail::flush_caches<pool>(); // the blocks still cached go to the span too
    EXPECT_EQ(sp->role, sta::detail::span_role::clean);
    std::vector<held_block> held{{other, 32}};
    auto* block = static_cast<std::byte*>(pool::alloc(1024));
    EXPECT_EQ(span_of(block), sp);
    EXPECT_EQ(block, sta::detail::span_begin(sp));
    held.push_back({block, 1024});
    for (std::uint32_t i = 1; i < sp->capacity; ++i) {
        auto* next = static_cast<std::byte*>(pool::alloc(1024));
        EXPECT_EQ(next, block + 1024) << "block " << i;
        block = next;
        held.push_back({block, 1024});
    }
    EXPECT_EQ(check_accounting<pool>(held), "");
}

// Guards the phase change: memory freed in one class serves another. 64 MiB of 16 B
// blocks, all freed, then 64 MiB of 1 KiB blocks: the second phase maps at most 2%
// more segments than the first.
TYPED_TEST(SpanLayout, MemoryFreedInOneClassServesAnother) {
    FRESH_POOL;
    constexpr std::size_t phase_bytes = std::size_t{64} << 20;
    std::vector<void*> blocks;
    blocks.reserve(phase_bytes / 16);
    for (std::size_t i = 0; i < phase_bytes / 16; ++i)
        blocks.push_back(pool::template alloc<16>());
    const std::size_t first_phase = pool::stats().mappings;
    for (void* p : blocks)
        pool::template free<16>(p);
    EXPECT_EQ(pool::stats().spans_in_use, 1u); // the 16 B class's current span
    blocks.clear();
    for (std::size_t i = 0; i < phase_bytes / 1024; ++i)
        blocks.push_back(pool::template alloc<1024>());
    const std::size_t second_phase = pool::stats().mappings;
    EXPECT_LE(second_phase * 100, first_phase * 102)
        << first_phase << " segments after the first phase, " << second_phase
        << " after the second";
    std::vector<held_block> held;
    for (void* p : blocks)
        held.push_back({p, 1024});
    EXPECT_EQ(check_accounting<pool>(held), "");
    for (void* p : blocks)
        pool::template free<1024>(p);
}

// Guards shrinking in the span layout: a smaller class moves the block (a span has
// one class), content kept.
TYPED_TEST(SpanLayout, ShrinkToASmallerClassMovesWithTheContent) {
    FRESH_POOL;
    auto* p = static_cast<unsigned char*>(pool::alloc(4096));
    std::memset(p, 0x11, 4096);
    auto* q = static_cast<unsigned char*>(pool::realloc(p, 4096, 100));
    ASSERT_NE(q, nullptr);
    EXPECT_NE(static_cast<void*>(q), static_cast<void*>(p));
    EXPECT_EQ(span_of(q)->slot, sta::detail::slot_of_size<typename pool::classes>(100));
    for (int i = 0; i < 100; ++i)
        ASSERT_EQ(q[i], 0x11);
    EXPECT_EQ(check_accounting<pool>(std::vector<held_block>{{q, 100}}), "");
}

/// Allocates `bytes` until a block lands in a span 0 (S2: served last of its segment),
/// then until its class leaves that span: the blocks of span 0, in the order handed out.
/// Every block allocated goes to `held`.
template <class Pool>
std::vector<void*> fill_span_zero(std::size_t bytes, std::vector<held_block>& held) {
    using namespace sta::detail;
    std::vector<void*> zero;
    const std::size_t most = 2 * spans_per_segment * (span_bytes / bytes);
    for (std::size_t n = 0; n < most; ++n) {
        void* const p = Pool::alloc(bytes);
        if (p == nullptr)
            break;
        held.push_back({p, bytes});
        const bool in_zero = span_index(span_of(p)) == 0;
        if (!zero.empty() && (!in_zero || span_of(p) != span_of(zero.front())))
            break; // the class left span 0: it is spent
        if (in_zero)
            zero.push_back(p);
    }
    return zero;
}

// Guards span 0's blocks (S2): the span that holds the segment's headers serves blocks
// too, from the first place past the headers to its capacity, each once, in ascending
// order; the places that overlap the headers are no blocks (the release checks refuse
// them), and the segment stays sound while its headers' span serves a class.
TYPED_TEST(SpanLayout, Span0ServesBlocksPastTheSegmentHeaders) {
    FRESH_POOL;
    using namespace sta::detail;
    using core = typename pool::engine::core;
    pool::set_prefault(false);
    for (const std::size_t bytes : {std::size_t{8}, std::size_t{24}, std::size_t{112},
                                    std::size_t{1280}, std::size_t{4096}, std::size_t{32768}}) {
        std::vector<held_block> held;
        const std::vector<void*> zero = fill_span_zero<pool>(bytes, held);
        ASSERT_FALSE(zero.empty()) << bytes << " B: no block in a span 0";
        const span* const sp = span_of(zero.front());
        const std::size_t block = sp->block_bytes;
        std::byte* const begin = span_begin(sp);
        EXPECT_EQ(begin, reinterpret_cast<std::byte*>(segment_of(sp)));
        EXPECT_EQ(sp->first, (segment_header_bytes + block - 1) / block) << block;
        EXPECT_EQ(zero.size(), std::size_t{sp->capacity - sp->first}) << block;
        for (std::size_t i = 0; i < zero.size(); ++i)
            ASSERT_EQ(zero[i], begin + (sp->first + i) * block) << block << " B, block " << i;
        EXPECT_GE(static_cast<std::byte*>(zero.front()), begin + segment_header_bytes) << block;
        for (std::uint32_t i = 0; i < sp->first; ++i) { // the headers' places: no blocks
            EXPECT_EQ(core::block_state(begin + i * block), free_verdict::not_a_block) << i;
            EXPECT_EQ(core::release_checked(begin + i * block), free_verdict::not_a_block) << i;
        }
        EXPECT_EQ(check_accounting<pool>(held), "") << block;
        for (const held_block& h : held)
            pool::free(const_cast<void*>(h.p), h.bytes);
        flush_caches<pool>(); // every span of the class clean again
        EXPECT_EQ(check_accounting<pool>({}), "") << block;
    }
}

// Guards a purge of span 0 (S11, S1): its blocks' pages go back, its headers stay, and
// the segment keeps serving: span 0 purged, then taken again.
TYPED_TEST(SpanLayout, Span0PurgedKeepsTheSegmentHeaders) {
    FRESH_POOL;
    using namespace sta::detail;
    pool::set_prefault(false);
    std::vector<held_block> held;
    const std::vector<void*> zero = fill_span_zero<pool>(4096, held);
    ASSERT_FALSE(zero.empty());
    span* const sp = span_of(zero.front());
    segment* const seg = segment_of(sp);
    std::vector<held_block> kept; // a block of span 1 keeps the segment mapped
    for (const held_block& h : held)
        if (span_index(span_of(h.p)) == 1 && kept.empty())
            kept.push_back(h);
        else
            pool::free(const_cast<void*>(h.p), h.bytes);
    ASSERT_EQ(kept.size(), 1u);
    flush_caches<pool>();
    pool::trim();
    EXPECT_EQ(sp->role, span_role::purged);
    EXPECT_EQ(seg->owner, &pool::detail_state()) << "the headers were given back";
    EXPECT_EQ(check_accounting<pool>(kept), "");
    held.clear();
    const std::vector<void*> again = fill_span_zero<pool>(4096, held);
    ASSERT_FALSE(again.empty());
    const sta::detail::span* const taken = span_of(again.front());
    EXPECT_EQ(again.size(), std::size_t{taken->capacity - taken->first});
    held.push_back(kept.front());
    EXPECT_EQ(check_accounting<pool>(held), "");
    for (const held_block& h : held)
        pool::free(const_cast<void*>(h.p), h.bytes);
    EXPECT_EQ(check_accounting<pool>({}), "");
}

// Guards "a shrink never fails": with no memory left for the move, the block stays
// where it is, in its class, and frees with its new size.
TYPED_TEST(SpanLayout, ShrinkWithNoMemoryLeftKeepsTheBlock) {
    FRESH_POOL;
    using pages = limited_pages<tag>;
    pages::budget = 1;
    pool::detail_state().map_pages = &pages::map;
    std::vector<held_block> held;
    auto* p = static_cast<unsigned char*>(pool::alloc(4096));
    std::memset(p, 0x42, 4096);
    while (void* q = pool::alloc(32768)) // every clean span is taken
        held.push_back({q, 32768});
    EXPECT_EQ(pool::realloc(p, 4096, 100), p);
    EXPECT_EQ(p[99], 0x42);
    held.push_back({p, 100});
    EXPECT_EQ(check_accounting<pool>(held), "");
    pool::free(p, 100);
    held.pop_back();
    EXPECT_EQ(check_accounting<pool>(held), "");
}

// Guards the segment map's reach: a segment the OS places above the 48 bits the map
// covers (no bit for it, so the C API's free could not tell its blocks from foreign ones)
// is refused before any byte of it is touched, and the allocation fails cleanly.
template <class Tag>
struct pages_above_the_map {
    static void* map(std::size_t) noexcept {
        return reinterpret_cast<void*>(std::uintptr_t{1} << sta::detail::mapped_address_bits);
    }
};
TYPED_TEST(SpanLayout, ASegmentAboveTheSegmentMapIsRefused) {
    FRESH_POOL;
    pool::detail_state().map_pages = &pages_above_the_map<tag>::map;
    EXPECT_EQ(pool::alloc(32), nullptr);
    EXPECT_EQ(pool::stats().mappings, 0u);
    EXPECT_FALSE(sta::detail::segment_map_covers(
        reinterpret_cast<void*>(std::uintptr_t{1} << sta::detail::mapped_address_bits)));
    EXPECT_TRUE(sta::detail::segment_map_covers(reinterpret_cast<void*>(
        (std::uintptr_t{1} << sta::detail::mapped_address_bits) - sta::detail::segment_bytes)));
    pool::detail_state().map_pages = &sta::detail::os_map_pages;
    void* const p = pool::alloc(32); // a real segment still comes
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(sta::detail::is_pool_segment(p));
    pool::free(p, 32);
}

// Guards the statistics of spans: classes, idle spans and bytes agree with the test (a
// new segment's spans have no page resident yet: purged).
TYPED_TEST(SpanLayout, StatsCountSpansAndBytes) {
    FRESH_POOL;
    using classes = typename pool::classes;
    pool::set_prefault(false); // whatever the build's default (STA_POOL_PREFAULT)
    // 100 B takes the 128 B class in powers of two, the 112 B class in quarter classes.
    const std::size_t class100 = sta::detail::bytes_of_size<classes>(100);
    ASSERT_EQ(sta::detail::bytes_of_size<classes>(5), 8u);
    void* a = pool::alloc(100);
    void* b = pool::alloc(100);
    void* c = pool::alloc(5); // 8 B class
    pool::free(a, 100);
    const sta::pool_stats s = pool::stats();
    EXPECT_EQ(s.mappings, 1u);
    EXPECT_EQ(s.mapping_bytes, sta::detail::segment_bytes);
    EXPECT_EQ(s.spans_in_use, 2u);
    EXPECT_EQ(s.spans_clean + s.spans_purged, sta::detail::spans_per_segment - 2);
    EXPECT_EQ(s.bytes_in_use, class100 + 8u);
    EXPECT_EQ(s.bytes_in_use + s.bytes_free, s.bytes_reserved);
    ASSERT_EQ(s.class_count, classes::count);
    ASSERT_NE(s.of_class(class100), nullptr);
    EXPECT_EQ(s.of_class(class100)->free_blocks, span_of(b)->capacity - 1u);
    pool::free(b, 100);
    pool::free(c, 5);
    EXPECT_EQ(pool::stats().bytes_in_use, 0u);
}

// ---- checked-build diagnostics on spans (STA_POOL_CHECKS) ----------------------------
// Each misuse aborts with its one-line report (detail/pool/checked_build.hpp); a death test runs
// the misuse in a child process and matches that line.

template <class Variant>
class SpanLayoutDeathTest : public ::testing::Test {};
TYPED_TEST_SUITE(SpanLayoutDeathTest, span_variants, variant_names);

#if STA_POOL_CHECKS
#define SKIP_UNLESS_CHECKED (void)0
#else
#define SKIP_UNLESS_CHECKED GTEST_SKIP() << "STA_POOL_CHECKS is off in this build"
#endif

// Any pointer, as %p prints it: googletest's simple regular expressions (Windows) have
// no groups or brackets, so "any characters" it is.
constexpr const char* any_block = "block .+ ";

// Guards the size-mismatch diagnostic within one class: 48 and 64 share the 64 B
// class, but the size is not the one the block was allocated with.
TYPED_TEST(SpanLayoutDeathTest, FreeWithAnotherSizeOfTheSameClass) {
    SKIP_UNLESS_CHECKED;
    FRESH_POOL;
    EXPECT_DEATH(pool::free(pool::alloc(48), 64),
                 std::string("size mismatch: ") + any_block +
                     "freed with 64 bytes, but it was allocated with 48 bytes");
}

// Guards a free with the size of a smaller class: the span's class would take the
// block back anyway, so only the checked build sees the caller's error.
TYPED_TEST(SpanLayoutDeathTest, FreeWithTheSizeOfAnotherClass) {
    SKIP_UNLESS_CHECKED;
    FRESH_POOL;
    EXPECT_DEATH(pool::free(pool::alloc(1000), 16),
                 std::string("size mismatch: ") + any_block +
                     "freed with 16 bytes, but it was allocated with 1000 bytes");
}

// Guards a pooled block freed with a next-tier size: reported, not handed to the
// private heap or malloc.
TYPED_TEST(SpanLayoutDeathTest, FreeOfAPooledBlockWithANextTierSize) {
    SKIP_UNLESS_CHECKED;
    FRESH_POOL;
    EXPECT_DEATH(pool::free(pool::alloc(100), 40000),
                 std::string("size mismatch: ") + any_block +
                     "freed with 40000 bytes, but it was allocated with 100 bytes");
}

// Guards the compile-time-size free: the same diagnostic as the run-time one.
TYPED_TEST(SpanLayoutDeathTest, CompileTimeFreeWithAnotherSize) {
    SKIP_UNLESS_CHECKED;
    FRESH_POOL;
    EXPECT_DEATH(pool::template free<32>(pool::template alloc<24>()),
                 std::string("size mismatch: ") + any_block +
                     "freed with 32 bytes, but it was allocated with 24 bytes");
}

// Guards realloc's old size: it is checked like a free's.
TYPED_TEST(SpanLayoutDeathTest, ReallocWithAnotherOldSize) {
    SKIP_UNLESS_CHECKED;
    FRESH_POOL;
    EXPECT_DEATH((void)pool::realloc(pool::alloc(48), 100, 200),
                 std::string("size mismatch: ") + any_block +
                     "reallocated with 100 bytes, but it was allocated with 48 bytes");
}

// Guards the registry through a shrink kept in place (no memory to move): the block
// now has its new size, and a free with the old one is a mismatch.
TYPED_TEST(SpanLayoutDeathTest, FreeWithTheSizeBeforeAShrinkKeptInPlace) {
    SKIP_UNLESS_CHECKED;
    FRESH_POOL;
    EXPECT_DEATH(
        {
            limited_pages<tag>::budget = 1;
            pool::detail_state().map_pages = &limited_pages<tag>::map;
            void* p = pool::alloc(4096);
            while (pool::alloc(32768) != nullptr) { // every clean span is taken
            }
            if (pool::realloc(p, 4096, 100) == p)
                pool::free(p, 4096);
        },
        std::string("size mismatch: ") + any_block +
            "freed with 4096 bytes, but it was allocated with 100 bytes");
}

// Guards the double free of a block waiting in its own span's bitmap (its span is
// retired: the class has moved on to another span).
TYPED_TEST(SpanLayoutDeathTest, DoubleFreeOnTheSpanList) {
    SKIP_UNLESS_CHECKED;
    FRESH_POOL;
    EXPECT_DEATH(
        {
            std::vector<void*> first = fill_one_span<pool>(64);
            void* next = pool::alloc(64); // the class moves on: first's span is retired
            const auto* sp = span_of(first[5]);
            pool::free(first[5], 64);
            sta::detail::flush_caches<pool>(); // from its class's cache to its span
            if (span_of(next) != sp && in_bitmap(first[5]))
                pool::free(first[5], 64);
        },
        std::string("double free: ") + any_block +
            "is already on the free list of the 64 B class \\(freed with 64 bytes\\)");
}

// Guards the double free of a block on its class's list (heads[slot]: freed while its
// span is the class's current span).
TYPED_TEST(SpanLayoutDeathTest, DoubleFreeOnTheClassList) {
    SKIP_UNLESS_CHECKED;
    FRESH_POOL;
    EXPECT_DEATH(
        {
            void* p = pool::alloc(64);
            void* keep = pool::alloc(64); // the span is not wholly free after p
            pool::free(p, 64);
            if (pool::detail_state().heads[span_of(p)->slot] == p)
                pool::free(p, 64);
            pool::free(keep, 64);
        },
        std::string("double free: ") + any_block + "is already on the free list of the 64 B class");
}

// Guards a pointer the pool never handed out.
TYPED_TEST(SpanLayoutDeathTest, ForeignPointer) {
    SKIP_UNLESS_CHECKED;
    FRESH_POOL;
    static long not_from_the_pool[4];
    EXPECT_DEATH(pool::free(not_from_the_pool, sizeof not_from_the_pool),
                 std::string("foreign pointer: ") + any_block + "did not come from this pool");
}

// Guards a pointer into a live block: inside a span, but not the start of a block.
TYPED_TEST(SpanLayoutDeathTest, InteriorPointer) {
    SKIP_UNLESS_CHECKED;
    FRESH_POOL;
    EXPECT_DEATH(pool::free(static_cast<std::byte*>(pool::alloc(64)) + 16, 48),
                 std::string("foreign pointer: ") + any_block +
                     "lies in the pool's memory at .+ bytes but is not the start of a "
                     "live block");
}

// Guards the segment map shared by every span pool: a block of another span pool
// lies in a pool segment, yet this pool reports it as not its own.
TYPED_TEST(SpanLayoutDeathTest, BlockOfAnotherSpanPool) {
    SKIP_UNLESS_CHECKED;
    FRESH_POOL;
    struct other_tag {};
    using other = fresh_pool<TypeParam, other_tag>;
    EXPECT_DEATH(
        {
            void* mine = pool::alloc(64); // both pools have a segment
            pool::free(other::alloc(64), 64);
            pool::free(mine, 64);
        },
        std::string("foreign pointer: ") + any_block + "did not come from this pool");
}

} // namespace
