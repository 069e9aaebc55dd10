#!/usr/bin/env bash
# Build and run every test: the checked Debug build (g++), Release (checks compiled
# away), ASan + UBSan, and clang 14. Each is a CMake workflow preset; the script
# stops at the first failure and ends with one summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
presets=(dev release asan clang)
passed=0
failed=0
for preset in "${presets[@]}"; do
    echo "=== workflow preset: $preset"
    if cmake --workflow --preset "$preset"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "workflow preset $preset FAILED"
        break
    fi
done
# ctest's own summary of the last workflow stays the closing line on success.
[[ $failed -eq 0 ]] || { echo "workflows: $passed passed, $failed failed" >&2; exit 1; }
