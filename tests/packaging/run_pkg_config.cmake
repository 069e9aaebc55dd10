# Install sta-pool into a scratch prefix, then build a program with the flags that
# `pkg-config --cflags --libs sta_malloc` prints, and run it (as a user would).
#   -D SOURCE_DIR=<sta-pool> -D BUILD_DIR=<sta-pool build> -D WORK_DIR=<scratch>
#   -D CXX=<compiler> -D PKG_CONFIG=<pkg-config>
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "installing sta-pool failed")
endif()
file(GLOB_RECURSE pc_files "${prefix}/*/sta_malloc.pc")
if(NOT pc_files)
    message(FATAL_ERROR "the install has no sta_malloc.pc")
endif()
list(GET pc_files 0 pc)
get_filename_component(pc_dir "${pc}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs sta_malloc RESULT_VARIABLE rc
                OUTPUT_VARIABLE flags ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --libs sta_malloc failed: ${err}")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
string(REGEX REPLACE "/pkgconfig$" "" libdir "${pc_dir}")
execute_process(COMMAND "${CXX}" -std=c++20 "${SOURCE_DIR}/tests/packaging/pkg_config_consumer.cpp"
                        -o "${WORK_DIR}/consumer" ${flags} "-Wl,-rpath,${libdir}" -ldl
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building with pkg-config's flags (${flags}) failed:\n${out}\n${err}")
endif()
execute_process(COMMAND "${WORK_DIR}/consumer" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the pkg-config consumer failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "${out}")
