#!/usr/bin/env bash
# Real programs on the pool: run the Lua, SQLite and libxml2 client programs on full
# inputs with four allocators and print a Markdown table of medians and ratios.
#
#   bench/clients/run_clients.sh [build-dir]      (default: build/clients-bench)
#   REPS=5 (runs per allocator and workload), ONLY=<substring of a workload name>,
#   JSONL=<file>: also write the medians there, one JSON line per workload and allocator
#   ({"kind": "clients", "allocator", "workload", "seconds", "maxrss_kib", "runs"};
#   scripts/report.py reads it)
#   REBUILD=1 (the default): configure the build folder (Release, benchmarks on) first;
#   REBUILD=0: only when it is not configured yet. Either way every program the script
#   runs is built first (bench/build_targets.sh; cmake's output on stderr).
#
# Allocators: cursor and spans (the client's pool mode, built with STA_POOL_SPANS=0, the
# seed's shared cursor: sta_<name>_client_cursor, and with STA_POOL_SPANS=1, the span
# layout: sta_<name>_client_spans), glibc (the
# library's default allocator), mimalloc (the same default-allocator run with
# LD_PRELOAD=libmimalloc.so.2). The runs are interleaved (cursor, spans, glibc, mimalloc,
# cursor, ...) so that drift on a shared machine hits all of them alike. Every run's stdout must equal the glibc run's byte for byte
# (the oracle); a difference is reported and makes the script fail.
# Time: CPU seconds of each program's timed part; RSS: ru_maxrss of the process.
# Exit status: 0 when every run succeeded and matched the oracle; any failure is named
# on stderr.
set -Eeuo pipefail
trap 'echo "run_clients.sh: failed (status $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build/clients-bench}"
reps="${REPS:-5}"
only="${ONLY:-}"

jsonl="${JSONL:-}"
clients=(sta_lua_client sta_sqlite_client sta_libxml2_client)
# Every program the runs below start: the default build (the glibc and mimalloc rows,
# --alloc=malloc) and the build of each layout (--alloc=pool).
programs=("${clients[@]}" "${clients[@]/%/_cursor}" "${clients[@]/%/_spans}")
RECONFIGURE="${REBUILD:-1}" "$root/bench/build_targets.sh" "$build" "${programs[@]}"
bin="$build/bench"
# (peer_library.sh says on stderr why when it is not installed)
mimalloc="$("$root/scripts/peer_library.sh" mimalloc)" || mimalloc=

lua_dir="$root/tests/clients/lua"
dk="/usr/share/doc/lua-dkjson/examples"
iso_json="/usr/share/iso-codes/json/iso_639-3.json"
xml_files="/usr/share/mime/packages/freedesktop.org.xml /usr/share/xml/iso-codes/iso_639-3.xml"

# name | program | arguments [| lines the oracle ignores (grep -E)]
# jsontest.lua prints one table encoded in pairs() order, which follows Lua's hash seed
# (time and addresses: it changes from run to run with any allocator); only that line
# is left out of its comparison.
workloads=(
    "lua binary_trees 15 (GC-heavy)|sta_lua_client|$lua_dir/binary_trees.lua 15"
    "lua string_building 10000 (GC-heavy)|sta_lua_client|$lua_dir/string_building.lua 10000"
    "lua table_churn 500 (GC-heavy)|sta_lua_client|$lua_dir/table_churn.lua 500"
    "lua dkjson iso_639-3.json x3|sta_lua_client|$lua_dir/iso_json.lua $iso_json 3"
    "lua dkjson speedtest.lua|sta_lua_client|$dk/speedtest.lua dkjson"
    "lua dkjson jsontest.lua|sta_lua_client|$dk/jsontest.lua|^mixed table encoded as:"
    "sqlite SQL mix, 20000 people|sta_sqlite_client|$iso_json 20000"
    "libxml2 parse+walk+free x5|sta_libxml2_client|5 $xml_files"
)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
results="$work/results.tsv"
failed=0

run_one() { # workload-index allocator rep
    local index=$1 alloc=$2 rep=$3
    IFS='|' read -r name program args ignore <<<"${workloads[$index]}"
    local mode=--alloc=malloc preload=
    if [[ $alloc == cursor || $alloc == spans ]]; then
        mode=--alloc=pool
        program="${program}_$alloc"
    fi
    [[ $alloc == mimalloc ]] && preload="$mimalloc"
    local out="$work/out.$index.$alloc.$rep" err="$work/err.$index.$alloc.$rep"
    # shellcheck disable=SC2086 # the arguments are words on purpose
    if ! LD_PRELOAD="$preload" "$bin/$program" "$mode" $args >"$out.raw" 2>"$err"; then
        echo "FAILED: $name ($alloc): $(tail -1 "$err")" >&2
        failed=1
        return
    fi
    if [[ -n "$ignore" ]]; then
        # grep's status 1 = every line was left out; only 2 and above are errors
        grep -Ev "$ignore" "$out.raw" >"$out" || (($? == 1))
    else
        mv "$out.raw" "$out"
    fi
    local line seconds rss
    if ! line="$(grep '^sta-client ' "$err")"; then
        echo "FAILED: $name ($alloc): no 'sta-client' timing line on stderr" >&2
        failed=1
        return
    fi
    seconds="$(sed 's/.*seconds=\([0-9.]*\).*/\1/' <<<"$line")"
    rss="$(sed 's/.*maxrss_kib=\([0-9]*\).*/\1/' <<<"$line")"
    printf '%s\t%s\t%s\t%s\n' "$index" "$alloc" "$seconds" "$rss" >>"$results"
}

allocators=(cursor spans glibc)
if [[ -n "$mimalloc" ]]; then
    allocators+=(mimalloc)
else
    echo "mimalloc not found: its column is empty" >&2
fi
for index in "${!workloads[@]}"; do
    IFS='|' read -r name _ _ <<<"${workloads[$index]}"
    [[ -n "$only" && "$name" != *"$only"* ]] && continue
    echo "running: $name" >&2
    for ((rep = 1; rep <= reps; ++rep)); do
        for alloc in "${allocators[@]}"; do
            run_one "$index" "$alloc" "$rep"
        done
    done
    for f in "$work"/out."$index".*[0-9]; do
        if ! cmp -s "$f" "$work/out.$index.glibc.1"; then
            echo "ORACLE MISMATCH: $name: $(basename "$f") differs from the glibc run" >&2
            failed=1
        fi
    done
done

names_file="$work/names"
printf '%s\n' "${workloads[@]}" | cut -d'|' -f1 >"$names_file"
python3 - "$results" "$names_file" "$reps" "$jsonl" <<'EOF'
import json, statistics, sys
results, names_file, reps, jsonl = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
names = open(names_file).read().splitlines()
runs = {}
for line in open(results):
    index, alloc, seconds, rss = line.split("\t")
    runs.setdefault((int(index), alloc), []).append((float(seconds), int(rss)))
def med(index, alloc, field):
    values = [r[field] for r in runs.get((index, alloc), [])]
    return statistics.median(values) if values else None
def fmt(v, spec):
    return "–" if v is None else format(v, spec)
def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b
if "mimalloc" not in {alloc for _, alloc in runs}:
    print("mimalloc was not measured (libmimalloc.so.2 not found): its columns are empty.\n")
print(f"Medians of {reps} interleaved runs each; time = CPU seconds of the timed part; "
      "speed-up = other's time / pool's time (above 1: the pool is faster); "
      "RSS = peak resident set (ru_maxrss).\n")
print("*cursor* = the client built with STA_POOL_SPANS=0 (the seed's shared cursor), "
      "*spans* = built with STA_POOL_SPANS=1 (the span layout, the default).\n")
allocs = ("cursor", "spans", "glibc", "mimalloc")
print("| workload | cursor s | spans s | glibc s | mimalloc s | cursor vs glibc | cursor vs mimalloc "
      "| spans vs glibc | spans vs mimalloc | cursor RSS MiB | spans RSS MiB | glibc RSS MiB "
      "| mimalloc RSS MiB | cursor RSS / glibc | spans RSS / glibc |")
print("|---|" + "---:|" * 15)
lines = []
for index, name in enumerate(names):
    if (index, "cursor") not in runs:
        continue
    t = {a: med(index, a, 0) for a in allocs}
    m = {a: med(index, a, 1) for a in allocs}
    mib = {a: None if m[a] is None else m[a] / 1024 for a in m}
    print(f"| {name} | {fmt(t['cursor'], '.3f')} | {fmt(t['spans'], '.3f')} | "
          f"{fmt(t['glibc'], '.3f')} | {fmt(t['mimalloc'], '.3f')} | "
          f"{fmt(ratio(t['glibc'], t['cursor']), '.2f')}× | "
          f"{fmt(ratio(t['mimalloc'], t['cursor']), '.2f')}× | "
          f"{fmt(ratio(t['glibc'], t['spans']), '.2f')}× | "
          f"{fmt(ratio(t['mimalloc'], t['spans']), '.2f')}× | {fmt(mib['cursor'], '.1f')} | "
          f"{fmt(mib['spans'], '.1f')} | {fmt(mib['glibc'], '.1f')} | "
          f"{fmt(mib['mimalloc'], '.1f')} | {fmt(ratio(m['cursor'], m['glibc']), '.2f')} | "
          f"{fmt(ratio(m['spans'], m['glibc']), '.2f')} |")
    for a in allocs:
        if t[a] is not None:
            lines.append(json.dumps({"kind": "clients", "allocator": a, "workload": name,
                                     "seconds": t[a], "maxrss_kib": m[a],
                                     "runs": len(runs[(index, a)])}))
if jsonl:
    with open(jsonl, "w") as f:
        f.write("".join(line + "\n" for line in lines))
EOF
exit "$failed"
