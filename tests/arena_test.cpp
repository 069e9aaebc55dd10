// sta::arena, arena_scope, arena_allocator, arena_resource: one named test per edge
// case. Every test that touches blocks ends with the arena checker (A1..A5, B1..B3),
// and most run on a counting block source, so a block that is mapped but never given
// back fails the test even if its own assertions pass.
#include "sta/arena.hpp"
#include "support/arena_checker.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <list>
#include <map>
#include <memory_resource>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using sta::arena;
using sta::detail::check_arena;

constexpr std::size_t max_size = std::numeric_limits<std::size_t>::max();

/// A block source that counts what it maps and unmaps, and can be told to refuse.
struct counting_source {
    static inline std::size_t maps = 0, unmaps = 0, bytes_out = 0;
    static inline bool refuse = false;
    static void* map(std::size_t bytes) noexcept {
        if (refuse)
            return nullptr;
        void* p = sta::detail::os_map_pages(bytes);
        if (p != nullptr) {
            ++maps;
            bytes_out += bytes;
        }
        return p;
    }
    static void unmap(void* p, std::size_t bytes) noexcept {
        ++unmaps;
        bytes_out -= bytes;
        sta::detail::os_unmap_pages(p, bytes);
    }
    static sta::arena_block_source source() {
        maps = unmaps = bytes_out = 0;
        refuse = false;
        return {&map, &unmap};
    }
};

bool aligned(const void* p, std::size_t alignment) {
    return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

// Guards the bump path: consecutive requests follow each other in one block.
TEST(Arena, BumpAllocationsAreContiguous) {
    arena a;
    auto* p = static_cast<std::byte*>(a.allocate(24, 8));
    auto* q = static_cast<std::byte*>(a.allocate(40, 8));
    auto* r = static_cast<std::byte*>(a.allocate(1, 1));
    EXPECT_EQ(q, p + 24);
    EXPECT_EQ(r, q + 40);
    EXPECT_EQ(a.stats().bytes_used, 65u);
    EXPECT_EQ(check_arena(a), "");
}

// Guards zero-size requests: each gets a distinct, non-null, aligned pointer.
TEST(Arena, ZeroSizeRequestsReturnUniqueNonNullPointers) {
    arena a;
    void* p = a.allocate(0);
    void* q = a.allocate(0);
    void* r = a.allocate(0, 1);
    void* s = a.allocate(0, 1);
    ASSERT_NE(p, nullptr);
    ASSERT_NE(r, nullptr);
    EXPECT_NE(p, q);
    EXPECT_NE(r, s);
    EXPECT_TRUE(aligned(q, arena::default_align));
    EXPECT_EQ(check_arena(a), "");
}

// Guards the padding arithmetic: every power of two up to 4096 is honoured, after
// requests of odd sizes that leave the cursor misaligned.
TEST(Arena, AlignmentsUpTo4096AreHonoured) {
    arena a;
    for (std::size_t align = 1; align <= 4096; align *= 2) {
        ASSERT_NE(a.allocate(3, 1), nullptr);
        void* p = a.allocate(5, align);
        ASSERT_NE(p, nullptr) << "align " << align;
        EXPECT_TRUE(aligned(p, align)) << "align " << align;
        std::memset(p, 0xAB, 5);
    }
    EXPECT_EQ(check_arena(a), "");
}

// Guards alignments the OS page does not give for free: a dedicated block is padded.
TEST(Arena, AlignmentsAbove4096GetADedicatedAlignedBlock) {
    arena a;
    for (std::size_t align : {std::size_t{8192}, std::size_t{65536}, std::size_t{1} << 20}) {
        void* p = a.allocate(100, align);
        ASSERT_NE(p, nullptr) << "align " << align;
        EXPECT_TRUE(aligned(p, align)) << "align " << align;
        std::memset(p, 0xCD, 100);
    }
    EXPECT_EQ(a.stats().dedicated_blocks, 3u);
    EXPECT_EQ(check_arena(a), "");
}

// Guards the mask arithmetic: an alignment that is not a power of two (or 0) is
// refused with nullptr, never rounded into something else.
TEST(Arena, NonPowerOfTwoAlignmentReturnsNull) {
    arena a;
    ASSERT_NE(a.allocate(8), nullptr); // a current block with room exists
    for (std::size_t align : {std::size_t{0}, std::size_t{3}, std::size_t{24}, max_size})
        EXPECT_EQ(a.allocate(8, align), nullptr) << "align " << align;
    EXPECT_EQ(a.stats().bytes_used, 8u);
    EXPECT_EQ(check_arena(a), "");
}

// Guards bytes + align overflow: a request whose size wraps around must fail cleanly
// and leave the arena as it was, not hand out a tiny block.
TEST(Arena, BytesPlusAlignOverflowReturnsNull) {
    auto source = counting_source::source();
    arena a(arena::default_block_bytes, source);
    ASSERT_NE(a.allocate(8), nullptr);
    const sta::arena_stats before = a.stats();
    EXPECT_EQ(a.allocate(max_size), nullptr);
    EXPECT_EQ(a.allocate(max_size - 8, 16), nullptr);
    EXPECT_EQ(a.allocate(max_size - 4095, 4096), nullptr);
    EXPECT_EQ(a.allocate(max_size / 2 + 1, std::size_t{1} << 62), nullptr);
    EXPECT_EQ(a.stats().blocks, before.blocks);
    EXPECT_EQ(a.stats().bytes_used, before.bytes_used);
    EXPECT_EQ(counting_source::maps, 1u);
    EXPECT_EQ(check_arena(a), "");
}

// Guards the typed paths' overflow: n * sizeof(T) wrapping must throw, not allocate.
TEST(Arena, TypedPathsThrowOnSizeOverflow) {
    arena a;
    EXPECT_THROW((void)a.create_array<std::uint64_t>(max_size / 4), std::bad_array_new_length);
    sta::arena_allocator<std::uint64_t> alloc(a);
    EXPECT_THROW((void)alloc.allocate(max_size / 4), std::bad_array_new_length);
    EXPECT_EQ(a.stats().blocks, 0u);
}

// Guards "a request larger than a block gets a block of its own": the big request is
// served, and the current block keeps bumping right where it was.
TEST(Arena, RequestLargerThanABlockGetsItsOwnBlock) {
    auto source = counting_source::source();
    arena a(arena::default_block_bytes, source);
    auto* small = static_cast<std::byte*>(a.allocate(16));
    auto* big = static_cast<std::byte*>(a.allocate(3 * arena::default_block_bytes));
    ASSERT_NE(big, nullptr);
    std::memset(big, 0x5A, 3 * arena::default_block_bytes);
    auto* next = static_cast<std::byte*>(a.allocate(16));
    EXPECT_EQ(next, small + 16);
    const sta::arena_stats s = a.stats();
    EXPECT_EQ(s.blocks, 2u);
    EXPECT_EQ(s.dedicated_blocks, 1u);
    EXPECT_GE(s.bytes_used, 32 + 3 * arena::default_block_bytes);
    EXPECT_EQ(check_arena(a), "");
}

// Guards the waste bound: a request of more than a quarter of a block does not retire
// a block that still has room; it goes to a dedicated block.
TEST(Arena, QuarterBlockRequestDoesNotRetireTheCurrentBlock) {
    arena a;
    auto* first = static_cast<std::byte*>(a.allocate(32));
    for (int i = 1; i < 1875; ++i) // 60000 bytes: less room left than the next request
        ASSERT_NE(a.allocate(32), nullptr);
    ASSERT_NE(a.allocate(a.block_capacity() / 4 + 16), nullptr);
    EXPECT_EQ(a.stats().dedicated_blocks, 1u);
    EXPECT_EQ(a.stats().blocks, 2u);
    EXPECT_EQ(static_cast<std::byte*>(a.allocate(16)), first + 60000);
    EXPECT_EQ(check_arena(a), "");
}

// Guards the block switch: when the current block is full, a new standard block is
// mapped and the request lands in it, aligned.
TEST(Arena, FullBlockMapsANewStandardBlock) {
    arena a(4096);
    std::vector<std::byte*> got;
    for (int i = 0; i < 200; ++i) {
        auto* p = static_cast<std::byte*>(a.allocate(100, 16));
        ASSERT_NE(p, nullptr);
        EXPECT_TRUE(aligned(p, 16));
        std::memset(p, i, 100);
        got.push_back(p);
    }
    for (int i = 0; i < 200; ++i)
        EXPECT_EQ(got[i][99], static_cast<std::byte>(i)) << "block " << i << " was overwritten";
    EXPECT_GT(a.stats().blocks, 4u);
    EXPECT_EQ(a.stats().dedicated_blocks, 0u);
    EXPECT_EQ(check_arena(a), "");
}

// Guards out-of-memory: the raw path returns nullptr, the typed paths throw bad_alloc.
TEST(Arena, OutOfMemoryReturnsNullFromRawPathAndThrowsFromTypedPaths) {
    auto source = counting_source::source();
    arena a(arena::default_block_bytes, source);
    counting_source::refuse = true;
    EXPECT_EQ(a.allocate(16), nullptr);
    EXPECT_EQ(a.allocate(1 << 20), nullptr);
    EXPECT_THROW((void)a.create<int>(1), std::bad_alloc);
    sta::arena_allocator<int> alloc(a);
    EXPECT_THROW((void)alloc.allocate(4), std::bad_alloc);
    sta::arena_resource resource(a);
    EXPECT_THROW((void)resource.allocate(8, 8), std::bad_alloc);
    EXPECT_EQ(check_arena(a), "");
    counting_source::refuse = false;
    EXPECT_NE(a.allocate(16), nullptr);
}

// Guards release(): every block goes back to the source, none is kept.
TEST(Arena, ReleaseGivesEveryBlockBack) {
    auto source = counting_source::source();
    {
        arena a(4096, source);
        for (int i = 0; i < 100; ++i)
            ASSERT_NE(a.allocate(200), nullptr);
        ASSERT_NE(a.allocate(100000), nullptr);
        a.release();
        EXPECT_EQ(counting_source::maps, counting_source::unmaps);
        EXPECT_EQ(counting_source::bytes_out, 0u);
        const sta::arena_stats s = a.stats();
        EXPECT_EQ(s.blocks, 0u);
        EXPECT_EQ(s.bytes_reserved, 0u);
        EXPECT_EQ(s.bytes_used, 0u);
        EXPECT_EQ(check_arena(a), "");
    }
    EXPECT_EQ(counting_source::bytes_out, 0u);
}

// Guards reuse after release: the arena starts over with fresh blocks.
TEST(Arena, ReleaseThenReuse) {
    auto source = counting_source::source();
    arena a(arena::default_block_bytes, source);
    ASSERT_NE(a.allocate(1000), nullptr);
    a.release();
    auto* p = static_cast<char*>(a.allocate(1000));
    ASSERT_NE(p, nullptr);
    std::memset(p, 'x', 1000);
    EXPECT_EQ(a.stats().blocks, 1u);
    EXPECT_EQ(a.stats().bytes_used, 1000u);
    EXPECT_EQ(counting_source::maps, 2u);
    EXPECT_EQ(check_arena(a), "");
}

// Guards the destructor: an arena that goes out of scope gives everything back.
TEST(Arena, DestructorReleases) {
    auto source = counting_source::source();
    {
        arena a(4096, source);
        for (int i = 0; i < 50; ++i)
            ASSERT_NE(a.allocate(300), nullptr);
    }
    EXPECT_EQ(counting_source::maps, counting_source::unmaps);
    EXPECT_EQ(counting_source::bytes_out, 0u);
}

// Guards reset(): the first block stays mapped and empty, the next allocation starts
// at its beginning again without asking the source.
TEST(Arena, ResetKeepsTheFirstBlock) {
    auto source = counting_source::source();
    arena a(4096, source);
    void* first = a.allocate(64);
    for (int i = 0; i < 100; ++i)
        ASSERT_NE(a.allocate(200), nullptr);
    ASSERT_NE(a.allocate(50000), nullptr);
    const std::size_t maps_before = counting_source::maps;
    a.reset();
    sta::arena_stats s = a.stats();
    EXPECT_EQ(s.blocks, 1u);
    EXPECT_EQ(s.dedicated_blocks, 0u);
    EXPECT_EQ(s.bytes_reserved, 4096u);
    EXPECT_EQ(s.bytes_used, 0u);
    EXPECT_EQ(counting_source::bytes_out, 4096u);
    EXPECT_EQ(check_arena(a), "");
    EXPECT_EQ(a.allocate(64), first);
    EXPECT_EQ(counting_source::maps, maps_before);
}

// Guards reset() of an arena that never allocated: nothing to keep, nothing breaks.
TEST(Arena, ResetOfAnEmptyArenaIsHarmless) {
    arena a;
    a.reset();
    EXPECT_EQ(a.stats().blocks, 0u);
    EXPECT_EQ(check_arena(a), "");
    EXPECT_NE(a.allocate(1), nullptr);
}

// Guards the scoped marker: allocations inside a scope are given back when it ends,
// and the next allocation reuses the same address.
TEST(Arena, ScopeRewindsToWhereItStarted) {
    arena a;
    ASSERT_NE(a.allocate(100), nullptr);
    void* inside = nullptr;
    {
        sta::arena_scope scope(a);
        inside = a.allocate(500);
        ASSERT_NE(a.allocate(700), nullptr);
    }
    EXPECT_EQ(a.stats().bytes_used, 100u);
    EXPECT_EQ(a.allocate(500), inside);
    EXPECT_EQ(check_arena(a), "");
}

// Guards nested markers: the inner scope rewinds to its own start, the outer to its.
TEST(Arena, NestedScopesRewindInnermostFirst) {
    auto source = counting_source::source();
    arena a(4096, source);
    ASSERT_NE(a.allocate(48), nullptr);
    {
        sta::arena_scope outer(a);
        ASSERT_NE(a.allocate(1000), nullptr);
        const std::size_t used_outer = a.stats().bytes_used;
        {
            sta::arena_scope inner(a);
            for (int i = 0; i < 40; ++i) // spills into new blocks
                ASSERT_NE(a.allocate(1000), nullptr);
            ASSERT_NE(a.allocate(20000), nullptr); // and a dedicated one
            EXPECT_GT(a.stats().blocks, 5u);
        }
        EXPECT_EQ(a.stats().bytes_used, used_outer);
        EXPECT_EQ(a.stats().blocks, 1u);
        EXPECT_EQ(check_arena(a), "");
    }
    EXPECT_EQ(a.stats().bytes_used, 48u);
    EXPECT_EQ(counting_source::bytes_out, 4096u);
    EXPECT_EQ(check_arena(a), "");
}

// Guards a marker taken on an empty arena: rewinding keeps the first block (like
// reset) instead of unmapping and remapping it on every use of the scope.
TEST(Arena, ScopeOnAnEmptyArenaKeepsTheFirstBlock) {
    auto source = counting_source::source();
    arena a(4096, source);
    for (int round = 0; round < 3; ++round) {
        sta::arena_scope scope(a);
        for (int i = 0; i < 30; ++i)
            ASSERT_NE(a.allocate(500), nullptr);
    }
    EXPECT_EQ(a.stats().blocks, 1u);
    EXPECT_EQ(a.stats().bytes_used, 0u);
    EXPECT_EQ(check_arena(a), "");
}

// Guards a stale marker: rewinding to a mark from before a reset() must not move the
// cursor forward over memory handed out after the reset.
TEST(Arena, StaleMarkAfterResetNeverResurrectsMemory) {
    arena a(4096);
    for (int i = 0; i < 4; ++i)
        ASSERT_NE(a.allocate(500), nullptr);
    const sta::arena_mark m = a.mark();
    a.reset();
    auto* p = static_cast<std::byte*>(a.allocate(100));
    a.rewind(m);
    EXPECT_EQ(a.stats().bytes_used, 100u);
    EXPECT_EQ(static_cast<std::byte*>(a.allocate(16)), p + 112);
    EXPECT_EQ(check_arena(a), "");
}

// Guards out-of-order rewinds: rewinding an outer mark, then an inner one, must not
// give back what was allocated between them after the outer rewind... nor crash.
TEST(Arena, OutOfOrderRewindNeverTakesBackMemoryFromBeforeItsMark) {
    arena a(4096);
    ASSERT_NE(a.allocate(64), nullptr);
    const sta::arena_mark outer = a.mark();
    for (int i = 0; i < 20; ++i)
        ASSERT_NE(a.allocate(500), nullptr);
    const sta::arena_mark inner = a.mark();
    ASSERT_NE(a.allocate(500), nullptr);
    a.rewind(outer);
    auto* kept = static_cast<char*>(a.allocate(64)); // after the outer rewind
    std::memset(kept, 'k', 64);
    a.rewind(inner); // its block is gone: nothing after `kept` is older than `inner`
    EXPECT_EQ(a.stats().bytes_used, 128u);
    EXPECT_EQ(check_arena(a), "");
}

struct point {
    int x, y;
};
struct counted {
    static inline int destroyed = 0;
    std::string text;
    explicit counted(std::string t) : text(std::move(t)) {}
    ~counted() { ++destroyed; }
};

// Guards typed creation: the object is constructed in place with its arguments.
TEST(Arena, CreateConstructsInPlace) {
    arena a;
    point* p = a.create<point>(3, 4);
    EXPECT_EQ(p->x, 3);
    EXPECT_EQ(p->y, 4);
    EXPECT_TRUE(aligned(p, alignof(point)));
    auto* arr = a.create_array<double>(10);
    for (int i = 0; i < 10; ++i)
        EXPECT_EQ(arr[i], 0.0);
    EXPECT_TRUE(aligned(arr, alignof(double)));
}

// Guards the documented contract: create_never_destroyed runs no destructor, not even
// at release.
TEST(Arena, CreateNeverDestroyedRunsNoDestructor) {
    counted::destroyed = 0;
    {
        arena a;
        counted* c = a.create_never_destroyed<counted>("short");
        EXPECT_EQ(c->text, "short");
        a.release();
    }
    EXPECT_EQ(counted::destroyed, 0);
}

// Guards containers on arena_allocator: vector, string, map and list work, their
// memory comes from the arena, and deallocate is a no-op.
TEST(ArenaAllocator, StdContainersWork) {
    arena a;
    using string = std::basic_string<char, std::char_traits<char>, sta::arena_allocator<char>>;
    std::vector<int, sta::arena_allocator<int>> v(a);
    for (int i = 0; i < 10000; ++i)
        v.push_back(i);
    const char* text = "a string long enough to leave the small buffer";
    string s(text, a);
    s += s;
    std::map<int, string, std::less<>, sta::arena_allocator<std::pair<const int, string>>> m(a);
    for (int i = 0; i < 100; ++i)
        m.emplace(i, string(std::to_string(i) + " is a number with a long description", a));
    std::list<double, sta::arena_allocator<double>> l(a);
    for (int i = 0; i < 100; ++i)
        l.push_front(i);
    EXPECT_EQ(v[9999], 9999);
    EXPECT_EQ(s.size(), 2 * std::strlen(text));
    EXPECT_EQ(m.at(42), "42 is a number with a long description");
    EXPECT_EQ(l.front(), 99.0);
    EXPECT_GT(a.stats().bytes_used, 10000 * sizeof(int));
    EXPECT_EQ(check_arena(a), "");
}

// Guards allocator equality: equal when sharing an arena, also across rebinding.
TEST(ArenaAllocator, EqualityFollowsTheArena) {
    arena a, b;
    sta::arena_allocator<int> ia(a), ib(b);
    sta::arena_allocator<double> da(a);
    EXPECT_TRUE(ia == da);
    EXPECT_FALSE(ia == ib);
    sta::arena_allocator<char> ca(ia);
    EXPECT_EQ(&ca.get_arena(), &a);
}

// Guards move-assignment between arenas: with no propagation the elements are copied
// into the target's arena, so the target does not point into the source's arena.
TEST(ArenaAllocator, MoveAssignmentBetweenArenasCopiesIntoTheTarget) {
    arena a, b;
    std::vector<int, sta::arena_allocator<int>> va(a), vb(b);
    va.assign(1000, 7);
    const std::size_t b_before = b.stats().bytes_used;
    vb = std::move(va);
    EXPECT_EQ(vb.size(), 1000u);
    EXPECT_EQ(&vb.get_allocator().get_arena(), &b);
    EXPECT_GE(b.stats().bytes_used, b_before + 1000 * sizeof(int));
}

// Guards the pmr view: pmr containers work, bad alignments throw, equality is per arena.
TEST(ArenaResource, PmrContainersAndErrors) {
    arena a, b;
    sta::arena_resource ra(a), ra2(a), rb(b);
    std::pmr::vector<std::pmr::string> v(&ra);
    for (int i = 0; i < 1000; ++i)
        v.emplace_back("pmr string number " + std::to_string(i) + " on an arena");
    EXPECT_EQ(v[999], "pmr string number 999 on an arena");
    EXPECT_GT(a.stats().bytes_used, 1000 * sizeof(std::pmr::string));
    volatile std::size_t three = 3; // not a constant: clang would refuse to compile it
    EXPECT_THROW((void)ra.allocate(8, three), std::invalid_argument);
    EXPECT_TRUE(ra.is_equal(ra2));
    EXPECT_FALSE(ra.is_equal(rb));
    void* p = ra.allocate(64, 4096);
    EXPECT_TRUE(aligned(p, 4096));
    ra.deallocate(p, 64, 4096); // a no-op
    EXPECT_EQ(check_arena(a), "");
}

// Guards the block-size parameter: bad sizes throw, a good one is used for every block.
TEST(Arena, BlockSizeIsValidated) {
    EXPECT_THROW(arena(2048), std::invalid_argument);
    EXPECT_THROW(arena(3 * 4096), std::invalid_argument);
    EXPECT_THROW(arena(std::size_t{1} << 31), std::invalid_argument);
    auto source = counting_source::source();
    arena a(std::size_t{1} << 20, source);
    ASSERT_NE(a.allocate(10), nullptr);
    EXPECT_EQ(a.stats().bytes_reserved, std::size_t{1} << 20);
    EXPECT_EQ(a.block_bytes(), std::size_t{1} << 20);
}

// The backbone: a seeded random walk of allocations of every size and alignment, with
// nested marks and rewinds, resets and releases. Every live region carries a pattern;
// patterns are verified before each region is given back and at the end, and the
// checker runs after every step.
TEST(Arena, RandomWalkKeepsPatternsAndInvariants) {
    auto source = counting_source::source();
    arena a(8192, source);
    std::mt19937_64 rng(20240506);
    struct region {
        unsigned char* p;
        std::size_t bytes;
        unsigned char fill;
    };
    std::vector<region> live;
    std::vector<std::pair<sta::arena_mark, std::size_t>> marks; // mark, live.size()
    auto verify = [&](const region& r) {
        for (std::size_t i = 0; i < r.bytes; ++i)
            if (r.p[i] != r.fill)
                return false;
        return true;
    };
    for (int step = 0; step < 20000; ++step) {
        const unsigned op = rng() % 100;
        if (op < 85) {
            const std::size_t bytes =
                rng() % 8 == 0 ? rng() % 40000 : rng() % 300; // some dedicated, mostly small
            const std::size_t align = std::size_t{1} << (rng() % 13);
            auto* p = static_cast<unsigned char*>(a.allocate(bytes, align));
            ASSERT_NE(p, nullptr);
            ASSERT_TRUE(aligned(p, align));
            const auto fill = static_cast<unsigned char>(rng());
            std::memset(p, fill, bytes);
            live.push_back({p, bytes, fill});
        } else if (op < 92) {
            marks.emplace_back(a.mark(), live.size());
        } else if (op < 98) {
            if (marks.empty())
                continue;
            const auto [m, count] = marks.back();
            marks.pop_back();
            for (const region& r : live)
                ASSERT_TRUE(verify(r)) << "step " << step;
            live.resize(count);
            a.rewind(m);
        } else {
            for (const region& r : live)
                ASSERT_TRUE(verify(r)) << "step " << step;
            live.clear();
            marks.clear();
            if (op == 98)
                a.reset();
            else
                a.release();
        }
        ASSERT_EQ(check_arena(a), "") << "step " << step;
    }
    for (const region& r : live)
        ASSERT_TRUE(verify(r));
    a.release();
    EXPECT_EQ(counting_source::bytes_out, 0u);
}

// Guards the block cache: a block one arena released is the block the next arena on
// the thread bumps in, with no new mapping.
TEST(ArenaBlockCache, ReleasedBlockIsReusedByTheNextArena) {
    sta::arena_block_cache::trim();
    void* first = nullptr;
    {
        arena a;
        first = a.allocate(100);
    }
    EXPECT_EQ(sta::arena_block_cache::cached_bytes(), arena::default_block_bytes);
    arena b;
    EXPECT_EQ(b.allocate(100), first);
    EXPECT_EQ(sta::arena_block_cache::cached_bytes(), 0u);
}

// Guards the cache limit: released blocks beyond it go back to the OS.
TEST(ArenaBlockCache, KeepsNoMoreThanItsLimit) {
    sta::arena_block_cache::trim();
    const std::size_t limit = sta::arena_block_cache::limit_bytes();
    sta::arena_block_cache::set_limit_bytes(2 * arena::default_block_bytes);
    {
        arena a;
        for (int i = 0; i < 17; ++i) // four fit in a block: five blocks
            ASSERT_NE(a.allocate(16000), nullptr);
        EXPECT_EQ(a.stats().blocks, 5u);
    }
    EXPECT_EQ(sta::arena_block_cache::cached_bytes(), 2 * arena::default_block_bytes);
    sta::arena_block_cache::set_limit_bytes(limit);
    sta::arena_block_cache::trim();
    EXPECT_EQ(sta::arena_block_cache::cached_bytes(), 0u);
}

// Guards the cache's size rule: a dedicated block of an odd size is unmapped, not kept.
TEST(ArenaBlockCache, DedicatedBlocksOfOddSizesAreNotCached) {
    sta::arena_block_cache::trim();
    {
        arena a;
        ASSERT_NE(a.allocate(200000), nullptr);
        EXPECT_EQ(a.stats().dedicated_blocks, 1u);
    }
    EXPECT_EQ(sta::arena_block_cache::cached_bytes(), 0u);
}

// Guards the opt-out: with os_block_source every release unmaps.
TEST(ArenaBlockCache, OsBlockSourceBypassesTheCache) {
    sta::arena_block_cache::trim();
    {
        arena a(arena::default_block_bytes, sta::os_block_source());
        ASSERT_NE(a.allocate(100), nullptr);
    }
    EXPECT_EQ(sta::arena_block_cache::cached_bytes(), 0u);
}

// Guards the thread rule of the cache: blocks released on another thread go to that
// thread's cache (emptied when it ends), not to this one's.
TEST(ArenaBlockCache, EachThreadHasItsOwnCache) {
    sta::arena_block_cache::trim();
    std::thread t([] {
        arena a;
        (void)a.allocate(100);
        a.release();
        EXPECT_EQ(sta::arena_block_cache::cached_bytes(), arena::default_block_bytes);
    });
    t.join();
    EXPECT_EQ(sta::arena_block_cache::cached_bytes(), 0u);
}

#if defined(STA_POOL_ASAN) && STA_POOL_ASAN
// Guards the sanitizer hooks: memory that reset() took back is poisoned, so a read of
// a pointer from before the reset is reported instead of silently seeing new data.
TEST(ArenaDeathTest, UseAfterResetIsReportedUnderAsan) {
    EXPECT_DEATH(
        {
            arena a;
            auto* p = static_cast<volatile char*>(a.allocate(64));
            p[0] = 1;
            a.reset();
            (void)p[0];
        },
        "use-after-poison");
}

// Guards the hooks' precision: a request unpoisons exactly its bytes, so reading one
// byte past it (inside the block) is reported.
TEST(ArenaDeathTest, ReadPastARequestIsReportedUnderAsan) {
    EXPECT_DEATH(
        {
            arena a;
            auto* p = static_cast<volatile char*>(a.allocate(24));
            (void)p[24];
        },
        "use-after-poison");
}
#endif

#if STA_POOL_CHECKS
// Guards the thread rule in checked builds: a second thread calling an arena owned by
// the first dies with a message naming both threads.
TEST(ArenaDeathTest, AnotherThreadIsCaught) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            arena a;
            (void)a.allocate(8);
            std::thread t([&] { (void)a.allocate(8); });
            t.join();
        },
        "called from thread .*, but the arena belongs to thread ");
}

// Guards the hand-over: after release() another thread may take the arena.
TEST(Arena, ReleaseHandsTheArenaToAnotherThread) {
    arena a;
    (void)a.allocate(8);
    a.release();
    std::thread t([&] {
        EXPECT_NE(a.allocate(8), nullptr);
        a.release();
    });
    t.join();
    EXPECT_NE(a.allocate(8), nullptr);
}
#endif

} // namespace
