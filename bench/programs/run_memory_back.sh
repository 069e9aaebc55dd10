#!/usr/bin/env bash
# Memory given back (issue 24): what stays resident after a program frees, under every
# allocator. Runs bench/programs/memory_back.cpp (a plain malloc/free program) unchanged
# as whole processes, each allocator by LD_PRELOAD, rounds interleaved.
#
#   bench/programs/run_memory_back.sh [path/to/libsta_malloc.so]
#   (default: $STA_MALLOC, else build/bench/src/malloc/libsta_malloc.so)
#   When the library is in a CMake build folder (<build>/src/malloc/libsta_malloc.so, the
#   default too), sta_malloc is built there first, and memory_back too unless MEMORY_BACK
#   names it (bench/build_targets.sh; cmake's output on stderr); a library elsewhere is
#   run as it is.
#   MEMORY_BACK=<path>  the program (default: bench/memory_back of the build folder the
#               library is in); when it is <build>/bench/memory_back of a CMake build
#               folder, it is built there first
#   MIB=256     MiB allocated before the frees (memory_back's own default, the issue's
#               size, is 1024: 4-5 times longer)
#   ROUNDS=3    runs per mode, activity and allocator
#   ACTIVITY_MS=1000  how long each run keeps working after its frees
#   MODES="all older_half after_exit tree"  memory_back's modes (its header says what
#               each frees)
#   ACTIVITIES="light=8 busy=256"  NAME=BLOCKS_PER_MS: the work after the frees, blocks
#               of 16 B to 4 KiB allocated, written and freed every millisecond (light: a
#               program that idles along; busy: one still working after its big free)
#   JSONL=<file>  also write every run's JSON line there: memory_back's line with
#               "allocator", "activity" and "round" after its "kind":
#     {"kind": "memory_back", "allocator", "activity", "round", "mode", "mib",
#      "activity_ms", "blocks_per_ms", "baseline_kib", "peak_kib", "after_kib",
#      "after_share"}
#     (scripts/report/sections/memory_back.py reads it)
#
# Allocators: glibc (no preload), every peer of scripts/peer_library.sh --list — Debian's
# mimalloc, jemalloc and tcmalloc, then the extra peers mimalloc3, snmalloc and rpmalloc
# from STA_EXTRA_PEERS_DIR — by LD_PRELOAD of the library it finds (a peer that is not
# there is left out, with a note on stderr), and sta (LD_PRELOAD of libsta_malloc.so).
# Every run has the allocators' defaults: LD_PRELOAD and every STA_MALLOC_* variable of
# the caller are unset. One untimed run on sta with STA_MALLOC_STATS=1 first (its exit
# line shows the library was loaded). Then ROUNDS rounds, each running every mode x
# activity under every allocator, the order of the allocators rotated by one every
# round.
#
# Stdout: a Markdown table, per activity, mode and allocator, of the medians over rounds
# of the RSS over the baseline at the peak and after the activity (MiB) and the share of
# the peak still resident. Exit status: 0 when every run succeeded; otherwise 1, with
# each failing run named on stderr.
set -Eeuo pipefail
trap 'echo "run_memory_back.sh: failed (status $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
root="$(cd "$(dirname "$0")/../.." && pwd)"
lib="${1:-${STA_MALLOC:-$root/build/bench/src/malloc/libsta_malloc.so}}"
mib="${MIB:-256}"
rounds="${ROUNDS:-3}"
activity_ms="${ACTIVITY_MS:-1000}"
read -r -a modes <<<"${MODES:-all older_half after_exit tree}"
read -r -a activities <<<"${ACTIVITIES:-light=8 busy=256}"
jsonl="${JSONL:-}"

die() { echo "run_memory_back.sh: $*" >&2; exit 1; }
for v in mib rounds activity_ms; do
    [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "${v^^}=${!v}: expected a positive number"
done
((${#modes[@]})) || die "MODES is empty"
((${#activities[@]})) || die "ACTIVITIES is empty"
for a in "${activities[@]}"; do
    [[ "$a" =~ ^[a-z_]+=[1-9][0-9]*$ ]] || die "ACTIVITIES: $a: expected NAME=BLOCKS_PER_MS"
done
build_dir="$(dirname "$lib")/../.."
targets=(sta_malloc)
if [[ -z "${MEMORY_BACK:-}" ]]; then
    targets+=(memory_back)
elif [[ -f "$(dirname "$MEMORY_BACK")/../CMakeCache.txt" ]]; then
    "$root/bench/build_targets.sh" "$(dirname "$MEMORY_BACK")/.." memory_back ||
        die "building memory_back for $MEMORY_BACK failed (cmake's messages are above)"
fi
if [[ "$(realpath -m "$lib")" == "$root/build/bench/src/malloc/libsta_malloc.so" ||
    -f "$build_dir/CMakeCache.txt" ]]; then
    "$root/bench/build_targets.sh" "$build_dir" "${targets[@]}" ||
        die "building ${targets[*]} in $build_dir failed (cmake's messages are above)"
fi
[[ -f "$lib" ]] || die "$lib: no such file (build it: cmake --build <dir> --target sta_malloc)"
lib="$(realpath "$lib")"
program="${MEMORY_BACK:-$(dirname "$lib")/../../bench/memory_back}"
[[ -x "$program" ]] ||
    die "$program: not built (cmake -DSTA_POOL_BUILD_BENCH=ON, target memory_back)"
program="$(realpath "$program")"

names=(glibc)
preloads=("")
for peer in $("$root/scripts/peer_library.sh" --list); do
    # (peer_library.sh says on stderr why when it is not there)
    if path="$("$root/scripts/peer_library.sh" "$peer")"; then
        names+=("$peer")
        preloads+=("$path")
    else
        echo "run_memory_back.sh: $peer is left out" >&2
    fi
done
names+=(sta)
preloads+=("$lib")

# The caller's LD_PRELOAD and STA_MALLOC_* variables are not the runs'.
clean_env=(-u LD_PRELOAD)
for v in $(compgen -e); do
    if [[ "$v" == STA_MALLOC_* ]]; then clean_env+=(-u "$v"); fi
done

check="$(env "${clean_env[@]}" LD_PRELOAD="$lib" STA_MALLOC_STATS=1 "$program" all 1 1 2>&1)" ||
    die "memory_back failed on libsta_malloc.so: $check"
grep -q '^sta_malloc: .* pools made' <<<"$check" ||
    die "no libsta_malloc exit line: was it preloaded? $check"

work="$(mktemp -d "${TMPDIR:-/tmp}/sta_memory_back.XXXXXX")"
trap 'rm -rf "$work"' EXIT
lines="$work/lines"
: >"$lines"
failed=()
start=$SECONDS
n=${#names[@]}
for ((round = 1; round <= rounds; ++round)); do
    for mode in "${modes[@]}"; do
        for activity in "${activities[@]}"; do
            name="${activity%%=*}" blocks="${activity#*=}"
            for ((k = 0; k < n; ++k)); do
                i=$(((k + round - 1) % n))
                alloc="${names[i]}"
                if ! line="$(env "${clean_env[@]}" ${preloads[i]:+LD_PRELOAD="${preloads[i]}"} \
                    "$program" "$mode" "$mib" "$activity_ms" "$blocks" 2>"$work/stderr")"; then
                    failed+=("$mode $name on $alloc (round $round): $(tail -c 300 "$work/stderr")")
                    continue
                fi
                prefix='{"kind": "memory_back", '
                if [[ "$line" != "$prefix"* || "$line" == *$'\n'* ]]; then
                    failed+=("$mode $name on $alloc (round $round): not one result line: $line")
                    continue
                fi
                echo "$prefix\"allocator\": \"$alloc\", \"activity\": \"$name\"," \
                    "\"round\": $round, ${line#"$prefix"}" >>"$lines"
            done
        done
    done
    echo "  round $round of $rounds done ($((SECONDS - start)) s)" >&2
done
if [[ -n "$jsonl" ]]; then
    cp "$lines" "$jsonl"
fi

/usr/bin/python3 - "$lines" "$mib" "$rounds" <<'EOF'
import json, statistics, sys

path, mib, rounds = sys.argv[1], sys.argv[2], sys.argv[3]
runs = {}
for line in open(path):
    r = json.loads(line)
    runs.setdefault((r["activity"], r["mode"], r["allocator"]), []).append(r)
print(f"{mib} MiB allocated, then freed as the mode says; RSS (RssAnon) over the baseline, "
      f"the median of {rounds} rounds: at the peak, after the activity, and the share of the "
      "peak still resident then.\n")
print("| activity | mode | allocator | peak MiB | after MiB | after / peak |")
print("|---|---|---|---:|---:|---:|")
for (activity, mode, alloc), rs in runs.items():
    peak = statistics.median((r["peak_kib"] - r["baseline_kib"]) / 1024 for r in rs)
    after = statistics.median((r["after_kib"] - r["baseline_kib"]) / 1024 for r in rs)
    share = statistics.median(r["after_share"] for r in rs)
    print(f"| {activity} | {mode} | {alloc} | {peak:.1f} | {after:.1f} | {100 * share:.1f} % |")
EOF
for line in "${failed[@]}"; do
    echo "FAILED: $line" >&2
done
if ((${#failed[@]})); then exit 1; fi
