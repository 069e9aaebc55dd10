#!/usr/bin/env bash
# Instructions per allocator operation, counted by valgrind --tool=callgrind: stable
# on a noisy machine where timings are not.
#
#   scripts/callgrind_counts.sh [--build DIR] [--out FILE] [--sizes "N ..."] [allocator...]
#
# DIR: the build folder (default build/bench); op_counts is built there first
# (bench/build_targets.sh; cmake's output on stderr).
# For each allocator, bench/op_counts runs the four patterns (fresh, pure_get,
# balanced, random) at each size (default 8, 32, 256, 4096, 32768 B, or the --sizes
# given, of op_counts' countable_sizes; compile-time and run-time sizes
# for the pool; every dispatch x layout: sta-table, sta-branch, sta-spans-table,
# sta-spans-branch) twice, with 2 and 10 batches, under callgrind with collection on only
# inside the measured loops. Instructions per op = the difference of the two runs
# divided by the difference of their op counts (fixed costs cancel), minus the same
# figure for the `null` allocator (the loop itself cancels). The LD_PRELOAD peers of
# scripts/peer_library.sh --list (Debian's mimalloc, jemalloc and tcmalloc; the extra
# peers mimalloc3, snmalloc and rpmalloc when STA_EXTRA_PEERS_DIR has them) are counted
# as LD_PRELOAD processes of the `malloc` rows: by default every one that is there; one
# named on the command line must be there. snmalloc is never counted: at its first
# allocation it maps 256 GiB (MAP_NORESERVE, its pagemap), which valgrind refuses (EINVAL;
# snmalloc aborts: "Failed to initialise snmalloc"); by default it is left out with a
# note on stderr, named on the command line it fails.
#
# sta_malloc and sta_malloc-unchecked (named on the command line only) are the drop-in
# libsta_malloc.so of DIR (built there first) under LD_PRELOAD of the `malloc` rows, with
# its release checks on and with STA_MALLOC_CHECKS=0.
#
# Output: CSV (allocator,pattern,mode,bytes,instructions_per_op,raw_per_op,null_per_op), to
# FILE or stdout: the null-subtracted figure, then the two it is the difference of.
# Any allocator that fails under valgrind, or yields no counts, fails the script (its
# valgrind log is shown): no allocator is left out quietly.
set -Eeuo pipefail
trap 'echo "callgrind_counts: failed (status $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
build=build/bench
out=/dev/stdout
sizes=()
allocators=()
while (($#)); do
    case "$1" in
        --build) build="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --sizes) read -ra sizes <<<"$2"; shift 2 ;;
        -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
        *) allocators+=("$1"); shift ;;
    esac
done
command -v valgrind >/dev/null || { echo "callgrind_counts: valgrind is not installed" >&2; exit 1; }
bench/build_targets.sh "$build" op_counts ||
    { echo "callgrind_counts: building op_counts in $build failed" >&2; exit 1; }
driver="$(realpath "$build/bench/op_counts")" # absolute: run() runs it from a folder of its own

mapfile -t peers < <(scripts/peer_library.sh --list)
not_under_valgrind=" snmalloc "
declare -A preload=()
for p in "${peers[@]}"; do
    if lib="$(scripts/peer_library.sh "$p" 2>/dev/null)"; then preload[$p]="$lib"; fi
done
if [[ " ${allocators[*]} " == *" sta_malloc"* ]]; then
    bench/build_targets.sh "$build" sta_malloc ||
        { echo "callgrind_counts: building sta_malloc in $build failed" >&2; exit 1; }
    preload[sta_malloc]="$(realpath "$build/src/malloc/libsta_malloc.so")"
    preload[sta_malloc-unchecked]="${preload[sta_malloc]}"
fi
declare -A run_env=([sta_malloc-unchecked]="STA_MALLOC_CHECKS=0")
if ((${#allocators[@]} == 0)); then
    # every allocator op_counts has, and every LD_PRELOAD peer that is there
    listing="$("$driver" --list)"
    mapfile -t allocators < <(awk '!/unavailable/' <<<"$listing")
    for p in "${peers[@]}"; do
        if [[ -z "${preload[$p]:-}" ]]; then continue; fi
        if [[ "$not_under_valgrind" == *" $p "* ]]; then
            echo "callgrind_counts: $p is left out: it does not run under valgrind" >&2
        else
            allocators+=("$p")
        fi
    done
fi
for a in "${allocators[@]}"; do
    if [[ "$not_under_valgrind" == *" $a "* ]]; then
        echo "callgrind_counts: $a does not run under valgrind (see --help)" >&2
        exit 1
    fi
    if [[ " ${peers[*]} " == *" $a "* && -z "${preload[$a]:-}" ]]; then
        scripts/peer_library.sh "$a" >/dev/null # says which library is missing
        exit 1
    fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME [LD_PRELOAD-lib]: raw "name pattern mode bytes ops Ir" lines on stdout; on
# failure the valgrind log on stderr and status 1
run() {
    local name="$1" lib="${2:-}" prog="$1"
    [[ -z "$lib" ]] || prog=malloc
    local dir="$work/$name"
    mkdir -p "$dir"
    if ! (cd "$dir" && env LD_PRELOAD="$lib" ${run_env[$name]:-} valgrind --tool=callgrind \
        --collect-atstart=no --callgrind-out-file=cg.%p "$driver" "$prog" "${sizes[@]}" >/dev/null \
        2>"$dir/log"); then
        echo "callgrind_counts: $name failed under valgrind; the end of its log:" >&2
        tail -n 20 "$dir/log" >&2
        return 1
    fi
    local lines
    lines="$(awk -v name="$name" '
        /^desc: Trigger: Client Request: / { split($5, f, "/"); label = 1 }
        /^summary: / && label { print name, f[1], f[2], f[3], f[4], $2; label = 0 }
    ' "$dir"/cg.*.*)"
    if [[ -z "$lines" ]]; then
        echo "callgrind_counts: $name produced no counts (no client-request dumps in $dir)" >&2
        return 1
    fi
    echo "$lines"
}

raw="$work/raw"
run null >"$raw"
for a in "${allocators[@]}"; do
    [[ "$a" != null ]] || continue
    echo "  callgrind: $a" >&2
    run "$a" "${preload[$a]:-}" >>"$raw"
done

# Per (allocator, pattern, mode, bytes): (Ir_large - Ir_small) / (ops_large - ops_small),
# minus null's figure for the same (pattern, mode, bytes).
awk '
    {
        key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
        if (!(key in ops1)) { ops1[key] = $5; ir1[key] = $6; order[++n] = key }
        else { ops2[key] = $5; ir2[key] = $6 }
    }
    END {
        print "allocator,pattern,mode,bytes,instructions_per_op,raw_per_op,null_per_op"
        for (i = 1; i <= n; ++i) {
            key = order[i]
            split(key, k, SUBSEP)
            if (!(key in ops2)) {
                printf "callgrind_counts: %s %s/%s/%s has one run of two\n", \
                    k[1], k[2], k[3], k[4] > "/dev/stderr"
                failed = 1
                continue
            }
            per = (ir2[key] - ir1[key]) / (ops2[key] - ops1[key])
            base = "null" SUBSEP k[2] SUBSEP k[3] SUBSEP k[4]
            if (k[1] == "null") continue
            if (!(base in ops2)) {
                printf "callgrind_counts: no null figure for %s/%s/%s\n", \
                    k[2], k[3], k[4] > "/dev/stderr"
                failed = 1
                continue
            }
            b = (ir2[base] - ir1[base]) / (ops2[base] - ops1[base])
            printf "%s,%s,%s,%s,%.1f,%.1f,%.1f\n", k[1], k[2], k[3], k[4], per - b, per, b
        }
        exit failed + 0
    }
' "$raw" >"$out"
