// Every container alias under a workload, checked against the same workload on the
// std containers; the unique_ptr helper and the pooled mixin.
#include "sta/containers.hpp"
#include "sta/pooled.hpp"
#include "sta/unique_ptr.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

std::size_t in_use() {
    return sta::memory_pool::stats().bytes_in_use;
}

// Guards every alias compiling and behaving as its std twin.
TEST(Containers, EveryAliasMatchesItsStdTwin) {
    std::mt19937 rng(42);
    sta::vector<int> v;
    std::vector<int> sv;
    sta::list<int> l;
    sta::deque<int> d;
    sta::map<int, sta::string> m;
    sta::multimap<int, int> mm;
    sta::set<int> s;
    sta::multiset<int> ms;
    sta::unordered_map<int, int> um;
    sta::unordered_set<int> us;
    std::map<int, std::string> sm;
    for (int i = 0; i < 20000; ++i) {
        const int x = static_cast<int>(rng() % 5000);
        v.push_back(x);
        sv.push_back(x);
        l.push_front(x);
        d.push_back(x);
        m[x] = sta::string(static_cast<std::size_t>(x % 50), 'a');
        sm[x] = std::string(static_cast<std::size_t>(x % 50), 'a');
        mm.emplace(x, i);
        s.insert(x);
        ms.insert(x);
        um[x] += 1;
        us.insert(x);
        if (i % 7 == 0 && !l.empty()) {
            l.pop_back();
            d.pop_front();
            s.erase(x);
            us.erase(x);
        }
    }
    EXPECT_TRUE(std::equal(v.begin(), v.end(), sv.begin(), sv.end()));
    EXPECT_EQ(m.size(), sm.size());
    for (const auto& [k, value] : sm)
        ASSERT_EQ(std::string(m.at(k).c_str()), value);
    EXPECT_EQ(ms.size(), 20000u);
    EXPECT_EQ(mm.size(), 20000u);
    int total = 0;
    for (const auto& [k, count] : um)
        total += count;
    EXPECT_EQ(total, 20000);
    EXPECT_EQ(s.size(), us.size());
    EXPECT_EQ(std::accumulate(l.begin(), l.end(), 0L) > 0, true);
}

// Guards the strings: short-string and heap cases, wide and UTF-16 variants.
TEST(Containers, StringsOfEveryCharacterType) {
    sta::string s = "short";
    for (int i = 0; i < 100; ++i)
        s += "-grown";
    EXPECT_EQ(s.size(), 5u + 600u);
    sta::wstring w = L"wide";
    w.append(1000, L'x');
    EXPECT_EQ(w.size(), 1004u);
    sta::u16string u = u"utf-16";
    u += u"\u00e9";
    EXPECT_EQ(u.size(), 7u);
    sta::u32string u32(U"\U0001F600");
    EXPECT_EQ(u32.size(), 1u);
    sta::u8string u8(u8"\u00e9");
    EXPECT_EQ(u8.size(), 2u);
}

struct counted {
    static inline int alive = 0;
    int value;
    explicit counted(int v) : value(v) { ++alive; }
    ~counted() { --alive; }
};

// Guards sta::make_unique: the pool holds the object and gets it back on destruction.
TEST(Containers, MakeUniqueUsesThePoolAndDestroys) {
    const std::size_t before = in_use();
    {
        auto p = sta::make_unique<counted>(7);
        EXPECT_EQ(p->value, 7);
        EXPECT_EQ(counted::alive, 1);
        EXPECT_EQ(in_use(), before + 8);
    }
    EXPECT_EQ(counted::alive, 0);
    EXPECT_EQ(in_use(), before);
}

struct throws_in_constructor {
    explicit throws_in_constructor(int) { throw std::runtime_error("no"); }
};

// Guards the failure path of make_unique: the block goes back when T's constructor throws.
TEST(Containers, MakeUniqueReturnsTheBlockWhenTheConstructorThrows) {
    const std::size_t before = in_use();
    EXPECT_THROW((void)sta::make_unique<throws_in_constructor>(1), std::runtime_error);
    EXPECT_EQ(in_use(), before);
}

struct node_base : sta::pooled<> {
    virtual ~node_base() = default;
    int id = 0;
};
struct big_node : node_base {
    char payload[200] = {};
};
struct alignas(64) aligned_node : sta::pooled<> {
    char c = 0;
};

// Guards the mixin with polymorphic deletion: sized delete must free the dynamic
// size (over 200 B), not the base's.
TEST(Containers, PooledMixinFreesTheDynamicSize) {
    using classes = sta::memory_pool::classes;
    constexpr std::size_t big_class = sta::detail::bytes_of_size<classes>(sizeof(big_node));
    static_assert(big_class != sta::detail::bytes_of_size<classes>(sizeof(node_base)));
    const std::size_t before = in_use();
    node_base* n = new big_node;
    EXPECT_EQ(in_use(), before + big_class);
    delete n;
    EXPECT_EQ(in_use(), before);
    node_base* many = new node_base[10];
    EXPECT_GT(in_use(), before);
    delete[] many;
    EXPECT_EQ(in_use(), before);
}

// Guards over-aligned classes with the mixin: they must not get a 16-aligned block.
TEST(Containers, PooledMixinHonoursOverAlignment) {
    for (int i = 0; i < 10; ++i) {
        auto* a = new aligned_node;
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 64, 0u);
        delete a;
    }
}

} // namespace
