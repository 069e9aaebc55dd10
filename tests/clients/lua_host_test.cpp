// The Lua host (bench/clients/lua_host.hpp): lua_Alloc on the pool's sized API.
// Each test has a fresh pool; the failing-shrink tests make its page source refuse,
// which is the only way a shrink from above 32 KiB into the pool can fail.
#include "lua_host.hpp"

#include "../support/pool_test_support.hpp"

#include <cstring>
#include <vector>

namespace {
using namespace sta_test;
using sta::detail::check_accounting;
using sta::detail::held_block;

#define FRESH_HOST                                                                                 \
    struct tag {};                                                                                 \
    using pool = fresh_pool<default_variant, tag>;                                                 \
    using host_type = sta_clients::lua_pool_host<pool>;                                            \
    host_type host;                                                                                \
    [[maybe_unused]] auto lua_alloc = [&host](void* p, std::size_t osize, std::size_t nsize) {     \
        return host_type::allocate(&host, p, osize, nsize);                                        \
    }

void* refuse_pages(std::size_t) noexcept {
    return nullptr;
}

void fill(void* p, std::size_t bytes) {
    auto* b = static_cast<unsigned char*>(p);
    for (std::size_t i = 0; i < bytes; ++i)
        b[i] = static_cast<unsigned char>(i * 7);
}

/// Take every block the pool can still give without a new page (largest first), in
/// every class of its set from 16 B up.
template <class Pool>
std::vector<held_block> exhaust() {
    using classes = typename Pool::classes;
    std::vector<held_block> taken;
    for (std::uint32_t ordinal = classes::count; ordinal-- > 0;) {
        const std::size_t bytes = classes::bytes_of_slot(classes::slot_of_ordinal(ordinal));
        if (bytes < 16)
            continue;
        while (void* p = Pool::alloc(bytes))
            taken.push_back({p, bytes});
    }
    return taken;
}

bool filled(const void* p, std::size_t bytes) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < bytes; ++i)
        if (b[i] != static_cast<unsigned char>(i * 7))
            return false;
    return true;
}

// Guards the type tag: with ptr == NULL, osize is LUA_T* and must not be taken as a
// size (the block must be of nsize's class, freed later with nsize).
TEST(LuaHost, OsizeIsATypeTagWhenPtrIsNull) {
    FRESH_HOST;
    // 56 B's class: 64 B in powers of two, 56 B in quarter classes; LUA_TTABLE's is 8 B.
    constexpr std::size_t class56 = sta::detail::bytes_of_size<pool::classes>(56);
    static_assert(sta::detail::bytes_of_size<pool::classes>(LUA_TTABLE) != class56);
    void* p = lua_alloc(nullptr, LUA_TTABLE, 56);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(lua_alloc(p, 56, 0), nullptr);
    EXPECT_EQ(pool::alloc(class56), p); // it went back to 56 B's class
    pool::free(p, class56);
    EXPECT_EQ(check_accounting<pool>({}), "");
}

// Guards nsize == 0 with ptr == NULL (Lua frees empty arrays so): nothing is allocated.
TEST(LuaHost, FreeOfNullAllocatesNothing) {
    FRESH_HOST;
    EXPECT_EQ(lua_alloc(nullptr, 0, 0), nullptr);
    EXPECT_EQ(lua_alloc(nullptr, LUA_TSTRING, 0), nullptr);
    EXPECT_EQ(pool::stats().mappings, 0u);
}

// Guards "a shrink never fails": from above 32 KiB into a class with no page to be
// had, Lua gets its old block back, contents intact.
TEST(LuaHost, ShrinkFromAboveThePoolNeverFailsWhenTheOsRefuses) {
    FRESH_HOST;
    pool::detail_state().map_pages = &refuse_pages;
    void* big = lua_alloc(nullptr, LUA_TTABLE, 40000);
    ASSERT_NE(big, nullptr);
    fill(big, 40000);
    void* small = lua_alloc(big, 40000, 100);
    EXPECT_EQ(small, big);
    EXPECT_TRUE(filled(small, 100));
    EXPECT_EQ(host.kept_count(), 1u);
    EXPECT_EQ(lua_alloc(small, 100, 0), nullptr); // freed with its real size
    EXPECT_EQ(host.kept_count(), 0u);
    for (const auto& c : pool::stats().classes) // nothing was filed under a class
        EXPECT_EQ(c.free_blocks, 0u) << c.block_bytes;
}

// Guards the kept block's real size on a later grow: the pool is told 40000, not 100.
TEST(LuaHost, KeptBlockGrowsAgainFromItsRealSize) {
    FRESH_HOST;
    pool::detail_state().map_pages = &refuse_pages;
    void* big = lua_alloc(nullptr, LUA_TTABLE, 40000);
    fill(big, 40000);
    void* small = lua_alloc(big, 40000, 200);
    ASSERT_EQ(small, big);
    void* again = lua_alloc(small, 200, 60000);
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(host.kept_count(), 0u);
    EXPECT_TRUE(filled(again, 200));
    lua_alloc(again, 60000, 0);
}

// Guards the way back: once pages come again, a kept block's next shrink moves it
// into the pool and the host forgets it.
TEST(LuaHost, KeptBlockMovesIntoThePoolWhenMemoryReturns) {
    FRESH_HOST;
    pool::detail_state().map_pages = &refuse_pages;
    void* big = lua_alloc(nullptr, LUA_TTABLE, 50000);
    fill(big, 50000);
    ASSERT_EQ(lua_alloc(big, 50000, 300), big);
    pool::detail_state().map_pages = &sta::detail::os_map_pages;
    void* moved = lua_alloc(big, 300, 250);
    ASSERT_NE(moved, nullptr);
    EXPECT_EQ(host.kept_count(), 0u);
    EXPECT_TRUE(filled(moved, 250));
    EXPECT_EQ(check_accounting<pool>(std::vector<held_block>{{moved, 250}}), "");
    lua_alloc(moved, 250, 0);
}

// Guards ordinary blocks while the table is not empty: they keep the fast path's
// meaning (a free with Lua's size, a realloc that moves).
TEST(LuaHost, OtherBlocksAreUnaffectedWhileABlockIsKept) {
    FRESH_HOST;
    // 17 B and the top of its class (32 B in powers of two, 24 B in quarter classes).
    constexpr std::size_t top = sta::detail::bytes_of_size<pool::classes>(17);
    static_assert(top > 17);
    void* ordinary = lua_alloc(nullptr, LUA_TSTRING, 17);
    fill(ordinary, 17);
    pool::detail_state().map_pages = &refuse_pages;
    std::vector<held_block> full = exhaust<pool>();
    void* big = lua_alloc(nullptr, LUA_TTABLE, 40000);
    ASSERT_EQ(lua_alloc(big, 40000, 10), big);
    void* grown = lua_alloc(ordinary, 17, top); // same class: in place
    EXPECT_EQ(grown, ordinary);
    EXPECT_TRUE(filled(grown, 17));
    full.push_back({grown, top});
    EXPECT_EQ(check_accounting<pool>(full), "");
    lua_alloc(grown, top, 0);
    lua_alloc(big, 10, 0);
    EXPECT_EQ(host.kept_count(), 0u);
}

// Guards the last resort: more failed shrinks than the table holds end the program
// with a message, never with a block filed under the wrong size.
TEST(LuaHost, AFullKeptTableAbortsWithAMessage) {
    FRESH_HOST;
    EXPECT_DEATH(
        {
            pool::detail_state().map_pages = &refuse_pages;
            for (std::size_t i = 0; i <= host_type::kept_capacity; ++i) {
                void* big = lua_alloc(nullptr, LUA_TTABLE, 40000);
                lua_alloc(big, 40000, 8);
            }
        },
        "Lua requires shrinks never to fail");
}

// Guards the whole contract with Lua itself: a state runs a GC-heavy script on a fresh
// pool, and after lua_close every byte is back (nothing freed with a wrong size).
TEST(LuaHost, ALuaStateRunsAndGivesEverythingBack) {
    FRESH_HOST;
    lua_State* L = host.new_state();
    ASSERT_NE(L, nullptr);
    luaL_openlibs(L);
    const char* script = R"lua(
        local t = {}
        for i = 1, 20000 do t[i] = { i, tostring(i) .. "x" } end
        for i = 1, 20000, 2 do t[i] = nil end
        local s = {}
        for i = 1, 2000 do s[#s + 1] = string.rep("ab", i % 50) end
        collectgarbage()
        local kept = 0
        for _ in pairs(t) do kept = kept + 1 end
        result = #table.concat(s) + kept
    )lua";
    ASSERT_EQ(luaL_dostring(L, script), LUA_OK) << lua_tostring(L, -1);
    lua_getglobal(L, "result");
    EXPECT_EQ(lua_tointeger(L, -1), 98000 + 10000);
    lua_close(L);
    EXPECT_EQ(pool::stats().bytes_in_use, 0u);
    EXPECT_EQ(check_accounting<pool>({}), "");
}

} // namespace
