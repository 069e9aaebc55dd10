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
// Output: one JSON line per wave on stdout:
//   {"workload": "lua binary_trees.lua", "alloc": "sta-spans", "wave": 3, "seconds": ...}
// Seconds are the process's CPU time for the wave (the machine's wall time is noisy).
#include "sta/memory_pool.hpp"

#include <lua.hpp>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "clients/lua_host.hpp"
#include "scenarios.hpp"

namespace {

double cpu_seconds() {
    timespec t{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

struct cursor_tag {};
struct spans_tag {};
using cursor_pool =
    sta::basic_memory_pool<sta::dispatch::default_policy, cursor_tag, sta::layout::shared_cursor>;
using spans_pool =
    sta::basic_memory_pool<sta::dispatch::default_policy, spans_tag, sta::layout::spans>;

void* glibc_alloc(void*, void* ptr, std::size_t, std::size_t nsize) noexcept {
    if (nsize == 0) {
        std::free(ptr);
        return nullptr;
    }
    return std::realloc(ptr, nsize);
}

using mi_realloc_fn = void* (*)(void*, std::size_t);
using mi_free_fn = void (*)(void*);
mi_realloc_fn mi_realloc = nullptr;
mi_free_fn mi_free = nullptr;

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
    std::fprintf(stderr, "usage: waves_benchmark lua ALLOC SCRIPT [ARG] WAVES\n"
                         "       waves_benchmark tree ALLOC KEYS SHAKES WAVES\n"
                         "ALLOC: sta-cursor, sta-spans, malloc, mimalloc-dlopen\n");
    return 2;
}

void print_stats(const std::string& alloc, int wave) {
    if (std::getenv("STA_WAVES_STATS") == nullptr || alloc.rfind("sta-", 0) != 0)
        return;
    const sta::pool_stats st = alloc == "sta-spans" ? spans_pool::stats() : cursor_pool::stats();
    std::fprintf(stderr, "  wave %d: %zu mappings, %zu spans in use, %zu clean, %zu B in use\n",
                 wave, st.mappings, st.spans_in_use, st.spans_clean, st.bytes_in_use);
}

void print_wave(const char* workload, const std::string& alloc, int wave, double seconds) {
    std::printf("{\"workload\": \"%s\", \"alloc\": \"%s\", \"wave\": %d, "
                "\"seconds\": %.6f}\n",
                workload, alloc.c_str(), wave, seconds);
    std::fflush(stdout);
    print_stats(alloc, wave);
}

template <class T>
using cursor_alloc = sta::allocator_adapter<T, cursor_pool>;
template <class T>
using spans_alloc = sta::allocator_adapter<T, spans_pool>;

template <template <class> class Alloc>
int tree_waves(const std::string& alloc, int keys, int shakes, int waves) {
    std::size_t checksum = 0;
    for (int wave = 1; wave <= waves; ++wave) {
        const double start = cpu_seconds();
        checksum += bench::tree_round<Alloc>(keys, shakes);
        print_wave("tree", alloc, wave, cpu_seconds() - start);
    }
    return checksum == 0 ? 1 : 0; // a tree with keys always sums something
}

int tree_main(int argc, char** argv) {
    if (argc != 6)
        return usage();
    const std::string alloc = argv[2];
    const int keys = std::atoi(argv[3]);
    const int shakes = std::atoi(argv[4]);
    const int waves = std::atoi(argv[5]);
    if (keys < 4 || shakes < 0 || waves < 1) {
        std::fprintf(stderr, "waves_benchmark: KEYS >= 4, SHAKES >= 0 and WAVES >= 1\n");
        return 2;
    }
    if (alloc == "sta-cursor")
        return tree_waves<cursor_alloc>(alloc, keys, shakes, waves);
    if (alloc == "sta-spans")
        return tree_waves<spans_alloc>(alloc, keys, shakes, waves);
    if (alloc == "malloc")
        return tree_waves<std::allocator>(alloc, keys, shakes, waves);
    if (alloc == "mimalloc-dlopen") {
        if (!bench::mimalloc_dl_peer::available()) {
            std::fprintf(stderr, "waves_benchmark: libmimalloc.so.2 is not installed\n");
            return 1;
        }
        return tree_waves<bench::mimalloc_dl_allocator>(alloc, keys, shakes, waves);
    }
    return usage();
}

} // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && std::strcmp(argv[1], "tree") == 0)
        return tree_main(argc, argv);
    if (argc < 5 || std::strcmp(argv[1], "lua") != 0)
        return usage();
    const std::string alloc = argv[2];
    const char* script = argv[3];
    const char* arg = argc > 5 ? argv[4] : nullptr;
    const int waves = std::atoi(argv[argc - 1]);
    static sta_clients::lua_pool_host<cursor_pool> cursor_host;
    static sta_clients::lua_pool_host<spans_pool> spans_host;
    lua_Alloc fn = nullptr;
    void* ud = nullptr;
    if (alloc == "sta-cursor") {
        fn = &sta_clients::lua_pool_host<cursor_pool>::allocate;
        ud = &cursor_host;
    } else if (alloc == "sta-spans") {
        fn = &sta_clients::lua_pool_host<spans_pool>::allocate;
        ud = &spans_host;
    } else if (alloc == "malloc") {
        fn = &glibc_alloc;
    } else if (alloc == "mimalloc-dlopen") {
        void* lib = ::dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_LOCAL);
        if (lib != nullptr) {
            mi_realloc = reinterpret_cast<mi_realloc_fn>(::dlsym(lib, "mi_realloc"));
            mi_free = reinterpret_cast<mi_free_fn>(::dlsym(lib, "mi_free"));
        }
        if (mi_realloc == nullptr || mi_free == nullptr) {
            std::fprintf(stderr, "waves_benchmark: libmimalloc.so.2 is not installed\n");
            return 1;
        }
        fn = &mimalloc_alloc;
    } else {
        return usage();
    }
    const char* name = std::strrchr(script, '/');
    name = name != nullptr ? name + 1 : script;
    const std::string workload = std::string("lua ") + name;
    for (int wave = 1; wave <= waves; ++wave) {
        const double start = cpu_seconds();
        if (!lua_wave(fn, ud, script, arg))
            return 1;
        print_wave(workload.c_str(), alloc, wave, cpu_seconds() - start);
    }
    return 0;
}
