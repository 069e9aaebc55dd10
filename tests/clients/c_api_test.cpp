// The C API (sta/pool.h): malloc-style calls whose free has no size. Its header heap
// (detail/c_api/header_heap.hpp) is tested on fresh pools: c_header_heap, with its per-block
// header, on the shared-cursor layout with both header sizes (CHeap); the span heap has a
// file of its own (c_span_heap_test.cpp). The extern "C" functions themselves run on
// sta::memory_pool, from C++ and from C (c_api_from_c.c). Every fresh-pool test ends with
// the accounting checker.
#define STA_POOL_C_IMPLEMENTATION
#include "sta/pool.h"

#include "../support/pool_test_support.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

extern "C" int sta_c_api_from_c(void);

namespace {
using namespace sta_test;
using sta::detail::check_accounting;
using sta::detail::held_block;

template <std::size_t Header>
struct header_size {
    static constexpr std::size_t value = Header;
};
using header_sizes = ::testing::Types<header_size<8>, header_size<16>>;

struct header_names {
    template <class T>
    static std::string GetName(int) {
        return "header" + std::to_string(T::value);
    }
};

/// c_header_heap serves the seed's layout (pool.h): its tests run on that layout.
using cursor_variant = variant<sta::dispatch::default_policy, sta::layout::shared_cursor>;

template <class Header>
class CHeap : public ::testing::Test {};
TYPED_TEST_SUITE(CHeap, header_sizes, header_names);

#define FRESH_HEAP                                                                                 \
    struct tag {};                                                                                 \
    using pool = fresh_pool<cursor_variant, tag>;                                                  \
    using heap = sta::detail::c_header_heap<pool, TypeParam::value>;                               \
    [[maybe_unused]] constexpr std::size_t header = TypeParam::value

template <class Pool>
std::string tiled(const std::vector<held_block>& held) {
    std::vector<held_block> in_pool; // a null block: a poor fit, which no span holds
    std::copy_if(held.begin(), held.end(), std::back_inserter(in_pool),
                 [](const held_block& h) { return h.p != nullptr; });
    return check_accounting<Pool>(in_pool);
}

/// The pool's view of a live C block: its block starts `header` bytes before p.
template <class Heap>
held_block held(void* p) {
    return {static_cast<std::byte*>(p) - Heap::header_bytes,
            sta::detail::class_bytes_of_size(Heap::usable_size(p) + Heap::header_bytes)};
}

// Guards malloc(0): it must not hand out a block whose header says 0 (free would
// then give the pool the wrong size).
TYPED_TEST(CHeap, MallocZeroReturnsNull) {
    FRESH_HEAP;
    EXPECT_EQ(heap::malloc(0), nullptr);
    EXPECT_EQ(pool::stats().mappings, 0u);
}

// Guards the size + header overflow: a huge request must fail, not wrap to a tiny block.
TYPED_TEST(CHeap, HugeSizesReturnNullWithEnomem) {
    FRESH_HEAP;
    for (std::size_t bytes : {SIZE_MAX, SIZE_MAX - header + 1, heap::max_request + 1}) {
        errno = 0;
        EXPECT_EQ(heap::malloc(bytes), nullptr) << bytes;
        EXPECT_EQ(errno, ENOMEM);
    }
    void* p = heap::malloc(10);
    errno = 0;
    EXPECT_EQ(heap::realloc(p, SIZE_MAX), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    EXPECT_EQ(heap::usable_size(p), 10u); // the old block is intact
    heap::free(p);
    EXPECT_EQ(tiled<pool>({}), "");
}

// Guards free(NULL): it must not read a header in front of address 0.
TYPED_TEST(CHeap, FreeOfNullDoesNothing) {
    FRESH_HEAP;
    heap::free(nullptr);
    EXPECT_EQ(heap::usable_size(nullptr), 0u);
    EXPECT_EQ(pool::stats().mappings, 0u);
}

// Guards realloc(NULL, n): it is malloc(n), with a header.
TYPED_TEST(CHeap, ReallocOfNullIsMalloc) {
    FRESH_HEAP;
    void* p = heap::realloc(nullptr, 40);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(heap::usable_size(p), 40u);
    EXPECT_EQ(tiled<pool>({held<heap>(p)}), "");
    heap::free(p);
}

// Guards realloc(p, 0) as defined here: p is freed (its block is the next one of its
// class) and the result is NULL.
TYPED_TEST(CHeap, ReallocToZeroFreesAndReturnsNull) {
    FRESH_HEAP;
    void* p = heap::malloc(100);
    EXPECT_EQ(heap::realloc(p, 0), nullptr);
    EXPECT_EQ(heap::malloc(100), p);
    heap::free(p);
    EXPECT_EQ(tiled<pool>({}), "");
}

// Guards the header: free must give the pool exactly the block it allocated, so the
// block comes back for the same class and the pages stay tiled.
TYPED_TEST(CHeap, FreeReturnsTheBlockToItsClass) {
    FRESH_HEAP;
    for (std::size_t bytes : {1u, 7u, 8u, 9u, 24u, 100u, 1000u, 4000u, 32760u}) {
        void* p = heap::malloc(bytes);
        ASSERT_NE(p, nullptr);
        std::memset(p, 0x5A, bytes);
        heap::free(p);
        EXPECT_EQ(pool::alloc(bytes + header), static_cast<std::byte*>(p) - header) << bytes;
        pool::free(static_cast<std::byte*>(p) - header, bytes + header);
    }
    EXPECT_EQ(tiled<pool>({}), "");
}

// Guards the alignment promise: every pointer is aligned to the header size.
TYPED_TEST(CHeap, PointersAreAlignedToTheHeader) {
    FRESH_HEAP;
    std::vector<void*> blocks;
    for (std::size_t bytes = 1; bytes < 300; ++bytes)
        blocks.push_back(heap::malloc(bytes));
    blocks.push_back(heap::malloc(100000));
    std::vector<held_block> live;
    for (void* p : blocks) {
        EXPECT_TRUE(aligned(p, header)) << p;
        if (heap::usable_size(p) + header <= 32768)
            live.push_back(held<heap>(p));
    }
    EXPECT_EQ(tiled<pool>(live), "");
    for (void* p : blocks)
        heap::free(p);
}

// Guards usable_size: it is the size last asked for, through every realloc.
TYPED_TEST(CHeap, UsableSizeFollowsRealloc) {
    FRESH_HEAP;
    void* p = heap::malloc(10);
    EXPECT_EQ(heap::usable_size(p), 10u);
    p = heap::realloc(p, 3000);
    EXPECT_EQ(heap::usable_size(p), 3000u);
    p = heap::realloc(p, 50000);
    EXPECT_EQ(heap::usable_size(p), 50000u);
    p = heap::realloc(p, 20);
    EXPECT_EQ(heap::usable_size(p), 20u);
    heap::free(p);
    EXPECT_EQ(tiled<pool>({}), "");
}

// Guards good_size (SQLite's xRoundup): asking for it takes the same class as asking
// for n, and one byte more takes the next class.
TYPED_TEST(CHeap, GoodSizeFillsTheClassExactly) {
    FRESH_HEAP;
    for (std::size_t bytes : {1u, 5u, 30u, 100u, 1000u, 20000u}) {
        const std::size_t good = heap::good_size(bytes);
        EXPECT_GE(good, bytes);
        EXPECT_EQ(sta::detail::class_bytes_of_size(good + header),
                  sta::detail::class_bytes_of_size(bytes + header));
        EXPECT_GT(sta::detail::class_bytes_of_size(good + 1 + header),
                  sta::detail::class_bytes_of_size(bytes + header));
        void* p = heap::malloc(bytes);
        heap::free(p);
        EXPECT_EQ(heap::malloc(good), p);
        heap::free(p);
    }
    EXPECT_EQ(heap::good_size(100), 128 - header);
    EXPECT_EQ(tiled<pool>({}), "");
}

// Guards good_size where the pool has no classes: 0, and sizes for the next tiers.
TYPED_TEST(CHeap, GoodSizeOutsideThePoolIsTheSize) {
    FRESH_HEAP;
    EXPECT_EQ(heap::good_size(0), 0u);
    EXPECT_EQ(heap::good_size(32768 - header), 32768 - header);
    EXPECT_EQ(heap::good_size(32768 - header + 1), 32768 - header + 1);
    EXPECT_EQ(heap::good_size(SIZE_MAX), SIZE_MAX);
}

// Guards realloc within a class and every shrink inside the pool: same pointer.
TYPED_TEST(CHeap, ReallocWithinTheClassAndShrinksKeepThePointer) {
    FRESH_HEAP;
    void* p = heap::malloc(1000);
    void* keep = heap::malloc(8); // p is no longer the last block bumped
    EXPECT_EQ(heap::realloc(p, 1024 - header), p);
    EXPECT_EQ(heap::realloc(p, 100), p);
    EXPECT_EQ(heap::realloc(p, 1), p);
    EXPECT_EQ(tiled<pool>({held<heap>(p), held<heap>(keep)}), "");
    heap::free(p);
    heap::free(keep);
}

// Guards the copy when realloc moves: contents survive growth across classes and
// tiers and a shrink back into the pool.
TYPED_TEST(CHeap, ReallocKeepsTheContentsAcrossClassesAndTiers) {
    FRESH_HEAP;
    auto* p = static_cast<unsigned char*>(heap::malloc(50));
    for (int i = 0; i < 50; ++i)
        p[i] = static_cast<unsigned char>(i);
    void* other = heap::malloc(16); // forces a move on growth
    for (std::size_t bytes : {200u, 5000u, 70000u, 300000u, 40u}) {
        p = static_cast<unsigned char*>(heap::realloc(p, bytes));
        ASSERT_NE(p, nullptr);
        for (int i = 0; i < 40; ++i)
            ASSERT_EQ(p[i], i) << "after realloc to " << bytes;
    }
    EXPECT_EQ(tiled<pool>({held<heap>(p), held<heap>(other)}), "");
    heap::free(p);
    heap::free(other);
}

// Guards realloc failure: NULL, errno, and the old block valid with its contents.
TYPED_TEST(CHeap, FailedReallocLeavesTheOldBlockIntact) {
    FRESH_HEAP;
    pool::detail_state().map_pages = &limited_pages<tag>::map;
    limited_pages<tag>::budget = 1;
    auto* p = static_cast<char*>(heap::malloc(20));
    ASSERT_NE(p, nullptr);
    std::strcpy(p, "still here");
    std::vector<void*> filler;
    while (void* q = heap::malloc(1000)) // 1000 + header: the 1 KiB class, until no page
        filler.push_back(q);
    errno = 0;
    EXPECT_EQ(heap::realloc(p, 1000), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    EXPECT_STREQ(p, "still here");
    EXPECT_EQ(heap::usable_size(p), 20u);
    EXPECT_EQ(heap::realloc(p, 12), p); // a shrink still works without memory
    std::vector<held_block> live{held<heap>(p)};
    for (void* q : filler)
        live.push_back(held<heap>(q));
    EXPECT_EQ(tiled<pool>(live), "");
    for (void* q : filler)
        heap::free(q);
    heap::free(p);
}

// Guards the checked-build diagnostics the C API inherits: a double free is reported
// (under ASan, reading the freed header is reported first).
TYPED_TEST(CHeap, DoubleFreeIsReported) {
#if !STA_POOL_CHECKS
    GTEST_SKIP() << "STA_POOL_CHECKS is off in this build";
#endif
    FRESH_HEAP;
    EXPECT_DEATH(
        {
            void* p = heap::malloc(24);
            heap::free(p);
            heap::free(p);
        },
        "double free|use-after-poison");
}

// Guards a damaged header (a write just before the block): the pool sees a size that
// is not the block's and says so, instead of filing the block under another class.
TYPED_TEST(CHeap, DamagedHeaderIsReportedAsSizeMismatch) {
#if !STA_POOL_CHECKS
    GTEST_SKIP() << "STA_POOL_CHECKS is off in this build";
#endif
    FRESH_HEAP;
    EXPECT_DEATH(
        {
            auto* p = static_cast<unsigned char*>(heap::malloc(24));
            p[-8] ^= 0x40; // the low byte of the stored size
            heap::free(p);
        },
        "size mismatch");
}

// Guards the thread rule through the C API: another thread's free is stopped.
TYPED_TEST(CHeap, FreeFromAnotherThreadIsReported) {
#if !STA_POOL_CHECKS
    GTEST_SKIP() << "STA_POOL_CHECKS is off in this build";
#endif
    FRESH_HEAP;
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            void* p = heap::malloc(24);
            std::thread([p] { heap::free(p); }).join();
        },
        "called from thread [0-9]+, but the pool belongs to thread [0-9]+");
}

/// What a request of `bytes` (1 .. 32 KiB) gets on the span layout: the class of
/// `bytes` rounded up to a multiple of 16 (CS3), in the pool's class set.
template <class Classes>
constexpr std::size_t span_class_of(std::size_t bytes) {
    return sta::detail::bytes_of_size<Classes>((bytes + 15) / 16 * 16);
}

// Guards the extern "C" functions on sta::memory_pool: the same contract as the heap.
TEST(CApi, ExternCFunctionsFollowTheContract) {
    constexpr bool spans = std::is_same_v<sta::memory_pool::layout_policy, sta::layout::spans>;
    EXPECT_EQ(sta_malloc(0), nullptr);
    sta_free(nullptr);
    auto* p = static_cast<char*>(sta_realloc(nullptr, 6));
    ASSERT_NE(p, nullptr);
    std::memcpy(p, "hello", 6);
    EXPECT_EQ(sta_usable_size(p), spans ? 16u : 6u);
    p = static_cast<char*>(sta_realloc(p, 100000));
    ASSERT_NE(p, nullptr);
    EXPECT_STREQ(p, "hello");
    EXPECT_EQ(sta_usable_size(p), 100000u);
    EXPECT_EQ(sta_good_size(100), spans ? span_class_of<sta::memory_pool::classes>(100)
                                        : 128u - STA_POOL_C_HEADER_BYTES);
    EXPECT_EQ(sta_realloc(p, 0), nullptr);
}

// sta_pool_stats_json: the default family's figures as one JSON object (on spans a block
// held shows in its bytes in use), its whole length the result, cut to a short buffer.
TEST(CApi, StatsJsonDescribesTheFamily) {
    constexpr bool spans = std::is_same_v<sta::memory_pool::layout_policy, sta::layout::spans>;
    void* p = sta_malloc(4000);
    char buffer[8192];
    const std::size_t length = sta_pool_stats_json(buffer, sizeof buffer);
    ASSERT_LT(length, sizeof buffer);
    EXPECT_EQ(std::strlen(buffer), length);
    const char prefix[] = "{\"bytes\": {\"in_use\": ";
    ASSERT_EQ(std::strncmp(buffer, prefix, sizeof prefix - 1), 0) << buffer;
    EXPECT_EQ(buffer[length - 1], '}');
    if (spans) {
        EXPECT_GE(std::strtoull(buffer + sizeof prefix - 1, nullptr, 10), 4000u) << buffer;
    }
    char cut[8];
    EXPECT_EQ(sta_pool_stats_json(cut, sizeof cut), length);
    EXPECT_EQ(std::strlen(cut), sizeof cut - 1);
    sta_free(p);
}

// Guards C linkage and use from a C translation unit (c_api_from_c.c returns the
// line of the first failed check, or 0).
TEST(CApi, UsableFromC) {
    EXPECT_EQ(sta_c_api_from_c(), 0);
}

} // namespace
