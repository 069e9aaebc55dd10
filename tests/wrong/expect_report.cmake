# Run a misuse program and pass only if the expected report appears in its output.
#   -D EXPECTED=<regex> -D PROGRAM=<path> [-D LAUNCHER=<valgrind;args...>]
# The program is expected to fail (abort or a tool's error exit); that alone is not
# enough: a silent crash, or a report of the wrong kind, fails the test.
execute_process(COMMAND ${LAUNCHER} ${PROGRAM} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT all MATCHES "${EXPECTED}")
    message(FATAL_ERROR "no report matching \"${EXPECTED}\" (exit: ${rc}); output:\n${all}")
endif()
string(REGEX MATCH "[^\n]*${EXPECTED}[^\n]*" line "${all}")
message(STATUS "flagged as expected (exit: ${rc}): ${line}")
