# sta-pool clients (issue 8): the Lua, SQLite and libxml2 programs, run on the pool
# or on the libraries' default allocator. Included by tests/clients (the correctness
# tests run them on small inputs) and by bench (run_clients.sh, full inputs); the
# targets are defined once either way. With STA_POOL_BUILD_BENCH each program is built
# twice: sta_<name>_client on sta::memory_pool's default layout, sta_<name>_client_spans
# with STA_POOL_SPANS=1 (the span layout), so run_clients.sh measures both side by side.
if(TARGET sta_lua_client)
    return()
endif()
find_package(Lua 5.4 EXACT REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(LibXml2 REQUIRED)

set(STA_CLIENTS_DIR ${CMAKE_CURRENT_LIST_DIR})

add_executable(sta_lua_client ${STA_CLIENTS_DIR}/lua_client.cpp)
target_include_directories(sta_lua_client PRIVATE ${LUA_INCLUDE_DIR})
target_link_libraries(sta_lua_client PRIVATE sta::pool sta_pool_warnings ${LUA_LIBRARIES})

add_executable(sta_sqlite_client ${STA_CLIENTS_DIR}/sqlite_client.cpp)
target_link_libraries(sta_sqlite_client PRIVATE sta::pool sta_pool_warnings SQLite::SQLite3)

add_executable(sta_libxml2_client ${STA_CLIENTS_DIR}/libxml2_client.cpp)
target_link_libraries(sta_libxml2_client PRIVATE sta::pool sta_pool_warnings LibXml2::LibXml2)

# The span-layout builds: the same sources, STA_POOL_SPANS=1 (benchmark builds only; the
# correctness tests run the default builds).
if(NOT STA_POOL_BUILD_BENCH)
    return()
endif()
foreach(client lua sqlite libxml2)
    get_target_property(sources sta_${client}_client SOURCES)
    get_target_property(includes sta_${client}_client INCLUDE_DIRECTORIES)
    get_target_property(libraries sta_${client}_client LINK_LIBRARIES)
    add_executable(sta_${client}_client_spans ${sources})
    if(includes)
        target_include_directories(sta_${client}_client_spans PRIVATE ${includes})
    endif()
    target_link_libraries(sta_${client}_client_spans PRIVATE ${libraries})
    target_compile_definitions(sta_${client}_client_spans PRIVATE STA_POOL_SPANS=1)
endforeach()
