// The C API's heap on the span layout (detail/c_api/span_heap.hpp): c_span_heap, without a
// header for pooled blocks, on fresh pools with both dispatch policies (CSpanHeap). The
// header heap and the extern "C" functions: c_api_test.cpp; what c_span_heap refuses, and
// the freed marks: c_span_heap_refusals_test.cpp. Every test ends with the accounting checker.
#include "c_span_heap_support.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {
using namespace sta_test;
using sta::detail::check_accounting;
using sta::detail::held_block;
using sta::detail::span_of;

template <class Variant>
class CSpanHeap : public ::testing::Test {};
TYPED_TEST_SUITE(CSpanHeap, span_variants, variant_names);

constexpr std::size_t largest_class = sta::detail::max_class_bytes;

/// What a request of `bytes` (1 .. 32 KiB) gets on the span layout: the class of
/// `bytes` rounded up to a multiple of 16 (CS3), in the pool's class set.
template <class Classes>
constexpr std::size_t span_class_of(std::size_t bytes) {
    return sta::detail::bytes_of_size<Classes>((bytes + 15) / 16 * 16);
}

/// Every class a request can take through the C API, smallest first: 16 B, then the
/// class of one byte more than the one before (with quarter classes: 16, 32, 48, 64, 80,
/// 96, ...; 8, 24, 40 and 56 B take no request of the C API).
template <class Classes>
std::vector<std::size_t> c_classes() {
    std::vector<std::size_t> out{span_class_of<Classes>(1)};
    while (out.back() < largest_class)
        out.push_back(span_class_of<Classes>(out.back() + 1));
    return out;
}
static_assert(span_class_of<sta::detail::quarter_classes>(40) == 48 &&
              span_class_of<sta::detail::quarter_classes>(100) == 112 &&
              span_class_of<sta::detail::power_of_two_classes>(40) == 64 &&
              span_class_of<sta::detail::power_of_two_classes>(1) == 16);

/// Requests that land in the class of `class_bytes` (one of c_classes): its lower
/// boundary (one byte above the class below), sizes between, and its upper boundary.
template <class Classes>
std::vector<std::size_t> sizes_of_class(std::size_t class_bytes) {
    if (class_bytes == 16)
        return {1, 2, 7, 8, 9, 15, 16};
    std::size_t below = 16;
    for (std::size_t c : c_classes<Classes>())
        if (c < class_bytes)
            below = c;
    const std::size_t low = below + 1;
    return {low, low + 1, (low + class_bytes) / 2, class_bytes - 1, class_bytes};
}

/// The rule of CS2, written out: above 1 KiB, a request its class would round up by
/// more than a quarter is a poor fit and goes to the private heap with a header.
template <class Classes>
constexpr bool poor_fit(std::size_t bytes) {
    return bytes > 1024 && bytes <= largest_class &&
           span_class_of<Classes>(bytes) - bytes > bytes / 4;
}
static_assert(poor_fit<sta::detail::power_of_two_classes>(1025) &&
              poor_fit<sta::detail::power_of_two_classes>(4300) &&
              !poor_fit<sta::detail::power_of_two_classes>(1024) &&
              !poor_fit<sta::detail::power_of_two_classes>(3277) &&
              poor_fit<sta::detail::power_of_two_classes>(3276) &&
              !poor_fit<sta::detail::power_of_two_classes>(32768));
static_assert(!poor_fit<sta::detail::quarter_classes>(1025) &&
              !poor_fit<sta::detail::quarter_classes>(4300) &&
              !poor_fit<sta::detail::quarter_classes>(3276) &&
              !poor_fit<sta::detail::quarter_classes>(16385));

/// Does the rule of CS2 make any request a poor fit in this class set?
template <class Classes>
constexpr bool any_poor_fit() {
    for (std::size_t n = 1025; n <= largest_class; ++n)
        if (poor_fit<Classes>(n))
            return true;
    return false;
}

/// What usable_size reports for a request of `bytes`: its class when pooled, else the
/// size asked for.
template <class Classes>
constexpr std::size_t usable_of(std::size_t bytes) {
    return bytes > largest_class || poor_fit<Classes>(bytes) ? bytes
                                                             : span_class_of<Classes>(bytes);
}

/// The pool's view of a live block of c_span_heap asked with `bytes`: a pooled block
/// is its whole class (CS1); a big one starts 16 bytes before p (CS2); a poor fit lies
/// in the private heap, which the checker does not walk (a null block).
template <class Classes>
held_block span_held(void* p, std::size_t bytes) {
    if (poor_fit<Classes>(bytes))
        return {nullptr, 0};
    if (bytes <= largest_class)
        return {p, span_class_of<Classes>(bytes)};
    return {static_cast<std::byte*>(p) - 16, bytes + 16};
}

/// The class whose free list holds p (the class's or its span's), 0 when none does.
template <class Pool>
std::size_t on_free_list(const void* p) {
    return Pool::engine::core::free_list_class_of(p);
}

/// The size_t just in front of p: where CS2 keeps a big block's size.
std::size_t stored_size(const void* p) {
    std::size_t bytes;
    std::memcpy(&bytes, static_cast<const std::byte*>(p) - sizeof bytes, sizeof bytes);
    return bytes;
}

// Guards malloc(0): NULL, and no memory is mapped for it.
TYPED_TEST(CSpanHeap, MallocZeroReturnsNull) {
    FRESH_SPAN_HEAP;
    EXPECT_EQ(heap::malloc(0), nullptr);
    EXPECT_EQ(pool::stats().mappings, 0u);
}

// Guards the overflow of size + header on the big path: a huge request fails with
// ENOMEM, malloc and realloc alike, and realloc leaves the old block intact.
TYPED_TEST(CSpanHeap, HugeSizesReturnNullWithEnomem) {
    FRESH_SPAN_HEAP;
    for (std::size_t bytes : {std::size_t{SIZE_MAX}, std::size_t{SIZE_MAX - 15},
                              static_cast<std::size_t>(PTRDIFF_MAX), heap::max_request + 1}) {
        errno = 0;
        EXPECT_EQ(heap::malloc(bytes), nullptr) << bytes;
        EXPECT_EQ(errno, ENOMEM) << bytes;
    }
    auto* small = static_cast<char*>(heap::malloc(10));
    auto* big = static_cast<char*>(heap::malloc(40000));
    ASSERT_NE(small, nullptr);
    ASSERT_NE(big, nullptr);
    std::strcpy(small, "small");
    std::strcpy(big, "big");
    for (char* p : {small, big}) {
        errno = 0;
        EXPECT_EQ(heap::realloc(p, SIZE_MAX), nullptr);
        EXPECT_EQ(errno, ENOMEM);
    }
    EXPECT_STREQ(small, "small");
    EXPECT_STREQ(big, "big");
    EXPECT_EQ(heap::usable_size(small), 16u);
    EXPECT_EQ(heap::usable_size(big), 40000u);
    EXPECT_EQ(tiled<pool>({span_held<classes>(small, 10), span_held<classes>(big, 40000)}), "");
    heap::free(small);
    heap::free(big);
    EXPECT_EQ(tiled<pool>({}), "");
}

// Guards free(NULL) and usable_size(NULL): nothing is read, nothing mapped.
TYPED_TEST(CSpanHeap, FreeOfNullDoesNothing) {
    FRESH_SPAN_HEAP;
    heap::free(nullptr);
    EXPECT_EQ(heap::usable_size(nullptr), 0u);
    EXPECT_EQ(pool::stats().mappings, 0u);
}

// Guards realloc(NULL, n): it is malloc(n), pooled and big.
TYPED_TEST(CSpanHeap, ReallocOfNullIsMalloc) {
    FRESH_SPAN_HEAP;
    void* p = heap::realloc(nullptr, 40);
    void* big = heap::realloc(nullptr, 50000);
    ASSERT_NE(p, nullptr);
    ASSERT_NE(big, nullptr);
    EXPECT_EQ(heap::usable_size(p), span_class_of<classes>(40));
    EXPECT_EQ(heap::usable_size(big), 50000u);
    EXPECT_EQ(tiled<pool>({span_held<classes>(p, 40), span_held<classes>(big, 50000)}), "");
    heap::free(p);
    heap::free(big);
}

// Guards usable_size and the unsized free for every class: a block reports its whole
// class, lies in a span of that class, and free gives it back to that class (it is on
// a free list of the class, or its span is whole again); once all are back the pool
// holds no byte in use.
TYPED_TEST(CSpanHeap, UsableSizeAndFreeForEveryClass) {
    FRESH_SPAN_HEAP;
    using sta::detail::span_role;
    for (std::size_t class_bytes : c_classes<classes>()) {
        std::vector<void*> blocks;
        std::vector<held_block> held;
        for (std::size_t bytes : sizes_of_class<classes>(class_bytes)) {
            if (poor_fit<classes>(bytes))
                continue; // PoorFitsTakeTheirSizeFromThePrivateHeap
            void* p = heap::malloc(bytes);
            ASSERT_NE(p, nullptr) << bytes;
            EXPECT_TRUE(aligned(p, 16)) << bytes;
            EXPECT_EQ(heap::usable_size(p), class_bytes) << bytes;
            EXPECT_EQ(classes::bytes_of_slot(span_of(p)->slot), class_bytes) << bytes;
            std::memset(p, 0xA5, class_bytes); // all of usable_size is the caller's
            blocks.push_back(p);
            held.push_back({p, class_bytes});
        }
        EXPECT_EQ(tiled<pool>(held), "") << class_bytes;
        for (void* p : blocks) {
            const sta::detail::span* sp = span_of(p);
            heap::free(p);
            if (on_free_list<pool>(p) != class_bytes) { // else its span is whole again
                EXPECT_TRUE(sp->role == span_role::clean || sp->role == span_role::purged)
                    << class_bytes;
            }
        }
        EXPECT_EQ(pool::stats().bytes_in_use, 0u) << class_bytes;
        EXPECT_EQ(tiled<pool>({}), "") << class_bytes;
    }
}

// Guards the poor fits (CS2): above 1 KiB, a size its class would round up by more
// than a quarter lies outside the spans with its exact size in the header, frees back
// to the private heap, and good_size says so; the sizes around each boundary of the
// rule go where it says. With quarter classes the rule makes no size a poor fit, and
// all of them lie in spans with their class as usable size.
TYPED_TEST(CSpanHeap, PoorFitsTakeTheirSizeFromThePrivateHeap) {
    FRESH_SPAN_HEAP;
    EXPECT_EQ(heap::has_poor_fits, any_poor_fit<classes>()) << classes::name;
    EXPECT_EQ(heap::fast_limit, any_poor_fit<classes>() ? 1024u : largest_class);
    std::vector<std::pair<void*, std::size_t>> blocks;
    for (std::size_t bytes : {1024u, 1025u, 1600u, 1639u, 1640u, 3276u, 3277u, 4300u, 6553u, 6554u,
                              16385u, 26214u, 26215u, 32768u}) {
        void* p = heap::malloc(bytes);
        ASSERT_NE(p, nullptr) << bytes;
        EXPECT_TRUE(aligned(p, 16)) << bytes;
        EXPECT_EQ(sta::detail::is_pool_segment(p), !poor_fit<classes>(bytes)) << bytes;
        EXPECT_EQ(heap::usable_size(p), usable_of<classes>(bytes)) << bytes;
        EXPECT_EQ(heap::good_size(bytes), usable_of<classes>(bytes)) << bytes;
        if (poor_fit<classes>(bytes)) {
            EXPECT_EQ(stored_size(p), bytes);
        }
        std::memset(p, 0x5A, heap::usable_size(p));
        blocks.emplace_back(p, bytes);
    }
    std::vector<held_block> held;
    for (auto [p, bytes] : blocks)
        held.push_back(span_held<classes>(p, bytes));
    EXPECT_EQ(tiled<pool>(held), "");
    for (auto [p, bytes] : blocks)
        heap::free(p);
    EXPECT_EQ(pool::stats().bytes_in_use, 0u);
    EXPECT_EQ(tiled<pool>({}), "");
}

// Guards realloc between poor fits: the private heap resizes the block (its content
// kept, usable_size the new size), and a move to a good fit goes back into a span.
// Only a class set with poor fits has them (the seed's powers of two); with quarter
// classes the same sizes stay in spans, each in its class, the content kept.
TYPED_TEST(CSpanHeap, ReallocBetweenPoorFitsStaysInThePrivateHeap) {
    FRESH_SPAN_HEAP;
    if constexpr (!heap::has_poor_fits) {
        auto* p = static_cast<unsigned char*>(heap::malloc(4300));
        ASSERT_NE(p, nullptr);
        for (std::size_t i = 0; i < 2100; ++i)
            p[i] = static_cast<unsigned char>(i * 13);
        for (const std::size_t n :
             {std::size_t{4300}, std::size_t{5000}, std::size_t{2100}, std::size_t{4000}}) {
            ASSERT_FALSE(poor_fit<classes>(n)) << n;
            p = static_cast<unsigned char*>(heap::realloc(p, n));
            ASSERT_NE(p, nullptr);
            EXPECT_TRUE(sta::detail::is_pool_segment(p)) << n;
            EXPECT_EQ(heap::usable_size(p), span_class_of<classes>(n)) << n;
        }
        for (std::size_t i = 0; i < 2100; ++i)
            ASSERT_EQ(p[i], static_cast<unsigned char>(i * 13)) << "byte " << i;
        EXPECT_EQ(tiled<pool>({span_held<classes>(p, 4000)}), "");
        heap::free(p);
        return;
    }
    ASSERT_TRUE(poor_fit<classes>(4300) && poor_fit<classes>(5000) && poor_fit<classes>(2100) &&
                !poor_fit<classes>(4000));
    auto* p = static_cast<unsigned char*>(heap::malloc(4300));
    ASSERT_NE(p, nullptr);
    for (std::size_t i = 0; i < 4300; ++i)
        p[i] = static_cast<unsigned char>(i * 13);
    p = static_cast<unsigned char*>(heap::realloc(p, 5000));
    ASSERT_NE(p, nullptr);
    EXPECT_FALSE(sta::detail::is_pool_segment(p));
    EXPECT_EQ(heap::usable_size(p), 5000u);
    p = static_cast<unsigned char*>(heap::realloc(p, 2100));
    ASSERT_NE(p, nullptr);
    EXPECT_FALSE(sta::detail::is_pool_segment(p));
    EXPECT_EQ(heap::usable_size(p), 2100u);
    p = static_cast<unsigned char*>(heap::realloc(p, 4000)); // a good fit of 4 KiB
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(sta::detail::is_pool_segment(p));
    EXPECT_EQ(heap::usable_size(p), span_class_of<classes>(4000));
    for (std::size_t i = 0; i < 2100; ++i)
        ASSERT_EQ(p[i], static_cast<unsigned char>(i * 13)) << "byte " << i;
    EXPECT_EQ(tiled<pool>({span_held<classes>(p, 4000)}), "");
    heap::free(p);
    EXPECT_EQ(tiled<pool>({}), "");
}

// Guards the tier boundary: 32 KiB is the largest pooled block (no header), one byte
// more is a next-tier block with its size in the 16-byte header (CS2); both free back
// to where they came from.
TYPED_TEST(CSpanHeap, TheTierBoundaryIs32KiB) {
    FRESH_SPAN_HEAP;
    void* pooled = heap::malloc(largest_class);
    void* big = heap::malloc(largest_class + 1);
    ASSERT_NE(pooled, nullptr);
    ASSERT_NE(big, nullptr);
    EXPECT_TRUE(sta::detail::is_pool_segment(pooled));
    EXPECT_FALSE(sta::detail::is_pool_segment(big));
    EXPECT_EQ(heap::usable_size(pooled), largest_class);
    EXPECT_EQ(heap::usable_size(big), largest_class + 1);
    EXPECT_EQ(stored_size(big), largest_class + 1);
    EXPECT_TRUE(aligned(pooled, 16));
    EXPECT_TRUE(aligned(big, 16));
    std::memset(pooled, 1, largest_class);
    std::memset(big, 2, largest_class + 1);
    EXPECT_EQ(tiled<pool>({span_held<classes>(pooled, largest_class),
                           span_held<classes>(big, largest_class + 1)}),
              "");
    heap::free(big);
    heap::free(pooled);
    EXPECT_EQ(pool::stats().bytes_in_use, 0u);
    EXPECT_EQ(tiled<pool>({}), "");
}

// Guards the header path above 32 KiB, on both next tiers (the private heap up to
// half a page, malloc above): 16-aligned, usable_size is the size asked for, and the
// whole block is writable.
TYPED_TEST(CSpanHeap, BigBlocksKeepTheirSizeInAHeader) {
    FRESH_SPAN_HEAP;
    const std::size_t half_page = pool::page_bytes() / 2;
    std::vector<void*> blocks;
    const std::vector<std::size_t> sizes{
        largest_class + 1,   40000, 65536, 100000, half_page - 16, half_page - 15,
        std::size_t{3} << 20};
    for (std::size_t bytes : sizes) {
        void* p = heap::malloc(bytes);
        ASSERT_NE(p, nullptr) << bytes;
        EXPECT_TRUE(aligned(p, 16)) << bytes;
        EXPECT_EQ(heap::usable_size(p), bytes);
        std::memset(p, 0x3C, bytes);
        blocks.push_back(p);
    }
    EXPECT_EQ(pool::stats().mappings, 0u); // nothing of this is pooled
    for (void* p : blocks)
        heap::free(p);
    EXPECT_EQ(tiled<pool>({}), "");
}

// Guards realloc within a class: the same pointer for every size of the class, and
// usable_size stays the class.
TYPED_TEST(CSpanHeap, ReallocWithinAClassKeepsThePointer) {
    FRESH_SPAN_HEAP;
    std::vector<held_block> held;
    for (std::size_t class_bytes : c_classes<classes>()) {
        std::vector<std::size_t> sizes = sizes_of_class<classes>(class_bytes);
        std::erase_if(sizes, poor_fit<classes>); // those lie outside the spans
        void* p = heap::malloc(sizes.front());
        void* neighbour = heap::malloc(sizes.front()); // p is not the last block bumped
        ASSERT_NE(p, nullptr);
        for (auto it = sizes.rbegin(); it != sizes.rend(); ++it) {
            EXPECT_EQ(heap::realloc(p, *it), p) << *it;
            EXPECT_EQ(heap::usable_size(p), class_bytes) << *it;
        }
        held.push_back({p, class_bytes});
        held.push_back({neighbour, class_bytes});
    }
    EXPECT_EQ(tiled<pool>(held), "");
    for (const held_block& h : held)
        heap::free(const_cast<void*>(h.p));
    EXPECT_EQ(tiled<pool>({}), "");
}

// Guards the copy when realloc moves: growth and shrinking across classes and across
// the tier boundary both ways keep every byte that fits, and usable_size follows.
TYPED_TEST(CSpanHeap, ReallocAcrossClassesAndTiersKeepsTheContent) {
    FRESH_SPAN_HEAP;
    const auto byte_at = [](std::size_t i) { return static_cast<unsigned char>(i * 31 + 7); };
    std::size_t bytes = 20;
    auto* p = static_cast<unsigned char*>(heap::malloc(bytes));
    ASSERT_NE(p, nullptr);
    for (std::size_t i = 0; i < bytes; ++i)
        p[i] = byte_at(i);
    void* other = heap::malloc(16);
    for (std::size_t next : {100u, 5000u, 32768u, 32769u, 70000u, 600000u, 40000u, 32769u, 32768u,
                             3000u, 17u, 1u, 16u, 33000u, 5u}) {
        p = static_cast<unsigned char*>(heap::realloc(p, next));
        ASSERT_NE(p, nullptr) << next;
        EXPECT_TRUE(aligned(p, 16)) << next;
        EXPECT_EQ(heap::usable_size(p), usable_of<classes>(next));
        for (std::size_t i = 0; i < std::min(bytes, next); ++i)
            ASSERT_EQ(p[i], byte_at(i)) << "byte " << i << " after " << bytes << " -> " << next;
        for (std::size_t i = 0; i < next; ++i)
            p[i] = byte_at(i);
        bytes = next;
    }
    EXPECT_EQ(tiled<pool>({span_held<classes>(p, bytes), span_held<classes>(other, 16)}), "");
    heap::free(p);
    heap::free(other);
    EXPECT_EQ(tiled<pool>({}), "");
}

// Guards realloc(p, 0): it frees p (onto a free list of its class) and returns NULL,
// for a pooled and for a big block.
TYPED_TEST(CSpanHeap, ReallocToZeroFreesAndReturnsNull) {
    FRESH_SPAN_HEAP;
    void* p = heap::malloc(100);
    void* neighbour = heap::malloc(100); // keeps the span from being wholly free
    EXPECT_EQ(on_free_list<pool>(p), 0u);
    EXPECT_EQ(heap::realloc(p, 0), nullptr);
    EXPECT_EQ(on_free_list<pool>(p), span_class_of<classes>(100));
    void* big = heap::malloc(50000);
    EXPECT_EQ(heap::realloc(big, 0), nullptr);
    EXPECT_EQ(tiled<pool>({span_held<classes>(neighbour, 100)}), "");
    heap::free(neighbour);
    EXPECT_EQ(tiled<pool>({}), "");
}

// Guards the alignment promise (CS3): every pointer from malloc and realloc is
// 16-aligned, pooled or big, while they are all live together.
TYPED_TEST(CSpanHeap, EveryPointerIs16Aligned) {
    FRESH_SPAN_HEAP;
    std::vector<std::pair<void*, std::size_t>> blocks;
    for (std::size_t bytes = 1; bytes <= 300; ++bytes)
        blocks.emplace_back(heap::malloc(bytes), bytes);
    for (std::size_t bytes : {4095u, 32767u, 32768u, 32769u, 100000u})
        blocks.emplace_back(heap::malloc(bytes), bytes);
    for (std::size_t i = 0; i < blocks.size(); i += 7) { // move some to other classes
        blocks[i].second = blocks[i].second * 3 + 1;
        blocks[i].first = heap::realloc(blocks[i].first, blocks[i].second);
    }
    std::vector<held_block> held;
    for (auto [p, bytes] : blocks) {
        ASSERT_NE(p, nullptr) << bytes;
        EXPECT_TRUE(aligned(p, 16)) << p << " of " << bytes << " bytes";
        held.push_back(span_held<classes>(p, bytes));
    }
    EXPECT_EQ(tiled<pool>(held), "");
    for (auto [p, bytes] : blocks)
        heap::free(p);
    EXPECT_EQ(tiled<pool>({}), "");
}

// Guards good_size: it is what malloc of that size reports as usable (the class, or
// the size itself for a poor fit), so asking for it takes the same block.
TYPED_TEST(CSpanHeap, GoodSizeIsTheUsableSize) {
    FRESH_SPAN_HEAP;
    for (std::size_t class_bytes : c_classes<classes>()) {
        for (std::size_t bytes : sizes_of_class<classes>(class_bytes)) {
            EXPECT_EQ(heap::good_size(bytes), usable_of<classes>(bytes)) << bytes;
            void* p = heap::malloc(bytes);
            EXPECT_EQ(heap::usable_size(p), heap::good_size(bytes)) << bytes;
            heap::free(p);
        }
    }
    EXPECT_EQ(heap::good_size(0), 0u);
    EXPECT_EQ(heap::good_size(largest_class + 1), largest_class + 1);
    EXPECT_EQ(heap::good_size(SIZE_MAX), SIZE_MAX);
    EXPECT_EQ(tiled<pool>({}), "");
}

// Guards realloc with no memory left: a pooled shrink keeps the block in its class
// (same pointer, contents, usable_size, and its unsized free still exact), a growth
// fails with ENOMEM, and a shrink from above 32 KiB into the pool fails the same way,
// each leaving the old block intact.
TYPED_TEST(CSpanHeap, ReallocWithNoMemoryLeft) {
    FRESH_SPAN_HEAP;
    using pages = limited_pages<tag>;
    pages::budget = 1;
    pool::detail_state().map_pages = &pages::map;
    auto* p = static_cast<unsigned char*>(heap::malloc(4096));
    auto* big = static_cast<unsigned char*>(heap::malloc(40000));
    ASSERT_NE(p, nullptr);
    ASSERT_NE(big, nullptr);
    std::memset(p, 0x42, 4096);
    std::memset(big, 0x24, 40000);
    std::vector<held_block> held;
    while (void* q = heap::malloc(largest_class)) // every clean span is taken
        held.push_back({q, largest_class});
    EXPECT_EQ(pool::stats().spans_clean, 0u);

    EXPECT_EQ(heap::realloc(p, 100), p);
    EXPECT_EQ(heap::usable_size(p), 4096u);
    EXPECT_EQ(p[4095], 0x42);
    errno = 0;
    EXPECT_EQ(heap::realloc(p, 8192), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(heap::realloc(big, 100), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    EXPECT_EQ(heap::usable_size(big), 40000u);
    EXPECT_EQ(p[0], 0x42);
    EXPECT_EQ(big[39999], 0x24);

    held.push_back(span_held<classes>(p, 4096));
    held.push_back(span_held<classes>(big, 40000));
    EXPECT_EQ(tiled<pool>(held), "");
    heap::free(p);
    heap::free(big);
    held.resize(held.size() - 2);
    EXPECT_EQ(tiled<pool>(held), "");
    for (const held_block& h : held)
        heap::free(const_cast<void*>(h.p));
    EXPECT_EQ(tiled<pool>({}), "");
}

} // namespace
