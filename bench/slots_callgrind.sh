#!/bin/sh
# sta-pool: instructions per call for the slot variants of slots_benchmark (issue 9).
#
#   bench/slots_callgrind.sh [build-dir]      (default: build/bench)
#
# Builds slots_benchmark in the build folder first (bench/build_targets.sh; cmake's
# output on stderr), then
# runs `slots_benchmark --callgrind-phases` under callgrind with collection on only
# inside the measured loops. Each variant runs 1000 and 11000 calls; the difference
# over 10000 cancels fixed costs, and the same difference for the variant "nothing"
# (the loop without a call) is subtracted: what remains is the call, the target's two
# instructions (add, ret) included. Prints "variant,instructions_per_call".
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/bench}
"$root/bench/build_targets.sh" "$build" slots_benchmark
bin=$build/bench/slots_benchmark
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$dir/cg.%p" \
    "$bin" --callgrind-phases >/dev/null 2>"$dir/log" || { cat "$dir/log" >&2; exit 1; }
echo "variant,instructions_per_call"
for f in "$dir"/cg.*; do
    awk '/^desc: Trigger: Client Request: / { name = $NF }
         /^(summary|totals):/ { if (name != "") { print name, $2; name = "" } }' "$f"
done | awk '
    { split($1, p, "/"); ir[p[1], p[2]] = $2; seen[p[1]] = 1 }
    END {
        base = (ir["nothing", 11000] - ir["nothing", 1000]) / 10000
        for (v in seen)
            if (v != "nothing")
                printf "%s,%.2f\n", v, (ir[v, 11000] - ir[v, 1000]) / 10000 - base
    }' | sort
