// The backbone: a seeded random walk of alloc / free / realloc over all sizes, on
// every variant (dispatch x layout), in waves and phases of different sizes. Every block is filled
// with a pattern of its own and verified before it is freed and after every realloc; live blocks
// must never overlap and must be aligned; the accounting checker runs along the way and at the end.
// STA_WALK_STEPS in the environment changes the length (valgrind runs use fewer steps); the default
// is 1,000,000 per variant.
#include "support/block_pattern.hpp"
#include "support/pool_test_support.hpp"

#include <cstdlib>
#include <cstring>
#include <map>
#include <random>

namespace {
using namespace sta_test;
using sta::detail::check_accounting;
using sta::detail::held_block;

template <class Variant>
class RandomWalk : public ::testing::Test {};
TYPED_TEST_SUITE(RandomWalk, pool_variants, variant_names);

struct live_block {
    std::size_t bytes;
    std::uint32_t seed;
};

/// Sizes skewed towards the small classes, like real programs, but reaching every
/// class, the tier boundary, size 0 and the large tier. In odd phases the small sizes
/// move up to 129..2048 bytes: memory freed in one set of classes must serve another.
std::size_t random_size(std::mt19937_64& rng, bool odd_phase) {
    const unsigned pick = static_cast<unsigned>(rng() % 1000);
    if (pick < 5)
        return 0;
    if (pick < 700)
        return odd_phase ? 129 + rng() % 1920 : 1 + rng() % 128;
    if (pick < 950)
        return 1 + rng() % 4096;
    if (pick < 990)
        return 1 + rng() % 65536;
    if (pick < 995)
        return 32768 + rng() % 3; // the tier boundary
    return 65536 + rng() % (512 * 1024);
}

long steps_from_environment() {
    if (const char* s = std::getenv("STA_WALK_STEPS"))
        return std::strtol(s, nullptr, 10);
    return 1000000;
}

std::vector<held_block> held_of(const std::map<std::uintptr_t, live_block>& live) {
    std::vector<held_block> held;
    held.reserve(live.size());
    for (const auto& [address, block] : live)
        held.push_back({reinterpret_cast<const void*>(address), block.bytes});
    return held;
}

/// The live block (other than `self`) that overlaps [p, p + class bytes), if any.
bool overlaps(const std::map<std::uintptr_t, live_block>& live, std::uintptr_t p,
              std::size_t bytes) {
    const std::size_t extent = bytes == 0 ? 1 : bytes;
    auto next = live.lower_bound(p);
    if (next != live.end() && next->first < p + extent)
        return true;
    if (next != live.begin()) {
        auto prev = std::prev(next);
        if (prev->first + (prev->second.bytes == 0 ? 1 : prev->second.bytes) > p)
            return true;
    }
    return false;
}

/// The walk on `pool`, a fresh pool of variant V.
template <class V, class pool>
void walk() {
    pool::set_page_bytes(256 * 1024); // more pages, more tails carved

    std::mt19937_64 rng(0x5eed5eedULL);
    std::map<std::uintptr_t, live_block> live;
    std::vector<std::uintptr_t> order; // for picking a random live block
    std::uint32_t next_seed = 1;
    const long steps = steps_from_environment();
    const long check_every = steps / 8 + 1;

    auto pick = [&]() -> std::map<std::uintptr_t, live_block>::iterator {
        while (!order.empty()) {
            const std::size_t i = rng() % order.size();
            const std::uintptr_t address = order[i];
            order[i] = order.back();
            order.pop_back();
            auto it = live.find(address);
            if (it != live.end())
                return it;
        }
        return live.end();
    };

    for (long step = 0; step < steps; ++step) {
        const unsigned op = static_cast<unsigned>(rng() % 100);
        // Waves: grow the live set for a while, then shrink it, as GUI code does.
        const bool growing = (step / 50000) % 2 == 0;
        // Phases: every 200,000 steps the small sizes change classes.
        const bool odd_phase = (step / 200000) % 2 == 1;
        const unsigned alloc_share = growing ? 60 : 40;
        if (op < alloc_share || live.empty()) {
            const std::size_t bytes = random_size(rng, odd_phase);
            void* p = pool::alloc(bytes);
            ASSERT_NE(p, nullptr) << "step " << step << " size " << bytes;
            ASSERT_TRUE(aligned(p, sta::detail::is_pooled_size(bytes)
                                       ? guaranteed_alignment<typename pool::classes>(bytes)
                                       : 16))
                << "step " << step << " size " << bytes;
            const auto address = reinterpret_cast<std::uintptr_t>(p);
            ASSERT_FALSE(overlaps(live, address, bytes)) << "step " << step;
            const std::uint32_t seed = next_seed++;
            fill_pattern(p, bytes, seed);
            live.emplace(address, live_block{bytes, seed});
            order.push_back(address);
        } else if (op < 88) {
            auto it = pick();
            ASSERT_NE(it, live.end());
            const live_block b = it->second;
            void* p = reinterpret_cast<void*>(it->first);
            ASSERT_EQ(first_pattern_mismatch(p, b.bytes, b.seed), b.bytes)
                << "corrupted block of " << b.bytes << " bytes freed at step " << step;
            live.erase(it);
            pool::free(p, b.bytes);
        } else {
            auto it = pick();
            ASSERT_NE(it, live.end());
            const live_block b = it->second;
            void* p = reinterpret_cast<void*>(it->first);
            const std::size_t new_bytes = random_size(rng, odd_phase);
            live.erase(it);
            void* q = pool::realloc(p, b.bytes, new_bytes);
            ASSERT_NE(q, nullptr);
            const std::size_t kept = b.bytes < new_bytes ? b.bytes : new_bytes;
            ASSERT_EQ(first_pattern_mismatch(q, kept, b.seed), kept)
                << "realloc " << b.bytes << " -> " << new_bytes << " lost content at step " << step;
            // A pooled shrink never moves in the seed's layout; in spans, only within a class.
            if (sta::detail::is_pooled_size(b.bytes) && sta::detail::is_pooled_size(new_bytes) &&
                new_bytes <= b.bytes &&
                (!is_spans<V> || sta::detail::bytes_of_size<typename pool::classes>(new_bytes) ==
                                     sta::detail::bytes_of_size<typename pool::classes>(b.bytes))) {
                ASSERT_EQ(q, p) << "a shrink within the pool moved the block";
            }
            const auto address = reinterpret_cast<std::uintptr_t>(q);
            ASSERT_FALSE(overlaps(live, address, new_bytes)) << "step " << step;
            const std::uint32_t seed = next_seed++;
            fill_pattern(q, new_bytes, seed);
            live.emplace(address, live_block{new_bytes, seed});
            order.push_back(address);
        }
        if (step % check_every == check_every - 1) {
            ASSERT_EQ(check_accounting<pool>(held_of(live)), "") << "step " << step;
        }
    }
    ASSERT_EQ(check_accounting<pool>(held_of(live)), "");
    for (const auto& [address, b] : live) {
        void* p = reinterpret_cast<void*>(address);
        ASSERT_EQ(first_pattern_mismatch(p, b.bytes, b.seed), b.bytes);
        pool::free(p, b.bytes);
    }
    EXPECT_EQ(check_accounting<pool>({}), "");
    EXPECT_EQ(pool::stats().bytes_in_use, 0u);
}

TYPED_TEST(RandomWalk, FillVerifyAndTileOverMillionOperations) {
    struct tag {};
    walk<TypeParam, fresh_pool<TypeParam, tag>>();
}

template <class Variant>
class RandomWalkPurging : public ::testing::Test {};
TYPED_TEST_SUITE(RandomWalkPurging, span_variants, variant_names);

// The same walk with a purge delay of zero: every span that comes clean gives its pages
// back at once, and a segment whose spans all come clean is unmapped, again and again. The
// checker also finds no page of a purged span resident (S11); a block handed out from a
// purged span is filled and verified like any other.
TYPED_TEST(RandomWalkPurging, FillVerifyAndTileWithEveryCleanSpanPurgedAtOnce) {
    struct tag {};
    using pool = fresh_pool<TypeParam, tag>;
    pool::set_purge_delay(0);
    walk<TypeParam, pool>();
    EXPECT_GT(pool::stats().bytes_given_back, 0u);
}

} // namespace
