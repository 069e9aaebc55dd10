#!/usr/bin/env bash
# Unchanged programs on libsta_malloc.so (issue 16): Debian's own binaries, two small
# programs of the project's that free and grow big buffers (big_buffers.cpp) and one of a
# start-up (start_up.cpp, issue 38), timed as whole processes under glibc, the peers and
# libsta_malloc, with an output oracle; and three small ones (python3 -c pass, lua -e,
# one sqlite3 query: issue 38), whose peak RSS the report judges.
#
#   bench/programs/run_programs.sh [path/to/libsta_malloc.so]
#   (default: $STA_MALLOC, else build/bench/src/malloc/libsta_malloc.so)
#   When the library is in a CMake build folder (<build>/src/malloc/libsta_malloc.so, the
#   default too), sta_malloc, big_buffers and start_up are built there first
#   (bench/build_targets.sh; cmake's output on stderr); a library elsewhere is run as it is.
#   BIG_BUFFERS=<path>  the project's own bench/programs/big_buffers.cpp, built (default:
#               bench/big_buffers of the build directory the library is in)
#   START_UP=<path>  the project's own bench/programs/start_up.cpp, built (default: beside
#               big_buffers)
#   REPS=5      timed runs per program and allocator
#   ONLY=<text> only the programs whose name contains it
#   ALLOCATORS="sta sta-hardened"  only the allocators named (a quick comparison; the
#               report runs every one)
#   PERF_RUNS=3 sampled runs per program and allocator (perf record -e cpu-clock), for
#               the share of the CPU time spent inside the allocator; 0: not measured
#               (the output says so)
#   JSONL=<file> also write one JSON line per program and allocator there:
#     {"kind": "programs", "allocator", "program", "seconds", "min", "max", "cpu_seconds",
#      "maxrss_kib", "runs", "threads", "command", "allocator_env", "walls", "alloc_share",
#      "alloc_shares", "samples"}
#     (scripts/report.py reads it; "allocator" = glibc, a peer's name, sta or
#     sta-unchecked; "allocator_env" = the K=V words the allocator's row adds to the
#     program's environment, ["STA_MALLOC_CHECKS=0"] for sta-unchecked, [] for the others;
#     "walls" = the wall seconds of every run, round by round, for comparisons within a
#     round; "alloc_share" = the median of the sampled runs' shares, "alloc_shares" each
#     run's, "samples" all runs' samples; the three are null when PERF_RUNS=0)
#
# Allocators: glibc (no preload), every peer of scripts/peer_library.sh --list —
# Debian's mimalloc, jemalloc and tcmalloc, then the extra peers mimalloc3, snmalloc and
# rpmalloc from STA_EXTRA_PEERS_DIR — by LD_PRELOAD of the library it finds (a peer that
# is not there is left out, with a note on stderr), sta (LD_PRELOAD of libsta_malloc.so,
# its release checks on: the default), sta-unchecked (the same libsta_malloc.so with
# STA_MALLOC_CHECKS=0 in the program's environment: its release checks off, issue 27) and
# sta-hardened (libsta_malloc-hardened.so beside it, its defaults: issue 41).
# LD_PRELOAD, PYTHONMALLOC, STA_MALLOC_STATS and STA_MALLOC_CHECKS are taken out of the
# environment this script inherits: only the row, the program or the check run below
# sets them (an exported STA_MALLOC_CHECKS=0 would turn sta's checks off too).
# Each program first runs once untimed on glibc (its output is the oracle, and the
# page cache is warm after it) and once untimed on sta with STA_MALLOC_STATS=1 (its
# exit line shows the library was loaded). Then REPS rounds, each running the program
# once per allocator (sta-unchecked is one of them), the order of
# the allocators rotated by one every round, so that drift on a shared machine falls on
# all of them alike. Every run's stdout must equal the oracle's byte for byte.
#
# Then PERF_RUNS rounds sampled with perf (cpu-clock at 4999 Hz, every thread, user and
# kernel): a run's allocator share is its samples inside the allocator over all its
# samples — every function of the peer's library (libmimalloc*, libjemalloc, libtcmalloc,
# libsnmallocshim, librpmalloc) or of libsta_malloc, or glibc's malloc functions in
# libc.so (GLIBC_MALLOC in process_runs.py). memcpy, memset and the
# kernel's page faults count for none of them. One run's share is far steadier than its
# time (a slow spell of the machine slows the allocator and the program alike).
#
# Per run: wall seconds (the process from spawn to exit), CPU seconds (user + system of
# the process and its threads, from wait4) and peak RSS (ru_maxrss, as GNU time reports
# it). GNU time starts the program (through env, which sets LD_PRELOAD for the program
# alone) because a process's ru_maxrss counts the memory of the process it was forked
# from: spawned from this script's Python it would be at least Python's 10 MiB, spawned
# from time's 1 MiB. Per program and allocator: the median of the runs, and their min
# and max.
#
# Stdout: a Markdown table. Exit status: 0 when every run succeeded and matched the
# oracle; otherwise 1, with each failing program named on stderr.
set -Eeuo pipefail
trap 'echo "run_programs.sh: failed (status $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
root="$(cd "$(dirname "$0")/../.." && pwd)"
lib="${1:-${STA_MALLOC:-$root/build/bench/src/malloc/libsta_malloc.so}}"
reps="${REPS:-5}"
perf_runs="${PERF_RUNS:-3}"
only="${ONLY:-}"
jsonl="${JSONL:-}"

die() { echo "run_programs.sh: $*" >&2; exit 1; }
build_dir="$(dirname "$lib")/../.."
if [[ "$(realpath -m "$lib")" == "$root/build/bench/src/malloc/libsta_malloc.so" ||
    -f "$build_dir/CMakeCache.txt" ]]; then
    "$root/bench/build_targets.sh" "$build_dir" sta_malloc sta_malloc_hardened big_buffers start_up ||
        die "building sta_malloc, sta_malloc_hardened, big_buffers and start_up in $build_dir failed (cmake's messages are above)"
fi
[[ -f "$lib" ]] || die "$lib: no such file (build it: cmake --build <dir> --target sta_malloc)"
lib="$(realpath "$lib")"
big_buffers="${BIG_BUFFERS:-$(dirname "$lib")/../../bench/big_buffers}"
[[ -x "$big_buffers" ]] ||
    die "$big_buffers: not built (cmake -DSTA_POOL_BUILD_BENCH=ON, target big_buffers)"
big_buffers="$(realpath "$big_buffers")"
start_up="${START_UP:-$(dirname "$big_buffers")/start_up}"
[[ -x "$start_up" ]] || die "$start_up: not built (cmake -DSTA_POOL_BUILD_BENCH=ON, target start_up)"
start_up="$(realpath "$start_up")"
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || die "REPS=$reps: expected a positive number"
[[ "$perf_runs" =~ ^[0-9]+$ ]] || die "PERF_RUNS=$perf_runs: expected a number"
if ((perf_runs > 0)); then
    command -v perf >/dev/null ||
        die "perf is not installed (Debian package linux-perf; PERF_RUNS=0 leaves the" \
            "allocator's share of samples out)"
    perf record -q -e cpu-clock -o /dev/null -- true 2>/dev/null ||
        die "perf record -e cpu-clock is not permitted here (kernel.perf_event_paranoid;" \
            "PERF_RUNS=0 leaves the allocator's share of samples out)"
fi

# Debian's binaries by their full paths (a python3 found first in PATH may be another
# build, or a wrapper script that would be timed along with it).
lua=/usr/bin/lua5.4 xmllint=/usr/bin/xmllint python=/usr/bin/python3 sqlite=/usr/bin/sqlite3
pigz=/usr/bin/pigz
for tool in "$lua" "$xmllint" "$python" "$sqlite" "$pigz" /usr/bin/time /usr/bin/env; do
    [[ -x "$tool" ]] ||
        die "$tool is not installed (scripts/install-deps.sh --bench installs lua5.4," \
            "libxml2-utils, python3, sqlite3, pigz and time)"
done
xml=/usr/share/xml/iso-codes/iso_639-3.xml
[[ -r "$xml" ]] || die "$xml is missing (Debian package iso-codes)"

allocators=("glibc=")
for peer in $("$root/scripts/peer_library.sh" --list); do
    # (peer_library.sh says on stderr why when it is not installed)
    if path="$("$root/scripts/peer_library.sh" "$peer")"; then
        allocators+=("$peer=$path")
    else
        echo "run_programs.sh: $peer is left out" >&2
    fi
done
# name=path to preload (empty: none), then optional K=V words for the program's
# environment after a "|"
hardened="$(dirname "$lib")/libsta_malloc-hardened.so"
[[ -f "$hardened" ]] || die "$hardened: no such file (build it: cmake --build <dir> --target sta_malloc_hardened)"
allocators+=("sta=$lib" "sta-unchecked=$lib|STA_MALLOC_CHECKS=0" "sta-hardened=$hardened")
if [[ -n "${ALLOCATORS:-}" ]]; then # keep the rows named there
    kept=()
    for entry in "${allocators[@]}"; do
        [[ " $ALLOCATORS " == *" ${entry%%=*} "* ]] && kept+=("$entry")
    done
    ((${#kept[@]} != 0)) || die "ALLOCATORS=$ALLOCATORS names no allocator of this run"
    allocators=("${kept[@]}")
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/sta_programs.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The multi-threaded program's input: 10^7 lines of seq (76 MiB), made once.
seq 1 10000000 >"$work/lines.txt"

lua_dir="$root/tests/clients/lua"
malloc_dir="$root/tests/malloc"
# name | threads (0/1) | environment (K=V words) | stdin file | command
# Inputs sized so that one run takes about 0.5-2.5 s on this 2-core machine.
programs=(
    "lua5.4 binary_trees.lua 15 (GC-heavy)|0|||$lua $lua_dir/binary_trees.lua 15"
    "lua5.4 string_building.lua 10000 (GC-heavy)|0|||$lua $lua_dir/string_building.lua 10000"
    "xmllint --repeat --noout iso_639-3.xml|0|||$xmllint --repeat --noout $xml"
    "python3 dicts.py, PYTHONMALLOC=malloc|0|PYTHONMALLOC=malloc||$python $malloc_dir/dicts.py"
    "python3 dicts.py|0|||$python $malloc_dir/dicts.py"
    "sqlite3 :memory: < generate.sql|0||$malloc_dir/generate.sql|$sqlite :memory:"
    "pigz -p 2, 10^7 lines of seq (2 threads)|1|||$pigz -p 2 -c $work/lines.txt"
    # the project's own (bench/programs/big_buffers.cpp): large buffers freed and
    # allocated again, and one grown by realloc
    "big_buffers refill 4 MiB x 4000|0|||$big_buffers refill 4 4000"
    "big_buffers grow to 16 MiB x 150|0|||$big_buffers grow 16 150"
    # a start-up (bench/programs/start_up.cpp): 400,000 blocks of 16 B-8 KiB written in a
    # row, 5 % freed soon after
    "start_up 400,000 blocks of 16 B-8 KiB|0|||$start_up 400000"
    # small programs (issue 38): what an allocator adds to a program that does little;
    # their peak RSS is judged, not their few milliseconds (" (small)" in the name says so)
    "python3 -c pass (small)|0|||$python -c pass"
    "lua5.4 -e x=1 (small)|0|||$lua -e x=1"
    "sqlite3 :memory: one query (small)|0||$work/one_query.sql|$sqlite :memory:"
)
printf 'select 1;\n' >"$work/one_query.sql"

printf '%s\n' "${programs[@]}" >"$work/programs"
printf '%s\n' "${allocators[@]}" >"$work/allocators"
# (the status is taken here, not by the ERR trap, which would print this whole script)
status=0
"$python" - "$work" "$reps" "$only" "$jsonl" "$perf_runs" \
    "$root/bench/programs" <<'EOF' || status=$?
import hashlib, os, statistics, sys

work, reps, only, jsonl = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
perf_runs = int(sys.argv[5])
sys.dont_write_bytecode = True  # (no __pycache__ in the source tree)
sys.path.insert(0, sys.argv[6])
import process_runs as pr  # what run_toolkit.sh shares: bench/programs/process_runs.py

programs = []
for line in open(os.path.join(work, "programs")).read().splitlines():
    name, threads, env, stdin, command = line.split("|")
    programs.append({"name": name, "threads": threads == "1", "env": env.split(),
                     "stdin": stdin or "/dev/null", "argv": command.split(),
                     "command": " ".join(env.split() + [command] +
                                         (["<", stdin] if stdin else []))})
# (name, path to preload or "", [K=V words for the program])
allocators = pr.read_allocators(os.path.join(work, "allocators"))
base_env = pr.inherited_env(also=["PYTHONMALLOC"])


def run(program, preload, extra_env=(), sampled=None):
    """One process: (wall s, CPU s, peak RSS KiB, sha256 of stdout, exit status, stderr).
    sampled: a perf.data path to record the program's samples in (perf runs under time)."""
    wall, cpu, maxrss, out, status, stderr = pr.spawn(
        work, base_env, preload, program["env"] + list(extra_env), program["argv"],
        stdin=program["stdin"], sampled=sampled)
    digest = hashlib.sha256()
    with open(out, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return wall, cpu, maxrss, digest.hexdigest(), status, stderr


failed = []
results = {}  # (program, allocator) -> [(wall, cpu, rss)]
shares = {}  # (program, allocator) -> [(inside, total)]
lib = next(preload for alloc, preload, _ in allocators if alloc == "sta")
for p in programs:
    if only and only not in p["name"]:
        continue
    name = p["name"]
    print(f"running: {name}", file=sys.stderr, flush=True)
    oracle = run(p, "")
    if oracle[4] != 0:
        failed.append(f"{name} (glibc): exit status {oracle[4]}: {oracle[5][-300:]}")
        continue
    check = run(p, lib, ["STA_MALLOC_STATS=1"])
    if not pr.sta_loaded(check[4], check[5]):
        failed.append(f"{name} (sta): no libsta_malloc exit line: was it preloaded? "
                      f"(status {check[4]}) {check[5][-300:]}")
        continue
    mismatches = set()
    for rep in range(reps):
        for alloc, preload, env in pr.rotated(allocators, rep):
            wall, cpu, rss, digest, status, stderr = run(p, preload, env)
            if status != 0:
                failed.append(f"{name} ({alloc}): exit status {status}: {stderr[-300:]}")
            elif digest != oracle[3]:
                mismatches.add(alloc)
            else:
                results.setdefault((name, alloc), []).append((wall, cpu, rss))
    data = os.path.join(work, "perf.data")
    for rep in range(perf_runs):
        for alloc, preload, env in pr.rotated(allocators, rep):
            wall, cpu, rss, digest, status, stderr = run(p, preload, env, sampled=data)
            if status != 0:
                failed.append(f"{name} ({alloc}, sampled): exit status {status}: "
                              f"{stderr[-300:]}")
            elif digest != oracle[3]:
                mismatches.add(alloc)
            else:
                inside, _, total = pr.sample_counts(data)
                if total == 0:
                    failed.append(f"{name} ({alloc}, sampled): perf recorded no samples")
                else:
                    shares.setdefault((name, alloc), []).append((inside, total))
    for alloc in sorted(mismatches):
        failed.append(f"ORACLE MISMATCH: {name}: the output on {alloc} differs from the "
                      "untimed glibc run's")
    print(f"  done: {reps} rounds x {len(allocators)} allocators, {perf_runs} sampled",
          file=sys.stderr, flush=True)


def fmt(v, spec=".3f"):
    return "–" if v is None else format(v, spec)


rows = []
for p in programs:
    for alloc, _, env in allocators:
        runs = results.get((p["name"], alloc))
        if not runs or len(runs) != reps:
            continue
        walls = [r[0] for r in runs]
        sampled = shares.get((p["name"], alloc), [])
        share = (pr.median_share(sampled, 0)
                 if perf_runs and len(sampled) == perf_runs else None)
        rows.append({"kind": "programs", "allocator": alloc, "program": p["name"],
                     "seconds": round(statistics.median(walls), 4),
                     "min": round(min(walls), 4), "max": round(max(walls), 4),
                     "cpu_seconds": round(statistics.median(r[1] for r in runs), 4),
                     "maxrss_kib": statistics.median(r[2] for r in runs), "runs": len(runs),
                     "threads": p["threads"], "command": p["command"], "allocator_env": env,
                     "walls": [round(w, 4) for w in walls], "alloc_share": share,
                     "alloc_shares": pr.run_shares(sampled, 0) if share is not None else None,
                     "samples": sum(t for _, t in sampled) if share is not None else None})
if jsonl:
    pr.write_jsonl(jsonl, rows)

print(f"Medians of {reps} interleaved runs (whole processes, wall seconds, and their "
      "min–max); *× vs glibc* = glibc's median / this one's (above 1: faster than glibc); "
      "RSS = peak resident set (ru_maxrss), median; *in allocator* = the median share of "
      f"CPU samples inside the allocator over {perf_runs} sampled runs (perf, cpu-clock)"
      + ("" if perf_runs else ": not measured (PERF_RUNS=0)") + ".\n")
print("| program | allocator | median s | min–max s | × vs glibc | CPU s | RSS MiB | "
      "in allocator |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
by = {(r["program"], r["allocator"]): r for r in rows}
for r in rows:
    glibc = by.get((r["program"], "glibc"))
    speed = glibc["seconds"] / r["seconds"] if glibc and r["seconds"] > 0 else None
    print(f"| {r['program']} | {r['allocator']} | {r['seconds']:.3f} | "
          f"{r['min']:.3f}–{r['max']:.3f} | {fmt(speed, '.2f')}× | {r['cpu_seconds']:.3f} | "
          f"{r['maxrss_kib'] / 1024:.1f} | "
          f"{pr.pct(r['alloc_share'])} |")
for line in failed:
    print(f"FAILED: {line}", file=sys.stderr)
sys.exit(1 if failed else 0)
EOF
exit "$status"
