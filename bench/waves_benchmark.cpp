// sta-pool: the waves benchmark — a workload repeated W times in one process on the
// same allocator, each wave timed, so a heap that has lived is measured beside a
// fresh one.
//
//   waves_benchmark lua ALLOC SCRIPT [ARG] WAVES    a Lua 5.4 state runs SCRIPT (print
//                                                   is a no-op), then lua_close: every
//                                                   byte goes back before the next wave
//   waves_benchmark tree ALLOC KEYS SHAKES WAVES    the tree scenario (bench/scenarios.hpp)
//                                                   with KEYS keys, shaken SHAKES times,
//                                                   built and destroyed in each wave
//
// ALLOC: sta-cursor (the seed's shared-cursor layout), sta-spans (the span layout), both
// with the default dispatch; malloc (glibc: realloc/free for Lua, std::allocator for the
// tree), mimalloc-dlopen (mi_realloc/mi_free, or mi_malloc/mi_free, through dlopen).
// Output: one JSON result line (bench::print_result) per wave on stdout:
//   {"kind": "waves", "allocator": "sta-spans", "workload": "lua binary_trees.lua",
//    "wave": 3, "seconds": ...}
// Seconds are the process's CPU time for the wave (the machine's wall time is noisy).
// STA_WAVES_STATS=1: the pool rows also write the pool's counts after each wave to stderr.
#include "harness.hpp"
#include "scenarios.hpp"

#include "clients/lua_host.hpp"

#include <lua.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

namespace {

using rows = bench::layout_rows;

/// Whether a row is the pool's: its pool counts what the STA_WAVES_STATS lines show.
template <class Row>
constexpr bool pool_row = requires {
    typename Row::pool;
};

void* glibc_alloc(void*, void* ptr, std::size_t, std::size_t nsize) noexcept {
    if (nsize == 0) {
        std::free(ptr);
        return nullptr;
    }
    return std::realloc(ptr, nsize);
}

// mimalloc's entry points (bench::mimalloc_dl), copied here before the first wave.
void* (*mi_realloc)(void*, std::size_t) = nullptr;
void (*mi_free)(void*) = nullptr;

void* mimalloc_alloc(void*, void* ptr, std::size_t, std::size_t nsize) noexcept {
    if (nsize == 0) {
        mi_free(ptr);
        return nullptr;
    }
    return mi_realloc(ptr, nsize);
}

int no_print(lua_State*) {
    return 0;
}

/// One wave: a new state runs the script, then closes. False when the script fails.
bool lua_wave(lua_Alloc alloc, void* ud, const char* script, const char* arg) {
    lua_State* L = lua_newstate(alloc, ud);
    if (L == nullptr)
        return false;
    luaL_openlibs(L);
    lua_pushcfunction(L, no_print);
    lua_setglobal(L, "print");
    bool ok = luaL_loadfile(L, script) == LUA_OK;
    if (ok) {
        int args = 0;
        if (arg != nullptr) {
            lua_pushstring(L, arg);
            args = 1;
        }
        ok = lua_pcall(L, args, 0, 0) == LUA_OK;
    }
    if (!ok)
        std::fprintf(stderr, "waves_benchmark: %s\n", lua_tostring(L, -1));
    lua_close(L);
    return ok;
}

int usage() {
    std::fprintf(stderr,
                 "usage: waves_benchmark lua ALLOC SCRIPT [ARG] WAVES\n"
                 "       waves_benchmark tree ALLOC KEYS SHAKES WAVES\n"
                 "ALLOC: %s\n",
                 rows::names(", ").c_str());
    return 2;
}

template <class Row>
void print_wave(const char* workload, int wave, double seconds) {
    bench::print_result(
        "waves", Row::name,
        {{"workload", workload}, {"wave", wave}, {"seconds", bench::decimal{seconds, 6}}});
    if constexpr (pool_row<Row>) {
        if (std::getenv("STA_WAVES_STATS") == nullptr)
            return;
        const sta::pool_stats st = Row::pool::stats();
        std::fprintf(stderr, "  wave %d: %zu mappings, %zu spans in use, %zu clean, %zu B in use\n",
                     wave, st.mappings, st.spans_in_use, st.spans_clean, st.bytes_in_use);
    }
}

/// 1 with a message when the row cannot run here.
template <class Row>
int unavailable() {
    std::fprintf(stderr, "waves_benchmark: %s is not available here\n", Row::name);
    return 1;
}

template <class Row>
int tree_waves(int keys, int shakes, int waves) {
    if (!Row::available())
        return unavailable<Row>();
    std::size_t checksum = 0;
    for (int wave = 1; wave <= waves; ++wave) {
        const double start = bench::process_cpu_seconds();
        checksum += bench::tree_round<Row::template std_allocator>(keys, shakes);
        print_wave<Row>("tree", wave, bench::process_cpu_seconds() - start);
    }
    return checksum == 0 ? 1 : 0; // a tree with keys always sums something
}

int tree_main(int argc, char** argv) {
    if (argc != 6)
        return usage();
    const int keys = std::atoi(argv[3]);
    const int shakes = std::atoi(argv[4]);
    const int waves = std::atoi(argv[5]);
    if (keys < 4 || shakes < 0 || waves < 1) {
        std::fprintf(stderr, "waves_benchmark: KEYS >= 4, SHAKES >= 0 and WAVES >= 1\n");
        return 2;
    }
    const auto status =
        rows::call(argv[2], [&]<class Row>() { return tree_waves<Row>(keys, shakes, waves); });
    return status ? *status : usage();
}

/// The Lua allocator of a row: the pool's host (lua_pool_host over its pool), glibc's
/// realloc/free (Lua's default), or mimalloc's realloc/free.
template <class Row>
int lua_waves(const char* script, const char* arg, int waves) {
    lua_Alloc fn = nullptr;
    void* ud = nullptr;
    if constexpr (pool_row<Row>) {
        static sta_clients::lua_pool_host<typename Row::pool> host;
        fn = &sta_clients::lua_pool_host<typename Row::pool>::allocate;
        ud = &host;
    } else if constexpr (std::is_same_v<Row, bench::malloc_peer>) {
        fn = &glibc_alloc;
    } else {
        static_assert(std::is_same_v<Row, bench::mimalloc_dl_peer>);
        if (!Row::available())
            return unavailable<Row>();
        mi_realloc = bench::mimalloc_dl().realloc;
        mi_free = bench::mimalloc_dl().free;
        fn = &mimalloc_alloc;
    }
    const char* name = std::strrchr(script, '/');
    name = name != nullptr ? name + 1 : script;
    const std::string workload = std::string("lua ") + name;
    for (int wave = 1; wave <= waves; ++wave) {
        const double start = bench::process_cpu_seconds();
        if (!lua_wave(fn, ud, script, arg))
            return 1;
        print_wave<Row>(workload.c_str(), wave, bench::process_cpu_seconds() - start);
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && std::strcmp(argv[1], "tree") == 0)
        return tree_main(argc, argv);
    if (argc < 5 || std::strcmp(argv[1], "lua") != 0)
        return usage();
    const char* script = argv[3];
    const char* arg = argc > 5 ? argv[4] : nullptr;
    const int waves = std::atoi(argv[argc - 1]);
    const auto status =
        rows::call(argv[2], [&]<class Row>() { return lua_waves<Row>(script, arg, waves); });
    return status ? *status : usage();
}
