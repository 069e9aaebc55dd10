// sta::thread_heap: the seeded random walk with fill-and-verify and the accounting
// checker (detail::check_thread_heap), plus one named test per edge case: coalescing
// left / right / both, chunk release and the cached spare, realloc in place, out of
// memory through a failing page source, huge sizes, misuse in checked builds.
#include "sta/thread_heap.hpp"
#include "support/thread_heap_checker.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <vector>

namespace {

using sta::thread_heap;
using sta::detail::check_thread_heap;
using held = sta::detail::thread_heap_held;

// A heap usable from any global constructor: constant-initialised, nothing mapped.
constinit thread_heap global_heap;

/// A page source that counts and can be told to refuse.
struct counting_source {
    static inline int maps = 0;
    static inline int unmaps = 0;
    static inline int budget = 1 << 30; // maps left before it refuses
    static void reset(int new_budget = 1 << 30) {
        maps = unmaps = 0;
        budget = new_budget;
    }
    static void* map(std::size_t bytes) noexcept {
        if (budget <= 0)
            return nullptr;
        --budget;
        ++maps;
        return sta::detail::os_map_pages(bytes);
    }
    static void unmap(void* p, std::size_t bytes) noexcept {
        ++unmaps;
        sta::detail::os_unmap_pages(p, bytes);
    }
    static sta::thread_heap_source source() { return {&map, &unmap}; }
};

constexpr std::size_t kib = 1024;
constexpr std::size_t mib = 1024 * 1024;

// --- fill and verify: every byte of the first and last 64, and one byte in 64 between.

inline unsigned char pattern(std::uint32_t seed, std::size_t i) {
    return static_cast<unsigned char>((seed * 2654435761u + i * 40503u) >> 13);
}
template <class F>
void for_sampled(std::size_t bytes, F f) {
    for (std::size_t i = 0; i < bytes; i += (i < 64 || i + 64 >= bytes) ? 1 : 64)
        f(i);
}
void fill(void* p, std::size_t bytes, std::uint32_t seed) {
    auto* b = static_cast<unsigned char*>(p);
    for_sampled(bytes, [&](std::size_t i) { b[i] = pattern(seed, i); });
}
/// First sampled byte below `limit` (default: all) of a block filled with `bytes` that
/// differs from its pattern, or `limit`.
std::size_t first_mismatch(const void* p, std::size_t bytes, std::uint32_t seed,
                           std::size_t limit = SIZE_MAX) {
    const auto* b = static_cast<const unsigned char*>(p);
    limit = std::min(limit, bytes);
    std::size_t bad = limit;
    for_sampled(bytes, [&](std::size_t i) {
        if (i < limit && bad == limit && b[i] != pattern(seed, i))
            bad = i;
    });
    return bad;
}

/// A fresh heap filled exactly: blocks of the given sizes, then one block taking the
/// rest of the chunk, so stats() shows only the free blocks a test makes.
struct packed_heap {
    thread_heap heap{counting_source::source(), 1 * mib};
    std::vector<void*> blocks;
    void* rest = nullptr;
    explicit packed_heap(std::initializer_list<std::size_t> sizes) {
        counting_source::reset();
        for (std::size_t s : sizes)
            blocks.push_back(heap.alloc(s));
        rest = heap.alloc(heap.stats().largest_free_block);
    }
    std::vector<held> live(std::initializer_list<void*> freed) const {
        std::vector<held> h;
        for (void* p : blocks)
            if (std::find(freed.begin(), freed.end(), p) == freed.end())
                h.push_back({p, 32 * kib});
        if (rest != nullptr)
            h.push_back({rest, heap.usable_size(rest)});
        return h;
    }
};

// Guards: the walk itself — lost or overlapping blocks, broken tiling, realloc losing data.
TEST(ThreadHeap, RandomWalkFillVerifyAndTile) {
    counting_source::reset();
    thread_heap heap{counting_source::source(), 1 * mib};
    std::mt19937_64 rng(0x7415eedULL);
    struct live_block {
        std::size_t bytes;
        std::uint32_t seed;
    };
    std::map<std::uintptr_t, live_block> live;
    std::uint32_t next_seed = 1;
    long steps = 20000;
    if (const char* s = std::getenv("STA_WALK_STEPS"))
        steps = std::strtol(s, nullptr, 10) / 50 + 100;
    auto random_size = [&]() -> std::size_t {
        const unsigned pick = static_cast<unsigned>(rng() % 100);
        if (pick < 80)
            return 32 * kib + rng() % (1 * mib - 32 * kib + 1);
        if (pick < 92)
            return rng() % (4 * kib);
        if (pick < 99)
            return 1 * mib + rng() % (3 * mib);                   // own chunks
        return thread_heap::max_request_bytes + 1 + rng() % 1000; // fails
    };
    auto held_now = [&] {
        std::vector<held> h;
        for (const auto& [a, b] : live)
            h.push_back({reinterpret_cast<const void*>(a), b.bytes});
        return h;
    };
    auto overlaps = [&](std::uintptr_t p, std::size_t bytes) {
        auto next = live.lower_bound(p);
        if (next != live.end() && next->first < p + (bytes ? bytes : 1))
            return true;
        if (next != live.begin()) {
            auto prev = std::prev(next);
            if (prev->first + (prev->second.bytes ? prev->second.bytes : 1) > p)
                return true;
        }
        return false;
    };
    auto pick = [&] {
        auto it = live.lower_bound(static_cast<std::uintptr_t>(rng()));
        return it == live.end() ? live.begin() : it;
    };
    for (long step = 0; step < steps; ++step) {
        const unsigned op = static_cast<unsigned>(rng() % 100);
        const bool growing = (step / 500) % 2 == 0 && live.size() < 200;
        if (op < (growing ? 55u : 40u) || live.empty()) {
            const std::size_t bytes = random_size();
            void* p = heap.alloc(bytes);
            if (bytes > thread_heap::max_request_bytes) {
                ASSERT_EQ(p, nullptr) << "a huge request succeeded at step " << step;
                continue;
            }
            ASSERT_NE(p, nullptr) << "step " << step;
            ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u) << "step " << step;
            ASSERT_GE(heap.usable_size(p), bytes);
            const auto a = reinterpret_cast<std::uintptr_t>(p);
            ASSERT_FALSE(overlaps(a, bytes)) << "step " << step;
            fill(p, bytes, next_seed);
            live.emplace(a, live_block{bytes, next_seed++});
        } else if (op < 85) {
            auto it = pick();
            void* p = reinterpret_cast<void*>(it->first);
            ASSERT_EQ(first_mismatch(p, it->second.bytes, it->second.seed), it->second.bytes)
                << "corrupted block freed at step " << step;
            heap.free(p, it->second.bytes);
            live.erase(it);
        } else {
            auto it = pick();
            void* p = reinterpret_cast<void*>(it->first);
            const live_block b = it->second;
            const std::size_t new_bytes = random_size();
            void* q = heap.realloc(p, new_bytes);
            if (new_bytes > thread_heap::max_request_bytes) {
                ASSERT_EQ(q, nullptr) << "a huge realloc succeeded at step " << step;
                continue;
            }
            ASSERT_NE(q, nullptr) << "step " << step;
            live.erase(it);
            const std::size_t kept = std::min(b.bytes, new_bytes);
            ASSERT_EQ(first_mismatch(q, b.bytes, b.seed, kept), kept)
                << "realloc " << b.bytes << " -> " << new_bytes << " lost content at " << step;
            if (new_bytes <= b.bytes) {
                ASSERT_EQ(q, p) << "a shrink moved the block at step " << step;
            }
            const auto a = reinterpret_cast<std::uintptr_t>(q);
            ASSERT_FALSE(overlaps(a, new_bytes)) << "step " << step;
            fill(q, new_bytes, next_seed);
            live.emplace(a, live_block{new_bytes, next_seed++});
        }
        if (step % 250 == 249) {
            ASSERT_EQ(check_thread_heap(heap, held_now()), "") << "step " << step;
        }
    }
    ASSERT_EQ(check_thread_heap(heap, held_now()), "");
    for (const auto& [a, b] : live) {
        ASSERT_EQ(first_mismatch(reinterpret_cast<void*>(a), b.bytes, b.seed), b.bytes);
        heap.free(reinterpret_cast<void*>(a), b.bytes);
    }
    EXPECT_EQ(check_thread_heap(heap, {}), "");
    EXPECT_LE(heap.stats().chunks, 1u) << "wholly free chunks were kept";
    heap.trim();
    EXPECT_EQ(heap.stats().chunks, 0u);
    EXPECT_EQ(counting_source::maps, counting_source::unmaps) << "a chunk leaked";
}

// Guards: a checker that cannot fail proves nothing — a corrupted header must be named.
// bytes_in_use(), the counter another thread may read (process_stats), is what a walk
// of the chunks sums, after every alloc, realloc (in place, grown, shrunk, moved) and free.
TEST(ThreadHeap, BytesInUseCounterMatchesTheWalk) {
    sta::thread_heap heap;
    std::mt19937 random(42);
    std::vector<void*> live;
    for (int step = 0; step < 4000; ++step) {
        const std::size_t bytes = 1 + random() % 70000;
        const unsigned action = random() % 3;
        if (action == 0 || live.empty()) {
            live.push_back(heap.alloc(bytes));
            ASSERT_NE(live.back(), nullptr);
        } else if (action == 1) {
            void*& p = live[random() % live.size()];
            void* const q = heap.realloc(p, bytes);
            ASSERT_NE(q, nullptr);
            p = q;
        } else {
            const std::size_t i = random() % live.size();
            heap.free(live[i]);
            live[i] = live.back();
            live.pop_back();
        }
        ASSERT_EQ(heap.bytes_in_use(), heap.stats().bytes_in_use) << "step " << step;
    }
    for (void* p : live)
        heap.free(p);
    EXPECT_EQ(heap.bytes_in_use(), 0u);
}

TEST(ThreadHeap, CheckerReportsACorruptedBlock) {
    packed_heap h({32 * kib, 32 * kib});
    ASSERT_EQ(check_thread_heap(h.heap, h.live({})), "");
    auto* size_word = reinterpret_cast<std::size_t*>(static_cast<std::byte*>(h.blocks[0]) - 24);
    const std::size_t saved = *size_word;
    *size_word = saved + 16; // the block now claims 16 bytes of its neighbour
    EXPECT_NE(check_thread_heap(h.heap, h.live({})), "");
    *size_word = saved;
    EXPECT_EQ(check_thread_heap(h.heap, h.live({})), "");
    EXPECT_NE(check_thread_heap(h.heap, h.live({h.blocks[1]})), "") << "a missing held block";
}

// Guards: freeing a block whose left neighbour is free must merge into that neighbour.
TEST(ThreadHeap, FreeMergesWithFreeLeftNeighbour) {
    packed_heap h({32 * kib, 32 * kib, 32 * kib});
    h.heap.free(h.blocks[0], 32 * kib);
    h.heap.free(h.blocks[1], 32 * kib);
    const auto s = h.heap.stats();
    EXPECT_EQ(s.free_blocks, 1u);
    EXPECT_EQ(s.largest_free_block, 2 * (32 * kib + 32) - 32);
    EXPECT_EQ(check_thread_heap(h.heap, h.live({h.blocks[0], h.blocks[1]})), "");
}

// Guards: freeing a block whose right neighbour is free must absorb that neighbour.
TEST(ThreadHeap, FreeMergesWithFreeRightNeighbour) {
    packed_heap h({32 * kib, 32 * kib, 32 * kib});
    h.heap.free(h.blocks[1], 32 * kib);
    h.heap.free(h.blocks[0], 32 * kib);
    const auto s = h.heap.stats();
    EXPECT_EQ(s.free_blocks, 1u);
    EXPECT_EQ(s.largest_free_block, 2 * (32 * kib + 32) - 32);
    EXPECT_EQ(check_thread_heap(h.heap, h.live({h.blocks[0], h.blocks[1]})), "");
}

// Guards: a block between two free blocks must merge all three into one.
TEST(ThreadHeap, FreeMergesBothNeighboursIntoOne) {
    packed_heap h({32 * kib, 32 * kib, 32 * kib, 32 * kib});
    h.heap.free(h.blocks[0], 32 * kib);
    h.heap.free(h.blocks[2], 32 * kib);
    EXPECT_EQ(h.heap.stats().free_blocks, 2u);
    h.heap.free(h.blocks[1], 32 * kib);
    const auto s = h.heap.stats();
    EXPECT_EQ(s.free_blocks, 1u);
    EXPECT_EQ(s.largest_free_block, 3 * (32 * kib + 32) - 32);
    EXPECT_EQ(check_thread_heap(h.heap, h.live({h.blocks[0], h.blocks[1], h.blocks[2]})), "");
}

// Guards: the merged block must be found again by a request that needs all of it.
TEST(ThreadHeap, MergedBlockServesALargerRequest) {
    packed_heap h({32 * kib, 32 * kib, 32 * kib});
    h.heap.free(h.blocks[0], 32 * kib);
    h.heap.free(h.blocks[1], 32 * kib);
    void* p = h.heap.alloc(2 * (32 * kib + 32) - 32 - 4 * kib); // fits only the merged block
    EXPECT_EQ(p, h.blocks[0]);
    EXPECT_EQ(counting_source::maps, 1);
}

// Guards: a grow whose right neighbour is free and large enough must not move.
TEST(ThreadHeap, ReallocGrowsInPlaceIntoAFreeRightNeighbour) {
    packed_heap h({32 * kib, 32 * kib, 32 * kib});
    std::memset(h.blocks[0], 0x5a, 32 * kib);
    h.heap.free(h.blocks[1], 32 * kib);
    void* q = h.heap.realloc(h.blocks[0], 48 * kib);
    ASSERT_EQ(q, h.blocks[0]);
    EXPECT_EQ(static_cast<unsigned char*>(q)[32 * kib - 1], 0x5a);
    EXPECT_GE(h.heap.usable_size(q), 48 * kib);
    EXPECT_EQ(h.heap.stats().free_blocks, 1u) << "the rest of the neighbour stays free";
    h.blocks[0] = q;
    auto live = h.live({h.blocks[0], h.blocks[1]});
    live.push_back({q, 48 * kib});
    EXPECT_EQ(check_thread_heap(h.heap, live), "");
}

// Guards: a grow that does not fit next to the block must copy and free the old block.
TEST(ThreadHeap, ReallocMovesWhenTheNeighbourIsLive) {
    packed_heap h({32 * kib, 32 * kib});
    std::memset(h.blocks[0], 0x3c, 32 * kib);
    h.heap.trim();
    void* q = h.heap.realloc(h.blocks[0], 40 * kib);
    ASSERT_NE(q, nullptr);
    EXPECT_NE(q, h.blocks[0]);
    EXPECT_EQ(static_cast<unsigned char*>(q)[0], 0x3c);
    EXPECT_EQ(static_cast<unsigned char*>(q)[32 * kib - 1], 0x3c);
    EXPECT_EQ(counting_source::maps, 2);
    auto live = h.live({h.blocks[0]});
    live.push_back({q, 40 * kib});
    EXPECT_EQ(check_thread_heap(h.heap, live), "");
}

// Guards: a shrink must keep the pointer and give its tail back as a free block.
TEST(ThreadHeap, ReallocShrinksInPlaceAndFreesTheTail) {
    packed_heap h({64 * kib, 32 * kib});
    void* q = h.heap.realloc(h.blocks[0], 16 * kib);
    ASSERT_EQ(q, h.blocks[0]);
    const auto s = h.heap.stats();
    EXPECT_EQ(s.free_blocks, 1u);
    EXPECT_EQ(s.largest_free_block, 48 * kib - 32);
    auto live = h.live({h.blocks[0]});
    live.push_back({q, 16 * kib});
    EXPECT_EQ(check_thread_heap(h.heap, live), "");
}

// Guards: a shrink next to a free block must merge its tail into it (no two free blocks).
TEST(ThreadHeap, ShrinkTailMergesWithAFreeRightNeighbour) {
    packed_heap h({64 * kib, 32 * kib, 32 * kib});
    h.heap.free(h.blocks[1], 32 * kib);
    void* q = h.heap.realloc(h.blocks[0], 16 * kib);
    ASSERT_EQ(q, h.blocks[0]);
    EXPECT_EQ(h.heap.stats().free_blocks, 1u);
    auto live = h.live({h.blocks[0], h.blocks[1]});
    live.push_back({q, 16 * kib});
    EXPECT_EQ(check_thread_heap(h.heap, live), "");
}

// Guards: a chunk whose blocks are all free must go back to the OS (one is kept as spare).
TEST(ThreadHeap, WhollyFreeChunksAreUnmappedButOneIsKept) {
    counting_source::reset();
    thread_heap heap{counting_source::source(), 256 * kib};
    std::vector<void*> blocks;
    for (int i = 0; i < 24; ++i) // 24 x 40 KiB: six to a chunk of 256 KiB, four chunks
        blocks.push_back(heap.alloc(40 * kib));
    EXPECT_EQ(heap.stats().chunks, 4u);
    EXPECT_EQ(counting_source::maps, 4);
    for (void* p : blocks)
        heap.free(p, 40 * kib);
    EXPECT_EQ(check_thread_heap(heap, {}), "");
    EXPECT_EQ(heap.stats().chunks, 1u);
    EXPECT_EQ(counting_source::unmaps, 3);
    heap.trim();
    EXPECT_EQ(heap.stats().chunks, 0u);
    EXPECT_EQ(heap.stats().bytes_mapped, 0u);
    EXPECT_EQ(counting_source::unmaps, 4);
}

// Guards: map/unmap thrash — free-all then alloc must reuse the cached chunk.
TEST(ThreadHeap, TheCachedChunkIsReusedWithoutMapping) {
    counting_source::reset();
    thread_heap heap{counting_source::source(), 256 * kib};
    for (int i = 0; i < 100; ++i) {
        void* p = heap.alloc(40 * kib);
        ASSERT_NE(p, nullptr);
        heap.free(p, 40 * kib);
    }
    EXPECT_EQ(counting_source::maps, 1);
    EXPECT_EQ(counting_source::unmaps, 0);
    EXPECT_EQ(check_thread_heap(heap, {}), "");
    heap.trim();
    EXPECT_EQ(counting_source::unmaps, 1);
}

// Guards: a request beyond the chunk gets a chunk of its own, unmapped when freed.
TEST(ThreadHeap, BigRequestGetsItsOwnChunkAndReturnsIt) {
    counting_source::reset();
    thread_heap heap{counting_source::source(), 256 * kib};
    void* p = heap.alloc(3 * mib);
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, 3 * mib);
    EXPECT_EQ(heap.stats().chunks, 1u);
    EXPECT_GE(heap.stats().bytes_mapped, 3 * mib);
    EXPECT_EQ(check_thread_heap(heap, std::vector<held>{{p, 3 * mib}}), "");
    heap.free(p, 3 * mib);
    EXPECT_EQ(heap.stats().chunks, 0u) << "an own chunk is never the cached spare";
    EXPECT_EQ(counting_source::unmaps, 1);
}

// Guards: out of memory must be nullptr, with the heap still consistent and usable.
TEST(ThreadHeap, RefusedChunkGivesNullptr) {
    counting_source::reset(0);
    thread_heap heap{counting_source::source(), 256 * kib};
    EXPECT_EQ(heap.alloc(64 * kib), nullptr);
    EXPECT_EQ(heap.stats().chunks, 0u);
    EXPECT_EQ(check_thread_heap(heap, {}), "");
    counting_source::budget = 1;
    void* p = heap.alloc(64 * kib);
    EXPECT_NE(p, nullptr);
    heap.free(p);
    heap.trim();
}

// Guards: a realloc that cannot get memory must leave the old block and its data alone.
TEST(ThreadHeap, FailedReallocLeavesTheBlockIntact) {
    counting_source::reset(1);
    thread_heap heap{counting_source::source(), 256 * kib};
    void* p = heap.alloc(200 * kib);
    ASSERT_NE(p, nullptr);
    std::memset(p, 0x77, 200 * kib);
    EXPECT_EQ(heap.realloc(p, 2 * mib), nullptr);
    EXPECT_EQ(static_cast<unsigned char*>(p)[200 * kib - 1], 0x77);
    EXPECT_EQ(check_thread_heap(heap, std::vector<held>{{p, 200 * kib}}), "");
    heap.free(p, 200 * kib);
    heap.trim();
}

// Guards: sizes near SIZE_MAX must fail cleanly, not wrap around into a small block.
TEST(ThreadHeap, HugeSizesFailWithoutAskingTheOS) {
    counting_source::reset();
    thread_heap heap{counting_source::source()};
    EXPECT_EQ(heap.alloc(std::numeric_limits<std::size_t>::max()), nullptr);
    EXPECT_EQ(heap.alloc(std::numeric_limits<std::size_t>::max() - 31), nullptr);
    EXPECT_EQ(heap.alloc(static_cast<std::size_t>(PTRDIFF_MAX) + 1), nullptr);
    EXPECT_EQ(heap.alloc(thread_heap::max_request_bytes + 1), nullptr);
    EXPECT_EQ(counting_source::maps, 0);
}

// Guards: alloc(0) must give distinct, valid, aligned pointers.
TEST(ThreadHeap, ZeroBytesGiveUniqueAlignedBlocks) {
    counting_source::reset();
    thread_heap heap{counting_source::source(), 256 * kib};
    void* a = heap.alloc(0);
    void* b = heap.alloc(0);
    ASSERT_NE(a, nullptr);
    EXPECT_NE(a, b);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 16, 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 16, 0u);
    EXPECT_EQ(check_thread_heap(heap, std::vector<held>{{a, 0}, {b, 0}}), "");
    heap.free(a, 0);
    heap.free(b);
    heap.trim();
    EXPECT_EQ(counting_source::unmaps, 1);
}

// Guards: free(nullptr) and realloc(nullptr, n) behave as in C.
TEST(ThreadHeap, NullPointerFreeAndRealloc) {
    counting_source::reset();
    thread_heap heap{counting_source::source(), 256 * kib};
    heap.free(nullptr);
    heap.free(nullptr, 100);
    void* p = heap.realloc(nullptr, 50 * kib);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(check_thread_heap(heap, std::vector<held>{{p, 50 * kib}}), "");
    heap.free(p, 50 * kib);
    heap.trim();
}

// Guards: a constinit heap (the pool's case) must work with nothing set up first.
TEST(ThreadHeap, ConstantInitialisedGlobalHeapWorks) {
    void* p = global_heap.alloc(100 * kib);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(global_heap.chunk_bytes(), thread_heap::default_chunk_bytes);
    global_heap.free(p, 100 * kib);
    global_heap.trim();
    EXPECT_EQ(global_heap.stats().chunks, 0u);
}

#if STA_POOL_CHECKS
// Guards: a sized free with the wrong size must be reported, not corrupt the heap.
TEST(ThreadHeapDeathTest, SizeMismatchIsReported) {
    EXPECT_DEATH(
        {
            thread_heap heap;
            void* p = heap.alloc(40 * kib);
            heap.free(p, 41 * kib);
        },
        "size mismatch");
}

// Guards: a double free must be reported while the block's header is still intact.
TEST(ThreadHeapDeathTest, DoubleFreeIsReported) {
    EXPECT_DEATH(
        {
            thread_heap heap;
            void* p = heap.alloc(40 * kib);
            void* q = heap.alloc(40 * kib); // keeps p's block from merging away
            heap.free(p, 40 * kib);
            heap.free(p, 40 * kib);
            heap.free(q);
        },
        // The checked build reports it; without checks, ASan sees the poisoned payload.
        // (One pattern each: GoogleTest's simple regex on Windows has no alternation.)
        STA_POOL_CHECKS ? "double free" : "use-after-poison");
}
#endif

// Guards TL8: a free block's list link written after its free without the process's
// secret is refused when the block is taken, before it is followed. The write is the
// classic unlink attack: the link aimed at a fake block in the program's own buffer
// whose back link names the freed block, so that TL7's check alone would pass and the
// buffer would become the list's head (the next malloc of that size would return it).
TEST(ThreadHeapDeathTest, AFreeListLinkWrittenAfterFreeIsRefused) {
    EXPECT_DEATH(
        {
            thread_heap heap;
            alignas(16) static std::uintptr_t fake[8];
            void* a = heap.alloc(40 * kib);
            void* b = heap.alloc(40 * kib);
            void* c = heap.alloc(40 * kib); // b stays a block of its own on its list
            heap.free(b);
            const auto b_block = reinterpret_cast<std::uintptr_t>(b) - 32; // its header
            fake[3] = b_block; // the fake block's prev link: back at b
            reinterpret_cast<std::uintptr_t*>(b_block)[2] = reinterpret_cast<std::uintptr_t>(fake);
            void* d = heap.alloc(40 * kib); // takes b: its next link is decoded
            void* e = heap.alloc(40 * kib); // the fake block, if it had become the head
            std::printf("handed out %p and %p, the fake block is %p\n", d, e,
                        static_cast<void*>(fake));
            heap.free(a);
            heap.free(c);
        },
        "heap corrupted");
}

} // namespace
