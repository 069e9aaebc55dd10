#!/usr/bin/env bash
# A real GUI toolkit's scene on libsta_malloc.so (issue 38): bench/programs/qt_scene.cpp, a
# plain Qt 6 Widgets program (Debian's Qt, the offscreen platform: no X server) that builds,
# updates and deletes a window of about 19,000 widgets on one thread, 5 times a process,
# timed as whole processes under glibc, the peers and libsta_malloc, with an output oracle.
#
#   bench/programs/run_toolkit.sh [path/to/libsta_malloc.so]
#   (default: $STA_MALLOC, else build/bench/src/malloc/libsta_malloc.so)
#   When the library is in a CMake build folder (<build>/src/malloc/libsta_malloc.so, the
#   default too), sta_malloc and qt_scene are built there first (bench/build_targets.sh;
#   cmake's output on stderr); a library elsewhere is run as it is. Without Qt 6 Widgets
#   (Debian package qt6-base-dev) bench/CMakeLists.txt has no qt_scene target, and this
#   script fails saying so.
#   QT_SCENE=<path>  the project's bench/programs/qt_scene.cpp, built (default:
#               bench/qt_scene of the build directory the library is in)
#   SCENE_ARGS="ROUNDS GROUPS"  qt_scene's arguments (default: none, its own 5 rounds of
#               240 groups)
#   REPS=5      timed runs per allocator
#   PERF_RUNS=2 sampled runs per allocator (perf record -e cpu-clock), for the shares of
#               the CPU samples inside the allocator and inside the kernel; 0: not
#               measured (the output says so)
#   JSONL=<file> also write one JSON line per allocator there:
#     {"kind": "toolkit", "allocator", "program", "command", "groups", "scene_rounds",
#      "widgets", "runs", "cpu_seconds", "cpu_min", "cpu_max", "cpus", "seconds", "walls",
#      "phases", "phase_runs", "maxrss_kib", "alloc_share", "alloc_shares",
#      "kernel_share", "kernel_shares", "samples"}
#     (scripts/report.py reads it, sections/toolkit.py; "allocator" = glibc, a peer's name
#     or sta; "cpus" and "walls" = every timed run's CPU and wall seconds, round by round,
#     for comparisons within a round; "cpu_seconds", "cpu_min", "cpu_max" and "seconds" =
#     their median, min, max and the walls' median; "phases" = the median of qt_scene's
#     own CPU seconds in each phase ({"startup", "build", "update", "teardown"}, every
#     scene round of the process summed), "phase_runs" each run's; "widgets" = widgets
#     made in one process; the shares as run_programs.sh's "alloc_share": the median of
#     the sampled runs', each run's, all runs' samples; null when PERF_RUNS=0)
#
# Allocators: glibc (no preload), every peer of scripts/peer_library.sh --list — Debian's
# mimalloc, jemalloc and tcmalloc, then the extra peers mimalloc3, snmalloc and rpmalloc
# from STA_EXTRA_PEERS_DIR — by LD_PRELOAD of the library it finds (a peer that is not
# there is left out, with a note on stderr), and sta (LD_PRELOAD of libsta_malloc.so, its
# release checks on: the default).
# The program's environment is this script's without LD_PRELOAD, STA_MALLOC_STATS,
# STA_MALLOC_CHECKS and every QT_* variable, plus QT_QPA_PLATFORM=offscreen and an
# XDG_RUNTIME_DIR of its own (a folder of this run's, mode 0700: Qt wants one).
# The program first runs once untimed on glibc (its "check" object is the oracle: the
# widgets, texts, check boxes, laid-out sizes and pixels of the scene, which no allocator
# may change) and once untimed on sta with STA_MALLOC_STATS=1 (its exit line shows the
# library was loaded). Then REPS rounds, each running the program once per allocator, the
# order of the allocators rotated by one every round, so that drift on a shared machine
# falls on all of them alike. Every run's "check" must equal the oracle's.
#
# Then PERF_RUNS rounds sampled with perf (cpu-clock at 4999 Hz, every thread, user and
# kernel): a run's allocator share is its samples inside the allocator over all its
# samples — every function of the peer's library (libmimalloc*, libjemalloc, libtcmalloc,
# libsnmallocshim, librpmalloc) or of libsta_malloc, or glibc's malloc functions in
# libc.so (GLIBC_MALLOC in process_runs.py); memcpy, memset and the kernel's page faults
# count for none of them. Its kernel share is its samples in the kernel ([k]: page faults,
# the eventfd writes of Qt's event loop, futexes, mmap) over all its samples; an allocator
# that maps and faults in more pages, or gives them back and takes them again, shows there.
#
# Per run: CPU seconds (user + system of the process and its threads, from wait4: the
# measure the report judges), wall seconds, qt_scene's CPU seconds per phase, peak RSS
# (ru_maxrss, as GNU time reports it: GNU time starts the program through env, which sets
# LD_PRELOAD for the program alone; see run_programs.sh for why not from Python). Per
# allocator: the median of the runs, and their min and max.
#
# Stdout: a Markdown table; *best peer / this* = the lowest median CPU seconds among glibc
# and the peers over this row's (above 1: this row is faster than every peer). Exit
# status: 0 when every run succeeded and matched the oracle; otherwise 1, with each
# failure on stderr.
set -Eeuo pipefail
trap 'echo "run_toolkit.sh: failed (status $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
root="$(cd "$(dirname "$0")/../.." && pwd)"
lib="${1:-${STA_MALLOC:-$root/build/bench/src/malloc/libsta_malloc.so}}"
reps="${REPS:-5}"
perf_runs="${PERF_RUNS:-2}"
jsonl="${JSONL:-}"
scene_args="${SCENE_ARGS:-}"

die() { echo "run_toolkit.sh: $*" >&2; exit 1; }
build_dir="$(dirname "$lib")/../.."
if [[ "$(realpath -m "$lib")" == "$root/build/bench/src/malloc/libsta_malloc.so" ||
    -f "$build_dir/CMakeCache.txt" ]]; then
    "$root/bench/build_targets.sh" "$build_dir" sta_malloc qt_scene ||
        die "building sta_malloc and qt_scene in $build_dir failed (cmake's messages are" \
            "above; no qt_scene target: Qt 6 Widgets was not found when the folder was" \
            "configured — install qt6-base-dev (scripts/install-deps.sh --bench), then" \
            "RECONFIGURE=1 or cmake $build_dir)"
fi
[[ -f "$lib" ]] || die "$lib: no such file (build it: cmake --build <dir> --target sta_malloc)"
lib="$(realpath "$lib")"
scene="${QT_SCENE:-$(dirname "$lib")/../../bench/qt_scene}"
[[ -x "$scene" ]] ||
    die "$scene: not built (cmake -DSTA_POOL_BUILD_BENCH=ON with Qt 6 Widgets, Debian" \
        "package qt6-base-dev; target qt_scene)"
scene="$(realpath "$scene")"
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || die "REPS=$reps: expected a positive number"
[[ "$perf_runs" =~ ^[0-9]+$ ]] || die "PERF_RUNS=$perf_runs: expected a number"
[[ "$scene_args" =~ ^([1-9][0-9]*( [1-9][0-9]*)?)?$ ]] ||
    die "SCENE_ARGS=$scene_args: expected \"ROUNDS\" or \"ROUNDS GROUPS\""
if ((perf_runs > 0)); then
    command -v perf >/dev/null ||
        die "perf is not installed (Debian package linux-perf; PERF_RUNS=0 leaves the" \
            "shares of samples out)"
    perf record -q -e cpu-clock -o /dev/null -- true 2>/dev/null ||
        die "perf record -e cpu-clock is not permitted here (kernel.perf_event_paranoid;" \
            "PERF_RUNS=0 leaves the shares of samples out)"
fi
python=/usr/bin/python3
for tool in "$python" /usr/bin/time /usr/bin/env; do
    [[ -x "$tool" ]] || die "$tool is not installed (scripts/install-deps.sh --bench)"
done

allocators=("glibc=")
for peer in $("$root/scripts/peer_library.sh" --list); do
    # (peer_library.sh says on stderr why when it is not installed)
    if path="$("$root/scripts/peer_library.sh" "$peer")"; then
        allocators+=("$peer=$path")
    else
        echo "run_toolkit.sh: $peer is left out" >&2
    fi
done
allocators+=("sta=$lib") # name=path to preload (empty: none)

work="$(mktemp -d "${TMPDIR:-/tmp}/sta_toolkit.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -m 0700 "$work/xdg"
printf '%s\n' "${allocators[@]}" >"$work/allocators"
# (the status is taken here, not by the ERR trap, which would print this whole script)
status=0
"$python" - "$work" "$reps" "$jsonl" "$perf_runs" "$scene" "$scene_args" \
    "$root/bench/programs" <<'EOF' || status=$?
import json, os, statistics, sys

work, reps, jsonl, perf_runs = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
scene, scene_args = sys.argv[5], sys.argv[6].split()
sys.dont_write_bytecode = True  # (no __pycache__ in the source tree)
sys.path.insert(0, sys.argv[7])
import process_runs as pr  # what run_programs.sh shares: bench/programs/process_runs.py

argv_scene = [scene] + scene_args
command = " ".join(["QT_QPA_PLATFORM=offscreen", os.path.basename(scene)] + scene_args)
allocators = pr.read_allocators(os.path.join(work, "allocators"))  # (name, preload or "", [])
base_env = pr.inherited_env(prefixes=["QT_"])
base_env.update(QT_QPA_PLATFORM="offscreen", XDG_RUNTIME_DIR=os.path.join(work, "xdg"))
PHASES = ["startup", "build", "update", "teardown"]


def run(preload, extra_env=(), sampled=None):
    """One process: (wall s, CPU s, peak RSS KiB, its JSON line or None, exit status,
    stderr). sampled: a perf.data path to record the program's samples in."""
    wall, cpu, maxrss, out, status, stderr = pr.spawn(work, base_env, preload, extra_env,
                                                      argv_scene, sampled=sampled)
    with open(out) as f:
        lines = f.read().splitlines()
    try:
        result = json.loads(lines[0]) if len(lines) == 1 else None
    except ValueError:
        result = None
    return wall, cpu, maxrss, result, status, stderr


def well_formed(result):
    return (isinstance(result, dict) and isinstance(result.get("check"), dict)
            and isinstance(result.get("cpu_s"), dict)
            and all(isinstance(result["cpu_s"].get(p), (int, float)) for p in PHASES))


failed = []
print(f"running: {command}", file=sys.stderr, flush=True)
oracle = run("")
if oracle[4] != 0 or not well_formed(oracle[3]):
    print(f"FAILED: qt_scene (glibc): exit status {oracle[4]}, output "
          f"{'well formed' if well_formed(oracle[3]) else 'not one JSON line'}: "
          f"{oracle[5][-500:]}", file=sys.stderr)
    sys.exit(1)
expected = oracle[3]["check"]
lib = next(preload for alloc, preload, _ in allocators if alloc == "sta")
check = run(lib, ["STA_MALLOC_STATS=1"])
if not pr.sta_loaded(check[4], check[5]):
    print(f"FAILED: qt_scene (sta): no libsta_malloc exit line: was it preloaded? "
          f"(status {check[4]}) {check[5][-500:]}", file=sys.stderr)
    sys.exit(1)


def checked(alloc, what, outcome):
    """The run's JSON when it succeeded and matched the oracle; else None (and a failure)."""
    status, result, stderr = outcome[4], outcome[3], outcome[5]
    if status != 0:
        failed.append(f"qt_scene ({alloc}{what}): exit status {status}: {stderr[-300:]}")
    elif not well_formed(result):
        failed.append(f"qt_scene ({alloc}{what}): not one JSON line with check and cpu_s")
    elif result["check"] != expected:
        failed.append(f"ORACLE MISMATCH: qt_scene on {alloc}{what}: check {result['check']}, "
                      f"glibc's {expected}")
    else:
        return result
    return None


results = {}  # allocator -> [(wall, cpu, rss, phases)]
for rep in range(reps):
    for alloc, preload, _ in pr.rotated(allocators, rep):
        outcome = run(preload)
        result = checked(alloc, "", outcome)
        if result is not None:
            results.setdefault(alloc, []).append(
                (outcome[0], outcome[1], outcome[2], {p: result["cpu_s"][p] for p in PHASES}))
    print(f"  round {rep + 1} of {reps} done", file=sys.stderr, flush=True)
sampled = {}  # allocator -> [(inside, kernel, total)]
data = os.path.join(work, "perf.data")
for rep in range(perf_runs):
    for alloc, preload, _ in pr.rotated(allocators, rep):
        if checked(alloc, ", sampled", run(preload, sampled=data)) is None:
            continue
        inside, kernel, total = pr.sample_counts(data)
        if total == 0:
            failed.append(f"qt_scene ({alloc}, sampled): perf recorded no samples")
        else:
            sampled.setdefault(alloc, []).append((inside, kernel, total))
    print(f"  sampled round {rep + 1} of {perf_runs} done", file=sys.stderr, flush=True)


rows = []
for alloc, _, _ in allocators:
    runs = results.get(alloc)
    if not runs or len(runs) != reps:
        continue
    cpus, walls = [r[1] for r in runs], [r[0] for r in runs]
    perf_ok = perf_runs > 0 and len(sampled.get(alloc, [])) == perf_runs
    s = sampled.get(alloc, []) if perf_ok else []
    rows.append({
        "kind": "toolkit", "allocator": alloc, "program": "qt_scene", "command": command,
        "groups": oracle[3]["groups"], "scene_rounds": oracle[3]["rounds"],
        "widgets": expected["widgets"], "runs": len(runs),
        "cpu_seconds": round(statistics.median(cpus), 4), "cpu_min": round(min(cpus), 4),
        "cpu_max": round(max(cpus), 4), "cpus": [round(c, 4) for c in cpus],
        "seconds": round(statistics.median(walls), 4), "walls": [round(w, 4) for w in walls],
        "phases": {p: round(statistics.median(r[3][p] for r in runs), 4) for p in PHASES},
        "phase_runs": {p: [round(r[3][p], 4) for r in runs] for p in PHASES},
        "maxrss_kib": statistics.median(r[2] for r in runs),
        "alloc_share": pr.median_share(s, 0) if perf_ok else None,
        "alloc_shares": pr.run_shares(s, 0) if perf_ok else None,
        "kernel_share": pr.median_share(s, 1) if perf_ok else None,
        "kernel_shares": pr.run_shares(s, 1) if perf_ok else None,
        "samples": sum(r[2] for r in s) if perf_ok else None})
if jsonl:
    pr.write_jsonl(jsonl, rows)


peers = [r for r in rows if r["allocator"] != "sta"]
best = min(peers, key=lambda r: r["cpu_seconds"]) if peers else None
scene_rounds = oracle[3]["rounds"]
print(f"`{command}`, {scene_rounds} rounds of {expected['widgets'] // scene_rounds} widgets a "
      f"process: medians of {reps} interleaved runs (whole processes); CPU s = user + system "
      "of the process (wait4), min–max beside it; build / update / teardown = qt_scene's own "
      "CPU seconds in each phase, its rounds summed; RSS = peak resident set (ru_maxrss); *in "
      "allocator* / *in kernel* = the median share of CPU samples there over "
      f"{perf_runs} sampled runs (perf, cpu-clock)"
      + ("" if perf_runs else ": not measured (PERF_RUNS=0)")
      + "; *best peer / this* = the lowest median CPU s among glibc and the peers"
      + (f" ({best['allocator']})" if best else "") + " over this row's.\n")
print("| allocator | CPU s | min–max s | build s | update s | teardown s | wall s | RSS MiB | "
      "in allocator | in kernel | best peer / this |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    ph = r["phases"]
    speed = f"{best['cpu_seconds'] / r['cpu_seconds']:.3f}×" if best else "–"
    print(f"| {r['allocator']} | {r['cpu_seconds']:.3f} | "
          f"{r['cpu_min']:.3f}–{r['cpu_max']:.3f} | {ph['build']:.3f} | {ph['update']:.3f} | "
          f"{ph['teardown']:.3f} | {r['seconds']:.3f} | "
          f"{r['maxrss_kib'] / 1024:.1f} | {pr.pct(r['alloc_share'])} | "
          f"{pr.pct(r['kernel_share'])} | {speed} |")
for line in failed:
    print(f"FAILED: {line}", file=sys.stderr)
sys.exit(1 if failed else 0)
EOF
exit "$status"
