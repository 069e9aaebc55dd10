# Compare the machine code of the probe functions in two objects.
#   -D OBJDUMP=... -D WITH_HOOKS=<object> -D WITHOUT_HOOKS=<object>
# Only the probe_* functions are compared: the rest of each object is what the unit
# instantiates for itself, and STA_POOL_NO_HOOKS, a switch of config_key
# (detail/config.hpp), makes the unit without hooks instantiate slow paths of its own
# where the unit with them calls the compiled part's. In the probes' calls, the
# config_key argument of a slow path's name is replaced by KEY, and addresses are left out.
# A call or jump to another function is compared by its relocation (the function it names):
# objdump annotates its unresolved target with whatever symbol lies at that offset of the
# object, which depends on where the functions were placed.
foreach(which WITH_HOOKS WITHOUT_HOOKS)
    execute_process(COMMAND ${OBJDUMP} -dr --no-show-raw-insn -C ${${which}}
                    OUTPUT_VARIABLE text RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "objdump failed on ${${which}}")
    endif()
    string(REGEX REPLACE "[0-9a-f]+ <[^>\n]*>(\n\t+[0-9a-f]+: R_)" "<reloc>\\1" text "${text}")
    string(REGEX REPLACE "\n\t+[0-9a-f]+: (R_[A-Z0-9_]+)" "\n\treloc \\1" text "${text}")
    # Where each function lies in .text depends on what else the unit emits there: the
    # addresses go, the offsets within a probe (<probe_x+0x28>) stay, the padding goes,
    # and the probes are compared in the order of their names.
    string(REGEX REPLACE "\n *[0-9a-f]+:" "\n" text "${text}")
    string(REGEX REPLACE "[0-9a-f]+ <" "<" text "${text}")
    string(REGEX REPLACE "[0-9]+ull>" "KEYull>" text "${text}")
    string(REGEX REPLACE "\n\t[^\n]*nop[^\n]*" "" text "${text}") # padding to the next
    string(REGEX MATCHALL "\n<probe_[a-z0-9_]+>:\n([ \t][^\n]*\n)*" blocks "${text}")
    list(SORT blocks)
    list(LENGTH blocks ${which}_COUNT)
    string(JOIN "" text ${blocks})
    set(${which}_TEXT "${text}")
endforeach()
if(WITH_HOOKS_COUNT LESS 16)
    message(FATAL_ERROR "expected 16 probe functions, found ${WITH_HOOKS_COUNT}")
endif()
if(NOT WITH_HOOKS_TEXT STREQUAL WITHOUT_HOOKS_TEXT)
    file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/with_hooks.s "${WITH_HOOKS_TEXT}")
    file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/without_hooks.s "${WITHOUT_HOOKS_TEXT}")
    message(FATAL_ERROR "the hook sites change the release fast path: diff with_hooks.s without_hooks.s")
endif()
message(STATUS "identical machine code in ${WITH_HOOKS_COUNT} fast-path functions")
