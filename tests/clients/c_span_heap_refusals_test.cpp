// What the C API's heap on the span layout (detail/c_api/span_heap.hpp) refuses: a
// double free and an interior pointer in a checked build, and, in a family with freed
// marks (the drop-in's, pool/freed_mark.hpp M1-M5), a block freed twice, on one thread or
// two, and a free block written after its free. Fresh pools with both dispatch policies
// (CSpanHeapRefusals). The C functions themselves: c_span_heap_test.cpp.
#include "c_span_heap_support.hpp"

#include "sta/detail/pool/freed_mark.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {
using namespace sta_test;

template <class Variant>
class CSpanHeapRefusals : public ::testing::Test {};
TYPED_TEST_SUITE(CSpanHeapRefusals, span_variants, variant_names);

// Guards a double free through the unsized free: without a header to read, the span
// names the class and the checked build reports the block on its span's list.
TYPED_TEST(CSpanHeapRefusals, DoubleFreeIsReported) {
#if !STA_POOL_CHECKS
    GTEST_SKIP() << "STA_POOL_CHECKS is off in this build";
#endif
    FRESH_SPAN_HEAP;
    EXPECT_DEATH(
        {
            void* p = heap::malloc(24);
            heap::free(p);
            heap::free(p);
        },
        "double free: block .+ is already on the free list of the 32 B class");
}

// Guards a pointer into a block (not its start): the span gives it a class, but the
// checked build sees it is no live block instead of filing it as one.
TYPED_TEST(CSpanHeapRefusals, InteriorPointerIsReported) {
#if !STA_POOL_CHECKS
    GTEST_SKIP() << "STA_POOL_CHECKS is off in this build";
#endif
    FRESH_SPAN_HEAP;
    EXPECT_DEATH(
        {
            auto* p = static_cast<std::byte*>(heap::malloc(64));
            heap::free(p + 16);
        },
        "foreign pointer: block .+ lies in the pool's memory");
}

/// The tag of a family with freed marks, as the drop-in's (pool/freed_mark.hpp): one
/// family for each line that names it (a local class may not hold the static member).
template <int Line>
struct marked_tag {
    static constexpr bool freed_marks = true;
};
#define FRESH_MARKED_SPAN_HEAP                                                                     \
    using pool = fresh_pool<TypeParam, marked_tag<__LINE__>>;                                      \
    using heap = sta::detail::c_span_heap<pool>;                                                   \
    static_assert(heap::marked_frees)

// M1: a block freed holds the freed mark — on its class's cache, or in its bitmap after a
// flush — until malloc hands it out again without it.
TYPED_TEST(CSpanHeapRefusals, MarkedFreesMarkABlockUntilItIsHandedOutAgain) {
    FRESH_MARKED_SPAN_HEAP;
    std::vector<void*> blocks;
    for (int i = 0; i < 3000; ++i) { // more than a flush's interval: some reach the bitmap
        void* const p = heap::malloc(48);
        ASSERT_NE(p, nullptr);
        std::memset(p, 0x5a, 48);
        blocks.push_back(p);
    }
    for (void* p : blocks)
        heap::free(p);
    for (void* p : blocks)
        EXPECT_TRUE(sta::detail::has_freed_mark(p, sta::detail::process_secret())) << p;
    for (void*& p : blocks) {
        p = heap::malloc(48);
        ASSERT_NE(p, nullptr);
        EXPECT_FALSE(sta::detail::has_any_mark(p, sta::detail::process_secret())) << p;
    }
    for (void* p : blocks)
        heap::free(p);
    EXPECT_EQ(tiled<pool>({}), "");
}

// M2: a block freed twice is refused, whether it waits on its class's cache or the flush
// sent it to its bitmap; the message is the checked build's or the release checks'.
TYPED_TEST(CSpanHeapRefusals, MarkedFreesRefuseABlockFreedTwice) {
    FRESH_MARKED_SPAN_HEAP;
    EXPECT_DEATH(
        {
            void* p = heap::malloc(24);
            heap::free(p);
            heap::free(p);
        },
        "double free");
    EXPECT_DEATH(
        {
            void* p = heap::malloc(24);
            heap::free(p);
            for (int i = 0; i < 3000; ++i)
                heap::free(heap::malloc(200));
            heap::free(p);
        },
        "double free");
}

// M2 while the frees outrun the allocations (direct_frees) and the class's cache is
// empty, where a free does not read its block (layout/spans.hpp, frees_unread): a block
// free in its class's window is refused, though its bit is clear and its words unread.
TYPED_TEST(CSpanHeapRefusals, MarkedFreesInABurstRefuseABlockOfTheWindow) {
    FRESH_MARKED_SPAN_HEAP;
    auto& st = pool::detail_state();
    std::vector<void*> small, other;
    for (int i = 0; i < 4000; ++i) {
        small.push_back(heap::malloc(48));
        other.push_back(heap::malloc(200));
    }
    const std::uint32_t slot = sta::detail::span_of(small[0])->slot;
    for (void* p : small) // a burst: their bits set
        heap::free(p);
    // Allocations until the class takes a word of freed blocks into its window (a refill:
    // the caches take frees again), then a burst of another class's frees.
    for (int i = 0; (st.window[slot] == nullptr || st.bits[slot] == 0) && i < 100000; ++i)
        small.push_back(heap::malloc(48));
    ASSERT_NE(st.bits[slot], 0u);
    for (void* p : other)
        heap::free(p);
    ASSERT_TRUE(st.direct_frees);
    ASSERT_EQ(st.heads[slot], nullptr);
    void* const in_window =
        sta::detail::block_at(st.window[slot], sta::detail::lowest_bit(st.bits[slot]),
                              sta::detail::span_class_bytes(sta::detail::span_of(st.window[slot])));
    EXPECT_DEATH(heap::free(in_window), "double free");
}

// M3 and M4 while the frees outrun the allocations and the class's cache is empty: a block
// another thread freed, freed again by its owner before the owner took it back, is
// refused: when the owner drains it (its link in the inbox is overwritten by the mark),
// or, in a checked build, at the owner's free.
TYPED_TEST(CSpanHeapRefusals, MarkedFreesInABurstRefuseABlockOnItsWayHome) {
    FRESH_MARKED_SPAN_HEAP;
    auto& st = pool::detail_state();
    EXPECT_DEATH(
        {
            std::vector<void*> other;
            for (int i = 0; i < 4000; ++i)
                other.push_back(heap::malloc(200));
            void* const p = heap::malloc(100);
            for (void* q : other) // a burst
                heap::free(q);
            std::thread([p] { heap::free(p); }).join(); // in the owner's inbox
            if (!st.direct_frees || st.heads[sta::detail::span_of(p)->slot] != nullptr)
                std::abort(); // not the case this test is for: no message, the test fails
            heap::free(p);
            for (int i = 0; i < 100000; ++i) // the owner drains its inbox at a refill
                heap::free(heap::malloc(64));
        },
        "double free|overwritten|not the start of a live block"); // the release checks' or
                                                                  // the checked build's
}

// M4: a free block whose mark a write after free destroyed is refused before malloc
// follows its link (which the same write could have forged).
TYPED_TEST(CSpanHeapRefusals, MarkedFreesRefuseAFreeBlockOverwritten) {
    FRESH_MARKED_SPAN_HEAP;
    EXPECT_DEATH(
        {
            void* p = heap::malloc(32);
            heap::free(p);
            sta::detail::hooks::store_link(p, reinterpret_cast<void*>(0x4141414141414140));
            sta::detail::hooks::store_mark(p, 0x4141414141414141);
            (void)heap::malloc(32);
            (void)heap::malloc(32);
        },
        "free block .+ was overwritten");
}

// M4: a write after free of the link word alone — to an address the attacker chose, or of
// its low byte only — is refused at the pop of the block written, before the link is
// followed; so is a write of both words with the constant an unkeyed mark would have.
TYPED_TEST(CSpanHeapRefusals, MarkedFreesRefuseALinkWrittenAfterFree) {
    FRESH_MARKED_SPAN_HEAP;
    alignas(64) static std::byte target[256];
    // Two blocks freed onto the class's cache, the later one written as `write` says, then
    // the malloc that pops it.
    const auto pop_after = [](auto write) {
        void* a = heap::malloc(32);
        void* p = heap::malloc(32);
        heap::free(a);
        heap::free(p);
        write(p);
        (void)heap::malloc(32);
    };
    const char* const refused = "malloc\\(\\): free block .+ was overwritten";
    EXPECT_DEATH(pop_after([](void* p) { sta::detail::hooks::store_link(p, target + 64); }),
                 refused);
    EXPECT_DEATH(pop_after([](void* p) { // the link's low byte
                     const auto link =
                         reinterpret_cast<std::uintptr_t>(sta::detail::hooks::load_link(p));
                     sta::detail::hooks::store_link(p, reinterpret_cast<void*>(link ^ 0x40));
                 }),
                 refused);
    EXPECT_DEATH(pop_after([](void* p) {
                     constexpr std::uint64_t unkeyed = 0xa5f15e3d9c2b7e01ull; // a constant mark's
                     sta::detail::hooks::store_mark(target + 64, unkeyed);
                     sta::detail::hooks::store_link(p, target + 64);
                     sta::detail::hooks::store_mark(p, unkeyed);
                 }),
                 refused);
}

// M5: the key is the process's secret: odd, and the same at every call.
TEST(FreedMarks, TheKeyIsOddAndTheSameAtEveryCall) {
    const std::uint64_t key = sta::detail::new_mark_key();
    EXPECT_EQ(key & 1, 1u);
    EXPECT_EQ(sta::detail::new_mark_key(), key);
    std::uint64_t other = 0;
    std::thread([&other] { other = sta::detail::new_mark_key(); }).join();
    EXPECT_EQ(other, key);
}

// M3: a block its owner freed and another thread frees again is refused at that free (a
// checked build's registry answers first: the block is no live block of the pool).
TYPED_TEST(CSpanHeapRefusals, MarkedFreesRefuseAnOwnersBlockFreedAgainOnAnotherThread) {
    FRESH_MARKED_SPAN_HEAP;
    static_assert(TypeParam::threads::threaded, "span_variants are per-thread pools");
    EXPECT_DEATH(
        {
            void* p = heap::malloc(100);
            heap::free(p);
            std::thread([p] { heap::free(p); }).join();
        },
        "double free|did not come from this pool"); // the release checks' or the checked build's
}

} // namespace
