# Configure, build and run a consumer project from scratch, as a user would.
#   -D MODE=find_package|add_subdirectory -D SOURCE_DIR=<sta-pool> -D BUILD_DIR=<sta-pool build>
#   -D WORK_DIR=<scratch> -D CXX=<compiler> -D CXX_FLAGS=<the build's flags>
# The consumer takes the build's compiler flags: a library built under a sanitizer is
# linked by programs built under it.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(consumer "${SOURCE_DIR}/tests/packaging/${MODE}_consumer")
set(args -S "${consumer}" -B "${WORK_DIR}/build" -DCMAKE_CXX_COMPILER=${CXX}
         "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}")
if(MODE STREQUAL "find_package")
    execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix"
                    RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "installing sta-pool failed")
    endif()
    list(APPEND args "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
else()
    list(APPEND args "-DSTA_POOL_SOURCE_DIR=${SOURCE_DIR}")
endif()
foreach(step IN ITEMS configure build run)
    if(step STREQUAL "configure")
        set(cmd "${CMAKE_COMMAND}" ${args})
    elseif(step STREQUAL "build")
        set(cmd "${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
    else()
        set(cmd "${WORK_DIR}/build/consumer")
    endif()
    execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${MODE} consumer: ${step} failed (${rc})\n${out}\n${err}")
    endif()
endforeach()
message(STATUS "${out}")
