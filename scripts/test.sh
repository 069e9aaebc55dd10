#!/usr/bin/env bash
# Build and run every test, in these CMake workflow presets:
#   dev      g++ 12, Debug, checked build; valgrind memcheck over the main tests and
#            the misuse programs that valgrind must flag
#   release  g++ 12, -O2 -DNDEBUG: checks compiled away; the hooks-cost proof; then the
#            same tests again with LD_PRELOAD=libsta_malloc.so (test preset release-preloaded)
#   asan     clang 14, ASan + UBSan at -O0, checked build; misuse programs ASan must flag;
#            a libFuzzer smoke run
#   tsan     clang 14, ThreadSanitizer, checked build; the threaded test programs only
#            (threads_test and the others that start threads); any report fails
#   windows  mingw-w64 g++ 12 cross build, checked; every test program runs under wine
#   windows-clang  the same with clang 14 (native TLS) against the mingw-w64 headers and
#            libraries and g++'s libstdc++ (cmake/mingw-w64-x86_64-clang.cmake)
# It stops at the first failing preset; on success the closing line gives each preset's
# wall time (configure, build and tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
presets=(dev release asan tsan windows windows-clang)
passed=0
failed=0
times=()
for preset in "${presets[@]}"; do
    echo "=== workflow preset: $preset"
    start=$SECONDS
    if cmake --workflow --preset "$preset"; then
        passed=$((passed + 1))
        times+=("$preset $((SECONDS - start)) s")
    else
        failed=$((failed + 1))
        echo "workflow preset $preset FAILED"
        break
    fi
done
[[ $failed -eq 0 ]] || { echo "workflows: $passed passed, $failed failed" >&2; exit 1; }
echo "=== workflow presets' wall times: ${times[*]/%/,}" | sed 's/,$//'
