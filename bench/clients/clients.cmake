# sta-pool clients (issue 8): the Lua, SQLite and libxml2 programs, run on the pool
# or on the libraries' default allocator. Included by tests/clients (the correctness
# tests run them on small inputs) and by bench (run_clients.sh, full inputs); the
# targets are defined once either way.
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
