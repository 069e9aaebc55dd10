// sta::allocator_adapter: the C++ allocator requirements, failure as exceptions,
// alignment, and the pool really being the one underneath.
#include "sta/allocator.hpp"
#include "support/pool_test_support.hpp"

#include <map>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace {
using namespace sta_test;

struct adapter_tag {};
using tagged_pool = sta::basic_memory_pool<sta::dispatch::inline_branch, adapter_tag>;
template <class T>
using tagged_allocator = sta::allocator_adapter<T, tagged_pool>;

/// A pool that never has memory: every allocation must surface as std::bad_alloc.
struct empty_pool {
    static void* alloc(std::size_t) noexcept { return nullptr; }
    static void free(void*, std::size_t) noexcept {}
};

static_assert(std::is_same_v<std::allocator_traits<sta::allocator<int>>::rebind_alloc<double>,
                             sta::allocator<double>>);
static_assert(std::allocator_traits<sta::allocator<int>>::is_always_equal::value);
static_assert(std::is_nothrow_default_constructible_v<sta::allocator<int>>);
static_assert(std::is_trivially_copyable_v<sta::allocator<int>>);

// Guards n * sizeof(T) overflow: it must throw, not wrap into a small allocation.
TEST(Allocator, OverflowingCountThrowsBadArrayNewLength) {
    sta::allocator<std::uint64_t> a;
    EXPECT_THROW((void)a.allocate(a.max_size() + 1), std::bad_array_new_length);
    EXPECT_THROW((void)a.allocate(~std::size_t{0}), std::bad_array_new_length);
}

// Guards out-of-memory: std::bad_alloc from the adapter, never a null pointer.
TEST(Allocator, OutOfMemoryThrowsBadAlloc) {
    sta::allocator_adapter<int, empty_pool> never;
    EXPECT_THROW((void)never.allocate(1), std::bad_alloc);
    sta::allocator<char> a;
    EXPECT_THROW((void)a.allocate(a.max_size()), std::bad_alloc);
    std::vector<int, sta::allocator_adapter<int, empty_pool>> v;
    EXPECT_THROW(v.push_back(1), std::bad_alloc);
}

// Guards rebinding and equality: containers copy allocators across value types.
TEST(Allocator, RebindAndEquality) {
    sta::allocator<int> a;
    sta::allocator<double> b(a);
    EXPECT_TRUE(a == sta::allocator<int>(b));
    EXPECT_FALSE(a != sta::allocator<int>(b));
}

// Guards the pool being used at all: memory in use rises and falls with the container.
TEST(Allocator, ContainersDrawFromThePool) {
    const std::size_t before = tagged_pool::stats().bytes_in_use;
    {
        std::vector<int, tagged_allocator<int>> v(1000, 7);
        std::map<int, int, std::less<int>, tagged_allocator<std::pair<const int, int>>> m;
        for (int i = 0; i < 100; ++i)
            m[i] = i;
        EXPECT_GE(tagged_pool::stats().bytes_in_use, before + 4000 + 100 * 32);
    }
    EXPECT_EQ(tagged_pool::stats().bytes_in_use, before);
}

// Guards node containers, unordered bucket arrays and allocate_shared together.
TEST(Allocator, NodeContainersBucketsAndAllocateShared) {
    std::unordered_map<int, std::string, std::hash<int>, std::equal_to<int>,
                       tagged_allocator<std::pair<const int, std::string>>>
        m;
    for (int i = 0; i < 5000; ++i)
        m.emplace(i, std::to_string(i));
    for (int i = 0; i < 5000; i += 2)
        m.erase(i);
    EXPECT_EQ(m.size(), 2500u);
    EXPECT_EQ(m.at(4999), "4999");
    auto shared = std::allocate_shared<std::string>(tagged_allocator<std::string>(), "shared");
    EXPECT_EQ(*shared, "shared");
    std::weak_ptr<std::string> weak = shared;
    shared.reset();
    EXPECT_TRUE(weak.expired());
}

struct alignas(16) sixteen {
    char c;
};
struct alignas(64) cache_line {
    char c[64];
};

// Guards alignment: 16-aligned types even for allocate(0), over-aligned types served
// by aligned new instead of a 16-aligned pool block.
TEST(Allocator, AlignmentOfOrdinaryAndOverAlignedTypes) {
    sta::allocator<sixteen> a16;
    sixteen* z = a16.allocate(0);
    EXPECT_TRUE(aligned(z, 16));
    a16.deallocate(z, 0);
    sta::allocator<cache_line> a64;
    for (std::size_t n : {1u, 3u, 100u}) {
        cache_line* p = a64.allocate(n);
        EXPECT_TRUE(aligned(p, 64)) << n;
        a64.deallocate(p, n);
    }
    std::vector<cache_line, sta::allocator<cache_line>> v(10);
    EXPECT_TRUE(aligned(v.data(), 64));
}

} // namespace
