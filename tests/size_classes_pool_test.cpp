// Size classes through the pools (issue 26): the span layout under the inline-branch
// dispatch serves the quarter classes (pool/size_class.hpp), the C API over it rounds
// requests to 16 (c_api/span_heap.hpp), the drop-in's memalign takes aligned classes
// (c_api/malloc_heap.hpp), and the table dispatch keeps the seed's powers of two. Every
// test has a pool family of its own and ends with the span checker (S1..S13).
#include "support/class_sets.hpp"
#include "support/pool_test_support.hpp"
#include "support/span_checker.hpp"

#include "sta/detail/c_api/span_heap.hpp"
#if !defined(_WIN32) // the drop-in malloc's semantics: Linux only (src/malloc)
#include "sta/detail/c_api/malloc_heap.hpp"
#endif

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace {
using sta::detail::check_spans;
using sta::detail::free_verdict;
using sta::detail::held_block;
using sta::detail::is_pool_segment;
using sta::detail::max_class_bytes;
using sta::detail::quarter_classes;
using sta::detail::span;
using sta::detail::span_begin;
using sta::detail::span_bytes;
using sta::detail::span_limit;
using sta::detail::span_of;
using sta_test::aligned;

/// The pool with quarter classes: the span layout under the inline-branch dispatch.
template <class Tag>
using quarter_pool = sta::basic_memory_pool<sta::dispatch::inline_branch, Tag, sta::layout::spans>;
/// The span layout under the seed's tables: the seed's powers of two.
template <class Tag>
using power_of_two_pool =
    sta::basic_memory_pool<sta::dispatch::self_rewriting_table, Tag, sta::layout::spans>;

/// In a test: `pool` is a quarter-class pool family of the test's own, `classes` its set.
#define QUARTER_POOL                                                                               \
    struct tag {};                                                                                 \
    using pool = quarter_pool<tag>;                                                                \
    using classes = typename pool::classes;                                                        \
    if (!std::is_same_v<classes, quarter_classes>)                                                 \
    GTEST_SKIP() << "built with STA_POOL_QUARTER_CLASSES=0"

using sta_test::class_entry;
using sta_test::classes_of;

std::size_t round_up_16(std::size_t n) {
    return (n + 15) & ~std::size_t{15};
}

/// Bytes 0..n-1 of p: a pattern that depends on `seed` and the offset.
void fill(void* p, std::size_t n, std::size_t seed) {
    auto* b = static_cast<unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i)
        b[i] = static_cast<unsigned char>(seed * 131 + i * 7 + 1);
}
bool intact(const void* p, std::size_t n, std::size_t seed) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i)
        if (b[i] != static_cast<unsigned char>(seed * 131 + i * 7 + 1))
            return false;
    return true;
}

/// Allocates `bytes` with `alloc` until one span of its class is full; checks that the
/// span holds exactly capacity = 64 KiB / class blocks at [begin, limit), each once,
/// that the next block lies in another span (the tail is never handed out), that the
/// span checker finds every block tiled while held, that the release checks refuse the
/// tail, and that the span comes clean once they are all back (free_block).
template <class Pool, class Alloc, class Free>
void fill_one_span(std::size_t class_bytes, Alloc alloc, Free free_block) {
    std::vector<void*> blocks{alloc()};
    ASSERT_NE(blocks.front(), nullptr);
    const span* const sp = span_of(blocks.front());
    ASSERT_EQ(sp->block_bytes, class_bytes);
    const std::size_t capacity = span_bytes / class_bytes;
    ASSERT_EQ(sp->capacity, capacity);
    std::byte* const begin = span_begin(sp);
    std::byte* const limit = span_limit(sp);
    ASSERT_EQ(limit, begin + capacity * class_bytes);
    ASSERT_EQ(static_cast<std::size_t>(begin + span_bytes - limit), span_bytes % class_bytes);
    while (blocks.size() < capacity) {
        blocks.push_back(alloc());
        ASSERT_NE(blocks.back(), nullptr);
    }
    // Every block of the span, once, on its boundary: sorted, they are block 0, 1, ...
    std::vector<void*> sorted = blocks;
    std::sort(sorted.begin(), sorted.end(), std::less<>{});
    for (std::size_t i = 0; i < capacity; ++i)
        ASSERT_EQ(sorted[i], begin + i * class_bytes) << "block " << i << " of " << capacity;
    void* const next = alloc(); // the span is spent: not its tail, another span
    ASSERT_NE(next, nullptr);
    EXPECT_NE(span_of(next), sp);
    EXPECT_FALSE(next >= static_cast<void*>(limit) &&
                 next < static_cast<void*>(begin + span_bytes));

    std::vector<held_block> held;
    for (void* p : blocks)
        held.push_back({p, class_bytes});
    held.push_back({next, class_bytes});
    EXPECT_EQ(check_spans<Pool>(held), "");

    // The release checks refuse the tail: its first byte is a block boundary of the
    // class (index == capacity), and any byte past it is off the boundaries.
    if (limit < begin + span_bytes) {
        using core = typename Pool::engine::core;
        for (std::byte* p = limit; p < begin + span_bytes; p += 8) {
            EXPECT_EQ(core::block_state(p), free_verdict::not_a_block) << p - begin;
            EXPECT_EQ(core::release_checked(p), free_verdict::not_a_block) << p - begin;
            // free_in_span_checked is that check behind the pool's hooks; a checked
            // build's registry (STA_POOL_CHECKS) would abort on the unknown pointer first.
            if constexpr (STA_POOL_CHECKS == 0) {
                EXPECT_EQ(Pool::free_in_span_checked(p), free_verdict::not_a_block) << p - begin;
            }
        }
        EXPECT_EQ(check_spans<Pool>(held), ""); // nothing changed
    }

    for (void* p : blocks)
        free_block(p);
    free_block(next);
    EXPECT_EQ(check_spans<Pool>({}), "");
    sta::detail::flush_caches<Pool>();
    EXPECT_EQ(sp->role, sta::detail::span_role::clean);
}

/// fill_one_span through the pool's sized API.
template <class Pool>
void fill_one_span_sized(std::size_t bytes) {
    fill_one_span<Pool>(
        bytes, [bytes] { return Pool::alloc(bytes); }, [bytes](void* p) { Pool::free(p, bytes); });
}

// Guards the pool's use of its class set: both sizes of every class edge, the class's
// bytes and one more, get a block of a span of their class (block_bytes and slot),
// aligned to class_alignment, on a block boundary.
TEST(QuarterPool, BoundarySizesGetBlocksInSpansOfTheirClass) {
    QUARTER_POOL;
    const std::vector<class_entry> all = classes_of<classes>();
    std::vector<held_block> held;
    for (std::size_t i = 0; i < all.size(); ++i) {
        const class_entry& c = all[i];
        void* const p = pool::alloc(c.bytes);
        ASSERT_NE(p, nullptr) << c.bytes;
        held.push_back({p, c.bytes});
        EXPECT_EQ(span_of(p)->block_bytes, c.bytes);
        EXPECT_EQ(span_of(p)->slot, c.slot) << c.bytes;
        EXPECT_TRUE(aligned(p, sta::detail::class_alignment(c.bytes))) << c.bytes;
        EXPECT_EQ(static_cast<std::size_t>(static_cast<std::byte*>(p) - span_begin(span_of(p))) %
                      c.bytes,
                  0u)
            << c.bytes;
        void* const q = pool::alloc(c.bytes + 1);
        ASSERT_NE(q, nullptr) << c.bytes + 1;
        held.push_back({q, c.bytes + 1});
        if (i + 1 < all.size()) {
            EXPECT_EQ(span_of(q)->block_bytes, all[i + 1].bytes) << c.bytes + 1;
            EXPECT_EQ(span_of(q)->slot, all[i + 1].slot) << c.bytes + 1;
            EXPECT_TRUE(aligned(q, sta::detail::class_alignment(all[i + 1].bytes))) << c.bytes + 1;
        } else {
            EXPECT_FALSE(is_pool_segment(q)); // 32 KiB + 1: the next tier
            EXPECT_TRUE(aligned(q, 16));
        }
    }
    EXPECT_EQ(check_spans<pool>(held), "");
    for (const held_block& h : held)
        pool::free(const_cast<void*>(h.p), h.bytes);
    EXPECT_EQ(check_spans<pool>({}), "");
}

// Guards the sized free at every class edge: a block of the class's first size, its
// last (its bytes) and one more goes back to the class the size names, which hands it
// out again at once (its cache, LIFO).
TEST(QuarterPool, SizedFreeAtEveryClassBoundaryReturnsTheBlockToItsClass) {
    QUARTER_POOL;
    std::size_t below = 0;
    for (const class_entry& c : classes_of<classes>()) {
        for (const std::size_t n : {below + 1, c.bytes, c.bytes + 1}) {
            void* const p = pool::alloc(n);
            ASSERT_NE(p, nullptr) << n;
            sta::detail::flush_caches<pool>(); // the caches have room for p
            pool::free(p, n);
            void* const again = pool::alloc(n);
            if (n <= max_class_bytes) {
                EXPECT_EQ(again, p) << n;
            }
            pool::free(again, n);
        }
        below = c.bytes;
    }
    EXPECT_EQ(check_spans<pool>({}), "");
}

// Guards the sized realloc between quarter classes: a resize within a class keeps the
// pointer; one byte past the class moves the block to the next class with its content,
// and a shrink back moves it down again, content kept.
TEST(QuarterPool, ReallocKeepsThePointerWithinAClassAndMovesTheContentAcross) {
    QUARTER_POOL;
    const std::vector<class_entry> all = classes_of<classes>();
    std::size_t below = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
        const class_entry& c = all[i];
        void* const p = pool::alloc(below + 1);
        ASSERT_NE(p, nullptr);
        fill(p, below + 1, i);
        void* const same = pool::realloc(p, below + 1, c.bytes);
        EXPECT_EQ(same, p) << below + 1 << " -> " << c.bytes;
        EXPECT_TRUE(intact(same, below + 1, i)) << c.bytes;
        fill(same, c.bytes, i);
        void* const up = pool::realloc(same, c.bytes, c.bytes + 1);
        ASSERT_NE(up, nullptr);
        EXPECT_NE(up, same) << c.bytes << " -> " << c.bytes + 1;
        EXPECT_TRUE(intact(up, c.bytes, i)) << c.bytes << " -> " << c.bytes + 1;
        if (i + 1 < all.size()) {
            EXPECT_EQ(span_of(up)->block_bytes, all[i + 1].bytes);
        }
        void* const down = pool::realloc(up, c.bytes + 1, below + 1);
        ASSERT_NE(down, nullptr);
        EXPECT_NE(down, up) << c.bytes + 1 << " -> " << below + 1;
        EXPECT_EQ(span_of(down)->block_bytes, c.bytes);
        EXPECT_TRUE(intact(down, below + 1, i)) << c.bytes + 1 << " -> " << below + 1;
        pool::free(down, below + 1);
        below = c.bytes;
    }
    EXPECT_EQ(check_spans<pool>({}), "");
}

// Guards the C API's usable size: every request 1..32 KiB takes the class of its size
// rounded up to 16 (8, 24, 40 and 56 B blocks are never handed out), 16-aligned.
TEST(QuarterPool, CApiUsableSizeIsTheClassOfTheSizeRoundedTo16) {
    QUARTER_POOL;
    using heap = sta::detail::c_span_heap<pool>;
    std::size_t wrong = 0, first_wrong = 0;
    for (std::size_t n = 1; n <= max_class_bytes; ++n) {
        void* const p = heap::malloc(n);
        ASSERT_NE(p, nullptr) << n;
        const std::size_t expected = sta::detail::bytes_of_size<classes>(round_up_16(n));
        const bool ok = heap::usable_size(p) == expected && expected % 16 == 0 &&
                        span_of(p)->block_bytes == expected && aligned(p, 16);
        if (!ok && wrong++ == 0)
            first_wrong = n;
        heap::free(p);
    }
    EXPECT_EQ(wrong, 0u) << "first wrong size " << first_wrong;
    for (const class_entry& c : classes_of<classes>()) { // each class's own bytes
        void* const p = heap::malloc(c.bytes);
        EXPECT_EQ(heap::usable_size(p), c.bytes % 16 == 0 ? c.bytes : c.bytes + 8) << c.bytes;
        heap::free(p);
    }
    EXPECT_EQ(check_spans<pool>({}), "");
}

// Guards the C API's claim that quarter classes have no poor fits (every request up to
// 32 KiB takes the fast path), where the seed's powers of two have them above 1 KiB.
TEST(QuarterPool, CApiHasNoPoorFitsWithQuarterClassesButHasThemWithPowersOfTwo) {
    QUARTER_POOL;
    struct seed_tag {};
    using seed_heap = sta::detail::c_span_heap<power_of_two_pool<seed_tag>>;
    using heap = sta::detail::c_span_heap<pool>;
    EXPECT_FALSE(heap::has_poor_fits);
    EXPECT_EQ(heap::fast_limit, max_class_bytes);
    EXPECT_TRUE(seed_heap::has_poor_fits);
    EXPECT_TRUE(seed_heap::poor_fit(4300)); // 8 KiB for 4.3 KB
    EXPECT_FALSE(heap::poor_fit(4300));
    EXPECT_EQ(heap::good_size(4300), 5120u);
}

// Guards the C API's realloc between the classes it hands out (multiples of 16): a
// resize within a class keeps the pointer, one byte past it moves the block with its
// content, and back down again moves it back.
TEST(QuarterPool, CApiReallocKeepsThePointerWithinAClassAndMovesTheContentAcross) {
    QUARTER_POOL;
    using heap = sta::detail::c_span_heap<pool>;
    std::size_t below = 0, index = 0;
    for (const class_entry& c : classes_of<classes>()) {
        if (c.bytes % 16 != 0) // 8, 24, 40, 56: the C API never takes them
            continue;
        ++index;
        void* const p = heap::malloc(below + 1);
        ASSERT_NE(p, nullptr);
        EXPECT_EQ(heap::usable_size(p), c.bytes);
        fill(p, below + 1, index);
        void* const same = heap::realloc(p, c.bytes);
        EXPECT_EQ(same, p) << below + 1 << " -> " << c.bytes;
        fill(same, c.bytes, index);
        void* const up = heap::realloc(same, c.bytes + 1);
        ASSERT_NE(up, nullptr);
        EXPECT_NE(up, same) << c.bytes << " -> " << c.bytes + 1;
        EXPECT_TRUE(intact(up, c.bytes, index)) << c.bytes << " -> " << c.bytes + 1;
        EXPECT_GE(heap::usable_size(up), c.bytes + 1);
        void* const down = heap::realloc(up, below + 1);
        ASSERT_NE(down, nullptr);
        EXPECT_EQ(heap::usable_size(down), c.bytes) << c.bytes + 1 << " -> " << below + 1;
        EXPECT_TRUE(intact(down, below + 1, index)) << c.bytes + 1 << " -> " << below + 1;
        heap::free(down);
        below = c.bytes;
    }
    EXPECT_EQ(check_spans<pool>({}), "");
}

// Guards the 24 B class (8-aligned, 2730 blocks and a 16-byte tail): its span fills
// exactly, every block once, and the tail is neither handed out nor freed.
TEST(QuarterPool, ASpanOf24ByteBlocksFillsExactlyAndKeepsItsTail) {
    QUARTER_POOL;
    ASSERT_NO_FATAL_FAILURE(fill_one_span_sized<pool>(24));
}

// Guards the 80 B class (819 blocks, a 16-byte tail): the same, through the sized API.
TEST(QuarterPool, ASpanOf80ByteBlocksFillsExactlyAndKeepsItsTail) {
    QUARTER_POOL;
    ASSERT_NO_FATAL_FAILURE(fill_one_span_sized<pool>(80));
}

// Guards the 112 B class (585 blocks, a 16-byte tail): the same, through the sized API.
TEST(QuarterPool, ASpanOf112ByteBlocksFillsExactlyAndKeepsItsTail) {
    QUARTER_POOL;
    ASSERT_NO_FATAL_FAILURE(fill_one_span_sized<pool>(112));
}

// Guards every class at once: each one's span fills exactly and tiles, the tail of each
// class that does not divide 64 KiB (up to 28 KiB: 2 blocks, an 8 KiB tail) refused.
TEST(QuarterPool, ASpanOfEveryClassFillsExactlyAndKeepsItsTail) {
    QUARTER_POOL;
    for (const class_entry& c : classes_of<classes>()) {
        SCOPED_TRACE(c.bytes);
        ASSERT_NO_FATAL_FAILURE(fill_one_span_sized<pool>(c.bytes));
    }
}

// Guards the C API's frees without a size over a span whose class leaves a tail (80 B
// from malloc(65..80)): the span fills exactly, its tail is refused, and every block
// freed by its span comes back.
TEST(QuarterPool, CApiFillsASpanOf80ByteBlocksAndRefusesItsTail) {
    QUARTER_POOL;
    using heap = sta::detail::c_span_heap<pool>;
    ASSERT_NO_FATAL_FAILURE(fill_one_span<pool>(
        80, [] { return heap::malloc(65); }, [](void* p) { heap::free(p); }));
}

#if !defined(_WIN32)
// Guards the drop-in's memalign over quarter classes: for every alignment 32..4096 and
// sizes around each multiple of it up to 32 KiB and past, the block is aligned, holds
// the size, and (pooled) lies in a span whose class is a multiple of the alignment.
TEST(QuarterPool, MallocHeapMemalignReturnsAlignedBlocks) {
    QUARTER_POOL;
    using heap = sta::detail::malloc_heap<pool>;
    for (std::size_t a = 32; a <= 4096; a *= 2) {
        std::size_t wrong = 0, first_wrong = 0;
        for (std::size_t k = 0; k * a <= max_class_bytes + a; ++k)
            for (const std::size_t n : {k * a - (k == 0 ? 0 : 1), k * a, k * a + 1}) {
                void* const p = heap::memalign(a, n);
                if (p == nullptr) {
                    ++wrong;
                    continue;
                }
                bool ok = aligned(p, a) && heap::usable_size(p) >= n;
                const std::size_t request = sta::detail::aligned_request(n, a);
                if (request <= max_class_bytes)
                    ok = ok && is_pool_segment(p) && span_of(p)->block_bytes % a == 0 &&
                         heap::usable_size(p) == sta::detail::bytes_of_size<classes>(request);
                else
                    ok = ok && !is_pool_segment(p);
                if (!ok && wrong++ == 0)
                    first_wrong = n;
                if (n != 0)
                    std::memset(p, 0x5a, n);
                heap::free(p);
            }
        EXPECT_EQ(wrong, 0u) << "alignment " << a << ", first wrong size " << first_wrong;
    }
    EXPECT_EQ(check_spans<pool>({}), "");
}
#endif

// Guards the seed's mode: the span layout under the table dispatch still takes the
// seed's powers of two, so every block of every size is in a power-of-two class.
TEST(PowerOfTwoPool, TheTableDispatchOnSpansKeepsThePowersOfTwo) {
    struct tag {};
    using pool = power_of_two_pool<tag>;
    static_assert(std::is_same_v<pool::classes, sta::detail::power_of_two_classes>);
    EXPECT_EQ(pool::stats().class_count, 13u);
    std::size_t wrong = 0, first_wrong = 0;
    for (std::size_t n = 1; n <= max_class_bytes; ++n) {
        void* const p = pool::alloc(n);
        ASSERT_NE(p, nullptr) << n;
        const std::size_t block = span_of(p)->block_bytes;
        const bool ok = std::has_single_bit(block) &&
                        block == std::bit_ceil(std::max<std::size_t>(n, 8)) &&
                        aligned(p, std::min<std::size_t>(block, 16));
        if (!ok && wrong++ == 0)
            first_wrong = n;
        pool::free(p, n);
    }
    EXPECT_EQ(wrong, 0u) << "first wrong size " << first_wrong;
    EXPECT_EQ(check_spans<pool>({}), "");
}

// Guards the default pool's choice: sta::memory_pool on the span layout takes the
// quarter classes (STA_POOL_QUARTER_CLASSES), 44 of them in its stats.
TEST(QuarterPool, TheDefaultPoolOnSpansTakesTheQuarterClasses) {
    if (!std::is_same_v<sta::layout::default_layout, sta::layout::spans> ||
        STA_POOL_QUARTER_CLASSES == 0)
        GTEST_SKIP() << "the default pool is not the span layout with quarter classes";
    EXPECT_TRUE((std::is_same_v<sta::memory_pool::classes, quarter_classes>));
    struct tag {};
    using pool = quarter_pool<tag>;
    const sta::pool_stats stats = pool::stats();
    ASSERT_EQ(stats.class_count, 44u);
    for (std::uint32_t i = 0; i < stats.class_count; ++i)
        EXPECT_EQ(stats.classes[i].block_bytes, quarter_classes::bytes_of_slot(i)) << i;
}

} // namespace
