# sta-pool clients (issue 8): the Lua, SQLite and libxml2 programs, run on the pool
# or on the libraries' default allocator. Included by tests/clients (the correctness
# tests run them on small inputs) and by bench (run_clients.sh, full inputs); the
# targets are defined once either way. With STA_POOL_BUILD_BENCH each program is also
# built once per layout: sta_<name>_client_cursor with STA_POOL_SPANS=0 (the seed's
# shared cursor) and sta_<name>_client_spans with STA_POOL_SPANS=1 (the span layout),
# so run_clients.sh measures both side by side whichever is the default.
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

# The per-layout builds: the same sources, STA_POOL_SPANS set (benchmark builds only; the
# correctness tests run the default builds).
if(NOT STA_POOL_BUILD_BENCH)
    return()
endif()
foreach(client lua sqlite libxml2)
    get_target_property(sources sta_${client}_client SOURCES)
    get_target_property(includes sta_${client}_client INCLUDE_DIRECTORIES)
    get_target_property(libraries sta_${client}_client LINK_LIBRARIES)
    foreach(layout cursor spans)
        set(target sta_${client}_client_${layout})
        add_executable(${target} ${sources})
        if(includes)
            target_include_directories(${target} PRIVATE ${includes})
        endif()
        target_link_libraries(${target} PRIVATE ${libraries})
        if(layout STREQUAL "spans")
            target_compile_definitions(${target} PRIVATE STA_POOL_SPANS=1)
        else()
            target_compile_definitions(${target} PRIVATE STA_POOL_SPANS=0)
        endif()
    endforeach()
endforeach()
