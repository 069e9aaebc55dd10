// sta-pool clients: run a Lua 5.4 script on the pool (lua_pool_host over
// sta::memory_pool) or on Lua's default allocator (luaL_newstate: realloc/free).
//
//   lua_client --alloc=pool|malloc script.lua [args...]
//
// The script gets its arguments as `...` and in `arg`, as with the lua interpreter.
// `package.path` starts with the script's folder and /usr/share/lua/5.4 (Debian's
// dkjson). `os.clock` returns 0: scripts such as dkjson's speedtest.lua print their
// own timings, which would make the output differ from run to run; this program
// times the whole run itself (new state, script, lua_close).
#include "client_common.hpp"
#include "lua_host.hpp"
#include "sta/memory_pool.hpp"

#include <cstdio>
#include <string>

namespace {

int fixed_clock(lua_State* L) {
    lua_pushnumber(L, 0);
    return 1;
}

std::string folder_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

/// Run the script; false (with a message on stderr) when it fails.
bool run_script(lua_State* L, int argc, char** argv) {
    luaL_openlibs(L);
    const std::string script = argv[2];
    lua_getglobal(L, "package");
    const std::string path = folder_of(script) + "/?.lua;/usr/share/lua/5.4/?.lua;";
    lua_getfield(L, -1, "path");
    lua_pushfstring(L, "%s%s", path.c_str(), lua_tostring(L, -1));
    lua_setfield(L, -3, "path");
    lua_pop(L, 2);
    lua_getglobal(L, "os");
    lua_pushcfunction(L, fixed_clock);
    lua_setfield(L, -2, "clock");
    lua_pop(L, 1);
    lua_createtable(L, argc - 3, 1);
    for (int i = 2; i < argc; ++i) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - 2);
    }
    lua_setglobal(L, "arg");
    if (luaL_loadfile(L, script.c_str()) != LUA_OK) {
        std::fprintf(stderr, "lua_client: %s\n", lua_tostring(L, -1));
        return false;
    }
    for (int i = 3; i < argc; ++i)
        lua_pushstring(L, argv[i]);
    if (lua_pcall(L, argc - 3, 0, 0) != LUA_OK) {
        std::fprintf(stderr, "lua_client: %s\n", lua_tostring(L, -1));
        return false;
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    const auto choice = sta_clients::parse_allocator(argc, argv);
    if (choice == sta_clients::allocator_choice::invalid || argc < 3) {
        std::fprintf(stderr, "usage: lua_client --alloc=pool|malloc script.lua [args...]\n");
        return 2;
    }
    static sta_clients::lua_pool_host<sta::memory_pool> host;
    const sta_clients::stopwatch watch;
    lua_State* L =
        choice == sta_clients::allocator_choice::pool ? host.new_state() : luaL_newstate();
    if (L == nullptr) {
        std::fprintf(stderr, "lua_client: no memory for a Lua state\n");
        return 1;
    }
    const bool ok = run_script(L, argc, argv);
    lua_close(L);
    const double seconds = watch.seconds();
    std::fflush(stdout);
    if (!ok)
        return 1;
    sta_clients::report_result(choice, seconds);
    return 0;
}
