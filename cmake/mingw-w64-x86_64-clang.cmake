# Cross-compile for Windows x64 with clang 14 (Debian's clang) against Debian's mingw-w64
# headers and libraries and g++ 12's libstdc++ (g++-mingw-w64-x86-64-posix), and run the
# tests under wine: ctest uses CMAKE_CROSSCOMPILING_EMULATOR. Unlike mingw-w64 g++,
# clang emits native TLS for Windows (a thread_local is the module's TLS block,
# gs:[0x58][_tls_index]), as MSVC does. The clang-mingw configuration of docs/windows.md.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER clang)
set(CMAKE_CXX_COMPILER clang++)
set(CMAKE_C_COMPILER_TARGET x86_64-w64-mingw32)
set(CMAKE_CXX_COMPILER_TARGET x86_64-w64-mingw32)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
# The mingw-w64 headers and import libraries; --sysroot also keeps the host's
# /usr/include off the search path.
set(CMAKE_SYSROOT /usr/x86_64-w64-mingw32)
# g++'s runtime: libstdc++'s headers and libstdc++, libgcc from its folder (clang 14's
# driver does not find a folder named 12-posix by itself; the sysroot has no C++
# headers of its own).
file(GLOB sta_mingw_gcc_dirs LIST_DIRECTORIES true /usr/lib/gcc/x86_64-w64-mingw32/*-posix)
list(SORT sta_mingw_gcc_dirs COMPARE NATURAL ORDER DESCENDING)
list(GET sta_mingw_gcc_dirs 0 sta_mingw_gcc_dir)
# The two type_info macros are g++'s for this target, which libstdc++ was built with:
# without them clang takes type_info::operator== inline and the link finds it twice.
set(CMAKE_CXX_FLAGS_INIT
    "-isystem ${sta_mingw_gcc_dir}/include/c++ -isystem ${sta_mingw_gcc_dir}/include/c++/x86_64-w64-mingw32 -D__GXX_MERGED_TYPEINFO_NAMES=0 -D__GXX_TYPEINFO_EQUALITY_INLINE=0")
# Static runtime, as the g++ build: the .exe files run under wine without a DLL search
# path. -pthread puts winpthreads in the driver's group of libraries, after libstdc++.
# lld, as llvm-mingw links: GNU ld warns "duplicate section ... has different size" for
# every type name string that clang emits at its length and g++'s libstdc++ padded to 16
# bytes (a same-size COMDAT); either copy is the same string.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld -static -pthread -L${sta_mingw_gcc_dir}")
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# wine_run.sh makes the wine prefix once before the first program runs.
find_program(STA_WINE wine)
if(STA_WINE)
    set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/wine_run.sh)
endif()
