#!/usr/bin/env bash
# Instructions per allocator operation, counted by valgrind --tool=callgrind: stable
# on a noisy machine where timings are not.
#
#   scripts/callgrind_counts.sh [--build DIR] [--out FILE] [allocator...]
#
# For each allocator, bench/op_counts runs the three patterns (fresh, pure_get,
# balanced) at each size (8, 32, 256, 4096, 32768 B; compile-time and run-time sizes
# for the pool) twice, with 2 and 10 batches, under callgrind with collection on only
# inside the measured loops. Instructions per op = the difference of the two runs
# divided by the difference of their op counts (fixed costs cancel), minus the same
# figure for the `null` allocator (the loop itself cancels). jemalloc, tcmalloc and
# mimalloc are also counted as LD_PRELOAD processes of the `malloc` rows.
#
# Output: CSV (allocator,pattern,mode,bytes,instructions_per_op), to FILE or stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/bench
out=/dev/stdout
allocators=()
while (($#)); do
    case "$1" in
        --build) build="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) allocators+=("$1"); shift ;;
    esac
done
driver="$build/bench/op_counts"
[[ -x "$driver" ]] || { echo "callgrind_counts: $driver not built" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "callgrind_counts: valgrind is not installed" >&2; exit 1; }

libdir=$(dirname "$(ldconfig -p | awk '/libc\.so\.6 .*x86-64/ {print $NF; exit}')")
declare -A preload=(
    [jemalloc]="$libdir/libjemalloc.so.2"
    [tcmalloc]="$libdir/libtcmalloc.so.4"
    [mimalloc]="$libdir/libmimalloc.so.2"
)
if ((${#allocators[@]} == 0)); then
    mapfile -t allocators < <("$driver" --list | grep -v unavailable)
    for p in jemalloc tcmalloc mimalloc; do
        [[ -e "${preload[$p]}" ]] && allocators+=("$p")
    done
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME [LD_PRELOAD-lib]: raw "name pattern mode bytes ops Ir" lines
run() {
    local name="$1" lib="${2:-}" prog="$1"
    [[ -n "$lib" ]] && prog=malloc
    local dir="$work/$name"
    mkdir -p "$dir"
    if [[ -n "$lib" ]]; then
        (cd "$dir" && LD_PRELOAD="$lib" valgrind --tool=callgrind --collect-atstart=no \
            --callgrind-out-file=cg.%p "$OLDPWD/$driver" "$prog" >/dev/null 2>"$dir/log") || return 1
    else
        (cd "$dir" && valgrind --tool=callgrind --collect-atstart=no \
            --callgrind-out-file=cg.%p "$OLDPWD/$driver" "$prog" >/dev/null 2>"$dir/log") || return 1
    fi
    awk -v name="$name" '
        /^desc: Trigger: Client Request: / { split($5, f, "/"); label = 1 }
        /^summary: / && label { print name, f[1], f[2], f[3], f[4], $2; label = 0 }
    ' "$dir"/cg.*.* 
}

raw="$work/raw"
: >"$raw"
run null >>"$raw"
for a in "${allocators[@]}"; do
    [[ "$a" == null ]] && continue
    echo "  callgrind: $a" >&2
    if [[ -n "${preload[$a]:-}" ]]; then
        run "$a" "${preload[$a]}" >>"$raw" || echo "  callgrind: $a failed, skipped" >&2
    else
        run "$a" >>"$raw" || echo "  callgrind: $a failed, skipped" >&2
    fi
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
        print "allocator,pattern,mode,bytes,instructions_per_op"
        for (i = 1; i <= n; ++i) {
            key = order[i]
            split(key, k, SUBSEP)
            if (!(key in ops2)) continue
            per = (ir2[key] - ir1[key]) / (ops2[key] - ops1[key])
            base = "null" SUBSEP k[2] SUBSEP k[3] SUBSEP k[4]
            if (k[1] == "null") continue
            b = (ir2[base] - ir1[base]) / (ops2[base] - ops1[base])
            printf "%s,%s,%s,%s,%.1f\n", k[1], k[2], k[3], k[4], per - b
        }
    }
' "$raw" >"$out"
