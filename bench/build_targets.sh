#!/usr/bin/env bash
# Builds what a runner script is about to run, so that it runs the current sources.
#
#   bench/build_targets.sh BUILD_DIR TARGET...
#
# cmake --build BUILD_DIR --target TARGET... -j2 (a no-op for what is up to date). A
# folder that is not configured yet is configured first: with the preset `bench` when it
# is build/bench, else Release with the benchmarks on and the tests and examples off.
# RECONFIGURE=1 configures it that way even when it is configured already.
# cmake's output goes to stderr: the runners' stdout is their table. Exit status: cmake's.
set -Eeuo pipefail
root="$(cd "$(dirname "$0")/.." && pwd -P)"
(($# >= 2)) || { echo "usage: $0 BUILD_DIR TARGET..." >&2; exit 2; }
build="$1"
shift
if [[ "${RECONFIGURE:-0}" == 1 || ! -f "$build/CMakeCache.txt" ]]; then
    if [[ "$(realpath -m "$build")" == "$root/build/bench" ]]; then
        (cd "$root" && cmake --preset bench) >&2
    else
        cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSTA_POOL_BUILD_BENCH=ON \
            -DSTA_POOL_BUILD_TESTS=OFF -DSTA_POOL_BUILD_EXAMPLES=OFF >&2
    fi
fi
cmake --build "$build" --target "$@" -j2 >&2
