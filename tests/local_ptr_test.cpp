// sta::local_ptr: one named test per edge case (one block, counts, move, aliasing,
// Derived -> Base, throwing constructors, comparisons, hash, the thread rule), and a
// seeded random walk of make / copy / move / reset / swap / alias checked after every
// step against a model: which object each pointer holds, every use_count, the number
// of live objects, every destructor run exactly once, and the pool's bytes in use.
#include "sta/local_ptr.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

namespace {

/// Objects that report their lifetime: which ids are alive, how often each died.
struct lifetimes {
    std::set<int> alive;
    std::map<int, int> destructions;
    std::size_t total_destructions = 0;
    std::size_t repeated_destructions = 0; // a destructor run on an id that already died
};
lifetimes& life() {
    static lifetimes l;
    return l;
}

struct tracked {
    int id;
    int payload;
    explicit tracked(int i) : id(i), payload(i * 10) { life().alive.insert(i); }
    tracked(const tracked&) = delete;
    tracked& operator=(const tracked&) = delete;
    ~tracked() {
        life().alive.erase(id);
        if (++life().destructions[id] > 1)
            ++life().repeated_destructions;
        ++life().total_destructions;
    }
};

template <class Tag>
using tagged_pool = sta::basic_memory_pool<sta::dispatch::default_policy, Tag>;

template <class T, class Pool>
std::size_t block_class_bytes() {
    return sta::detail::bytes_of_size<typename Pool::classes>(
        sizeof(sta::detail::local_block<T, Pool>));
}

#define FRESH_POOL                                                                                 \
    struct tag {};                                                                                 \
    using pool = tagged_pool<tag>

// Guards "object and count in one block": one make_local takes exactly one pool block
// of the class of header + object, and its destruction gives exactly that back.
TEST(LocalPtr, MakeLocalTakesOnePoolBlockForCountAndObject) {
    FRESH_POOL;
    {
        auto p = sta::make_local<tracked, pool>(1);
        // One block of the class of header + object: the count did not get a block of its
        // own. (Where in the block the object sits is the ABI's business: mingw packs it
        // into the header's tail padding, Linux does not.)
        EXPECT_EQ(pool::stats().bytes_in_use, (block_class_bytes<tracked, pool>()));
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p.get()) % alignof(tracked), 0u);
    }
    EXPECT_EQ(pool::stats().bytes_in_use, 0u);
}

// Guards the count: copies share the object and each adds one owner.
TEST(LocalPtr, CopiesShareTheObjectAndCount) {
    FRESH_POOL;
    auto a = sta::make_local<tracked, pool>(2);
    EXPECT_EQ(a.use_count(), 1);
    auto b = a;
    sta::local_ptr<tracked> c;
    c = b;
    EXPECT_EQ(a.get(), c.get());
    EXPECT_EQ(a.use_count(), 3);
    c.reset();
    EXPECT_EQ(a.use_count(), 2);
    EXPECT_EQ(c.use_count(), 0);
}

// Guards move: the source is left empty and the count does not change.
TEST(LocalPtr, MoveTransfersOwnershipAndLeavesTheSourceEmpty) {
    FRESH_POOL;
    auto a = sta::make_local<tracked, pool>(3);
    tracked* raw = a.get();
    sta::local_ptr<tracked> b = std::move(a);
    EXPECT_EQ(a.get(), nullptr);
    EXPECT_EQ(a.use_count(), 0);
    EXPECT_EQ(b.get(), raw);
    EXPECT_EQ(b.use_count(), 1);
    sta::local_ptr<tracked> c;
    c = std::move(b);
    EXPECT_FALSE(b);
    EXPECT_EQ(c.use_count(), 1);
}

// Guards destruction: the last owner runs the destructor once and frees the block.
TEST(LocalPtr, LastOwnerDestroysExactlyOnceAndFreesTheBlock) {
    FRESH_POOL;
    auto a = sta::make_local<tracked, pool>(4);
    auto b = a;
    a.reset();
    EXPECT_EQ(life().destructions[4], 0);
    EXPECT_TRUE(life().alive.count(4));
    b = nullptr;
    EXPECT_EQ(life().destructions[4], 1);
    EXPECT_EQ(pool::stats().bytes_in_use, 0u);
}

// Guards self-assignment: copy- and move-assigning a pointer to itself keeps the object.
TEST(LocalPtr, SelfAssignmentKeepsTheObject) {
    FRESH_POOL;
    auto a = sta::make_local<tracked, pool>(5);
    auto& same = a;
    a = same;
    EXPECT_EQ(a.use_count(), 1);
    a = std::move(same);
    EXPECT_EQ(a.use_count(), 1);
    EXPECT_EQ(a->id, 5);
    EXPECT_EQ(life().destructions[5], 0);
}

// Guards aliasing: a pointer to a member keeps the whole object alive after the
// original owner is gone, and compares by the member's address.
TEST(LocalPtr, AliasKeepsTheWholeObjectAlive) {
    FRESH_POOL;
    auto owner = sta::make_local<tracked, pool>(6);
    sta::local_ptr<int> member(owner, &owner->payload);
    EXPECT_EQ(owner.use_count(), 2);
    owner.reset();
    EXPECT_EQ(*member, 60);
    EXPECT_EQ(life().destructions[6], 0);
    sta::local_ptr<int> moved_alias(std::move(member), member.get());
    EXPECT_FALSE(member);
    EXPECT_EQ(moved_alias.use_count(), 1);
    moved_alias.reset();
    EXPECT_EQ(life().destructions[6], 1);
    EXPECT_EQ(pool::stats().bytes_in_use, 0u);
}

// Guards aliasing an empty owner: the result owns nothing (use_count 0), like std.
TEST(LocalPtr, AliasOfAnEmptyOwnerOwnsNothing) {
    int outside = 7;
    sta::local_ptr<int> alias(sta::local_ptr<tracked>{}, &outside);
    EXPECT_EQ(alias.get(), &outside);
    EXPECT_EQ(alias.use_count(), 0);
}

struct base {
    int b = 1;
    ~base() = default; // not virtual: destroy must still run ~derived
};
struct derived : base {
    std::string text = std::string(100, 'x'); // leaks (ASan) if ~derived is skipped
    int* destructions;
    explicit derived(int* d) : destructions(d) {}
    ~derived() { ++*destructions; }
};

// Guards Derived -> Base: the block remembers the real type, so the right destructor
// runs and the block is freed with its real size (a checked build aborts otherwise).
TEST(LocalPtr, BaseOwnerDestroysTheDerivedAndFreesTheRightSize) {
    FRESH_POOL;
    int destructions = 0;
    {
        sta::local_ptr<base> p = sta::make_local<derived, pool>(&destructions);
        sta::local_ptr<const base> q = p;
        EXPECT_EQ(q.use_count(), 2);
        EXPECT_EQ(q->b, 1);
    }
    EXPECT_EQ(destructions, 1);
    EXPECT_EQ(pool::stats().bytes_in_use, 0u);
}

struct throws_in_constructor {
    explicit throws_in_constructor(bool fail) {
        if (fail)
            throw std::runtime_error("constructor failed");
    }
};

// Guards the failure path: a throwing constructor gives the block back and passes on.
TEST(LocalPtr, ThrowingConstructorGivesTheBlockBack) {
    FRESH_POOL;
    auto make_failing = [] { return sta::make_local<throws_in_constructor, pool>(true); };
    EXPECT_THROW((void)make_failing(), std::runtime_error);
    EXPECT_EQ(pool::stats().bytes_in_use, 0u);
    auto ok = sta::make_local<throws_in_constructor, pool>(false);
    EXPECT_TRUE(ok);
}

// Guards make_local for aggregates (no constructor): it falls back to T{args...}.
TEST(LocalPtr, AggregatesAreBraceInitialised) {
    struct point {
        int x;
        int y;
    };
    auto p = sta::make_local<point>(3, 4);
    EXPECT_EQ(p->x + p->y, 7);
}

// Guards the empty states: default, nullptr, comparisons with nullptr.
TEST(LocalPtr, EmptyPointersCompareEqualToNullptr) {
    sta::local_ptr<tracked> a;
    sta::local_ptr<tracked> b = nullptr;
    EXPECT_FALSE(a);
    EXPECT_EQ(a, nullptr);
    EXPECT_EQ(a, b);
    EXPECT_EQ(a.use_count(), 0);
    auto c = a; // copying empty touches no count
    EXPECT_EQ(c.use_count(), 0);
}

// Guards comparisons and std::hash: both follow the stored pointer, as for std.
TEST(LocalPtr, ComparisonsAndHashFollowTheStoredPointer) {
    FRESH_POOL;
    auto a = sta::make_local<tracked, pool>(8);
    auto b = sta::make_local<tracked, pool>(9);
    EXPECT_NE(a, b);
    EXPECT_EQ((a < b), (a.get() < b.get()));
    EXPECT_EQ((a <=> b), (std::compare_three_way{}(a.get(), b.get())));
    EXPECT_GT(a, nullptr);
    EXPECT_EQ(std::hash<sta::local_ptr<tracked>>{}(a), std::hash<tracked*>{}(a.get()));
    std::unordered_set<sta::local_ptr<tracked>> set{a, b, a};
    EXPECT_EQ(set.size(), 2u);
    EXPECT_EQ(a.use_count(), 2); // the set holds one copy of each
}

// Guards swap: contents are exchanged, counts untouched.
TEST(LocalPtr, SwapExchangesWithoutTouchingCounts) {
    FRESH_POOL;
    auto a = sta::make_local<tracked, pool>(10);
    auto b = sta::make_local<tracked, pool>(11);
    auto a2 = a;
    swap(a, b);
    EXPECT_EQ(a->id, 11);
    EXPECT_EQ(b->id, 10);
    EXPECT_EQ(b.use_count(), 2);
    EXPECT_EQ(a.use_count(), 1);
}

struct chain_node {
    sta::local_ptr<chain_node> next;
};

// Guards releases from inside a destructor: a chain frees every node, the pool ends
// empty (the count is read before the block it lives in is freed).
TEST(LocalPtr, ReleasingAChainFreesEveryNode) {
    FRESH_POOL;
    sta::local_ptr<chain_node> head;
    for (int i = 0; i < 1000; ++i) {
        auto n = sta::make_local<chain_node, pool>();
        n->next = std::move(head);
        head = std::move(n);
    }
    EXPECT_GT(pool::stats().bytes_in_use, 0u);
    head.reset();
    EXPECT_EQ(pool::stats().bytes_in_use, 0u);
}

// Guards the default pool: make_local<T>() with no pool argument uses sta::memory_pool.
TEST(LocalPtr, DefaultPoolIsTheMemoryPool) {
    const std::size_t before = sta::memory_pool::stats().bytes_in_use;
    {
        auto p = sta::make_local<tracked>(12);
        EXPECT_GT(sta::memory_pool::stats().bytes_in_use, before);
    }
    EXPECT_EQ(sta::memory_pool::stats().bytes_in_use, before);
}

#if STA_POOL_CHECKS
void copy_on_a_second_thread() {
    auto p = sta::make_local<int>(1);
    std::thread([&] { auto q = p; }).join();
}
#endif

// Guards the thread rule in checked builds: a count changed on another thread aborts.
TEST(LocalPtrDeathTest, CopyOnASecondThreadAbortsInCheckedBuilds) {
#if !STA_POOL_CHECKS
    GTEST_SKIP() << "STA_POOL_CHECKS is off: the owner check compiles away";
#else
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(copy_on_a_second_thread(),
                 "sta::local_ptr: called from thread .*, but it belongs to thread ");
#endif
}

// ---------------------------------------------------------------------------------
// The random walk.
// ---------------------------------------------------------------------------------

struct walk_model {
    std::vector<int> object_of_ptr;   // -1: empty
    std::vector<int> object_of_alias; // -1: empty
    std::set<int> created;
    std::size_t destructions_before = 0; // by the tests that ran earlier in this process
};

template <class Pool>
void check_against_model(const std::vector<sta::local_ptr<tracked>>& ptrs,
                         const std::vector<sta::local_ptr<int>>& aliases, const walk_model& m,
                         std::uint64_t step) {
    SCOPED_TRACE("step " + std::to_string(step));
    std::map<int, long> owners;
    for (int id : m.object_of_ptr)
        if (id >= 0)
            ++owners[id];
    for (int id : m.object_of_alias)
        if (id >= 0)
            ++owners[id];
    for (std::size_t i = 0; i < ptrs.size(); ++i) {
        const int id = m.object_of_ptr[i];
        if (id < 0) {
            ASSERT_FALSE(ptrs[i]);
            ASSERT_EQ(ptrs[i].use_count(), 0);
        } else {
            ASSERT_TRUE(ptrs[i]);
            ASSERT_EQ(ptrs[i]->id, id);
            ASSERT_EQ(ptrs[i].use_count(), owners[id]);
        }
    }
    for (std::size_t i = 0; i < aliases.size(); ++i) {
        const int id = m.object_of_alias[i];
        if (id < 0) {
            ASSERT_FALSE(aliases[i]);
        } else {
            ASSERT_EQ(*aliases[i], id * 10);
            ASSERT_EQ(aliases[i].use_count(), owners[id]);
        }
    }
    // Live objects are exactly the owned ones; every other created one died once.
    std::set<int> expected_alive;
    for (const auto& [id, n] : owners)
        expected_alive.insert(id);
    ASSERT_EQ(life().alive, expected_alive);
    ASSERT_EQ(life().repeated_destructions, 0u);
    ASSERT_EQ(life().total_destructions - m.destructions_before,
              m.created.size() - expected_alive.size());
    const std::size_t block_bytes = block_class_bytes<tracked, Pool>();
    ASSERT_EQ(Pool::stats().bytes_in_use, expected_alive.size() * block_bytes);
}

std::uint64_t walk_steps() {
    const char* s = std::getenv("STA_WALK_STEPS");
    return s != nullptr ? std::strtoull(s, nullptr, 10) : 20000;
}

// Guards everything above in combination: copy/move/reset/swap/aliasing in random
// order must keep counts, lifetimes and pool memory exactly as the model says.
TEST(LocalPtr, RandomWalkMatchesTheModel) {
    FRESH_POOL;
    constexpr std::uint32_t seed = 20240917;
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    constexpr std::size_t ptr_count = 8;
    constexpr std::size_t alias_count = 4;
    std::vector<sta::local_ptr<tracked>> ptrs(ptr_count);
    std::vector<sta::local_ptr<int>> aliases(alias_count);
    ASSERT_TRUE(life().alive.empty());
    walk_model m{std::vector<int>(ptr_count, -1),
                 std::vector<int>(alias_count, -1),
                 {},
                 life().total_destructions};
    int next_id = 1000;
    const std::uint64_t steps = walk_steps();
    for (std::uint64_t step = 0; step < steps; ++step) {
        const std::size_t i = rng() % ptr_count;
        const std::size_t j = rng() % ptr_count;
        const std::size_t k = rng() % alias_count;
        const std::size_t l = rng() % alias_count;
        switch (rng() % 10) {
        case 0: // make
            ptrs[i] = sta::make_local<tracked, pool>(next_id);
            m.object_of_ptr[i] = next_id;
            m.created.insert(next_id++);
            break;
        case 1: // copy-assign (i == j: self-assignment)
            ptrs[i] = ptrs[j];
            m.object_of_ptr[i] = m.object_of_ptr[j];
            break;
        case 2: // move-assign (i == j: self-move keeps the object)
            ptrs[i] = std::move(ptrs[j]);
            if (i != j) {
                m.object_of_ptr[i] = m.object_of_ptr[j];
                m.object_of_ptr[j] = -1;
            }
            break;
        case 3: // copy-construct over a temporary, then reset the source
        {
            sta::local_ptr<tracked> copy(ptrs[j]);
            ptrs[j].reset();
            ptrs[i] = std::move(copy);
            const int id = m.object_of_ptr[j];
            m.object_of_ptr[j] = -1;
            m.object_of_ptr[i] = id;
            break;
        }
        case 4: // reset
            ptrs[i].reset();
            m.object_of_ptr[i] = -1;
            break;
        case 5: // swap
            ptrs[i].swap(ptrs[j]);
            std::swap(m.object_of_ptr[i], m.object_of_ptr[j]);
            break;
        case 6: // alias by copy
            aliases[k] = sta::local_ptr<int>(ptrs[i], ptrs[i] ? &ptrs[i]->payload : nullptr);
            m.object_of_alias[k] = m.object_of_ptr[i];
            break;
        case 7: // alias by move
        {
            int* member = ptrs[i] ? &ptrs[i]->payload : nullptr;
            aliases[k] = sta::local_ptr<int>(std::move(ptrs[i]), member);
            m.object_of_alias[k] = m.object_of_ptr[i];
            m.object_of_ptr[i] = -1;
            break;
        }
        case 8: // alias copy-assign
            aliases[k] = aliases[l];
            m.object_of_alias[k] = m.object_of_alias[l];
            break;
        default: // alias reset
            aliases[k].reset();
            m.object_of_alias[k] = -1;
            break;
        }
        check_against_model<pool>(ptrs, aliases, m, step);
        if (::testing::Test::HasFatalFailure())
            return;
    }
    ptrs.clear();
    aliases.clear();
    EXPECT_TRUE(life().alive.empty());
    EXPECT_EQ(pool::stats().bytes_in_use, 0u);
    EXPECT_GT(m.created.size(), steps / 20); // the walk made objects, not just moved nulls
}

} // namespace
