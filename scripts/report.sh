#!/usr/bin/env bash
# The benchmark report — the README's main command.
#
#   scripts/report.sh [--quick] [--allow-missing] [--extra-peers=DIR]
#
# Installs missing peers (scripts/install-deps.sh --bench), builds Release (CMake preset
# `bench`), runs every benchmark side by side — the get paths (in-process and the
# LD_PRELOAD peers), the scenarios (five rounds interleaved), peak RSS, cold start (32 B,
# 4 KiB and 32 KiB blocks), scale, the phase change, the waves and the traversal (each
# pool row in both layouts), the threads (per-thread pools at 1 and 2 threads), callgrind
# instruction counts, any other program added to
# bench/CMakeLists.txt, the real programs (Lua, SQLite, libxml2), Debian's unchanged
# programs, a real toolkit's scene (Qt 6 Widgets), the memory given back after a big
# free and the field's allocator benchmarks (mimalloc-bench's programs, ../shared/field-suite)
# on libsta_malloc.so (LD_PRELOAD) and, cross-built with mingw-w64 g++ and with clang,
# the Windows benchmarks under wine — then prints the main Markdown table and writes
# docs/benchmarks.md and docs/benchmarks.svg. About 50-55 minutes on 2 cores with Debian's
# peers (the field suite about 10 of them); each extra peer adds 6-15 (rpmalloc's get
# paths take about 9 minutes here, snmalloc's runs of big_buffers about 12, the toolkit's
# scene about 1 a peer, the field suite 2).
#
# Every section ends up in docs/benchmarks.md, or the report fails (status 1) and says
# which section and why; docs/ is written only once every section has run.
#   --quick          fewer repetitions (a smoke run; the figures are noisier)
#   --allow-missing  a section whose tools are not installed (a peer library, valgrind,
#                    wine, mingw-w64, the unchanged programs, Qt 6) is reported as skipped,
#                    with the reason, under its heading, instead of failing the report.
#                    Without it, a missing tool fails the report: scripts/install-deps.sh
#                    --bench installs them all.
#   --extra-peers=DIR  the folder of the extra LD_PRELOAD peers, the newest releases of
#                    mimalloc, snmalloc and rpmalloc built apart (scripts/peer_library.sh):
#                    the same as STA_EXTRA_PEERS_DIR=DIR; by default ../shared/peers beside
#                    the repository; empty: none. Each one present runs wherever Debian's
#                    peers run under LD_PRELOAD and counts among the general-purpose peers;
#                    one not present is left out whatever --allow-missing says, and the
#                    report says so. A folder named here that does not exist fails.
#   MEMORY_BACK_MIB=256  (environment) the MiB each run of the memory given back allocates
#                    before its frees (the issue's 1024 takes about 30 minutes alone)
set -Eeuo pipefail
trap 'echo "report.sh: failed (status $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
reps=3
min_time=0.05
quick=0
allow_missing=0
for arg in "$@"; do
    case "$arg" in
        --quick) reps=1; quick=1 ;;
        --allow-missing) allow_missing=1 ;;
        --extra-peers=*) export STA_EXTRA_PEERS_DIR="${arg#--extra-peers=}" ;;
        -h|--help) sed -n '2,38p' "$0"; exit 0 ;;
        *) echo "report.sh: unknown argument $arg (see --help)" >&2; exit 2 ;;
    esac
done

step=0
say() { step=$((step + 1)); printf '\n[%d] %s (%s)\n' "$step" "$*" "$(date +%H:%M:%S)" >&2; }
die() { echo "report.sh: $*" >&2; exit 1; }

# missing KEY REASON: a section (KEY, see scripts/report.py) cannot run here.
skips=()
declare -A absent=()
missing() {
    if ((allow_missing)); then
        echo "  skipped ($1): $2" >&2
        skips+=(--skip "$1=$2")
        absent[$1]=1
    else
        die "$2: install it (scripts/install-deps.sh --bench), or pass --allow-missing" \
            "to report that section as skipped"
    fi
}

say "peers: installing what is missing"
if ! scripts/install-deps.sh --bench; then
    echo "  install-deps failed (no root and no sudo, or no network): checking what is here" >&2
fi
# In-process peers compiled into the benchmarks (their rows are absent without them).
for p in libboost-dev libfoonathan-memory-dev; do
    if [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]]; then
        missing "package:$p" "$p is not installed"
    fi
done
declare -A preload=()
preloads=()
for p in mimalloc jemalloc tcmalloc; do
    if lib="$(scripts/peer_library.sh "$p")"; then
        preload[$p]="$lib"
        preloads+=("$p")
    else
        missing "preload:$p" "$p's library is not installed"
    fi
done
# The extra peers (scripts/peer_library.sh --extra): optional, said when not present.
if [[ -n "${STA_EXTRA_PEERS_DIR:-}" && ! -d "$STA_EXTRA_PEERS_DIR" ]]; then
    die "STA_EXTRA_PEERS_DIR=$STA_EXTRA_PEERS_DIR (--extra-peers): no such folder"
fi
export STA_EXTRA_PEERS_DIR="${STA_EXTRA_PEERS_DIR-$(dirname "$PWD")/shared/peers}"
for p in $(scripts/peer_library.sh --extra); do
    if lib="$(scripts/peer_library.sh "$p" 2>/dev/null)"; then
        echo "  extra peer $p: $lib" >&2
        preload[$p]="$lib"
        preloads+=("$p")
    else
        reason="$(scripts/peer_library.sh "$p" 2>&1 >/dev/null || true)"
        echo "  extra peer $p left out: $reason" >&2
        skips+=(--skip "preload:$p=$reason")
        absent[preload:$p]=1
    fi
done
# available ALLOCATOR: false when the package behind it was skipped above
declare -A needs=([boost-pool]=package:libboost-dev [mimalloc-dlopen]=preload:mimalloc
                  [foonathan-pool]=package:libfoonathan-memory-dev
                  [foonathan-stack]=package:libfoonathan-memory-dev)
available() { [[ -z "${needs[$1]:-}" || -z "${absent[${needs[$1]}]:-}" ]]; }

say "build: Release, preset bench"
cmake --preset bench >/dev/null || die "cmake --preset bench failed (its messages are above)"
cmake --build --preset bench >&2 || die "the bench build failed (its messages are above)"
bin=build/bench/bench
out=build/bench/report
rm -rf "$out"
mkdir -p "$out"

gb_flags=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true
          --benchmark_min_time="$min_time" --benchmark_out_format=json)
run_gb() { # run_gb <json> <binary> [flags...] : progress on stderr, JSON to file, log beside
    local json="$1" log="${1%.json}.log"
    shift
    if ! "$@" "${gb_flags[@]}" --benchmark_out="$json" 2>&1 | tee "$log" | awk '
        # a result line: a benchmark name, then its time; one per benchmark (its median)
        $1 ~ /\// && $3 ~ /^(ns|us|ms|s)$/ && $1 !~ /_(mean|stddev|cv)$/ {
            n++; if (n % 20 == 0) printf "  ... %d benchmarks\n", n > "/dev/stderr" }
        END { printf "  %d benchmarks done\n", n > "/dev/stderr" }'; then
        tail -n 5 "$log" >&2
        die "$(basename "$1") failed (see $log)"
    fi
}
# one_process <file> <log> <peer or ""> <command...>: one process, under LD_PRELOAD of
# <peer> when given; its JSON lines are appended to <file>, with the rows of "malloc" or
# "std::allocator" renamed to <peer>.
one_process() {
    local file="$1" log="$2" peer="$3" lines
    shift 3
    if ! lines="$(LD_PRELOAD="${peer:+${preload[$peer]}}" "$@" 2>>"$log")" || [[ -z "$lines" ]]
    then
        tail -n 5 "$log" >&2
        die "${peer:+LD_PRELOAD=$peer }$* failed or printed nothing (see $log)"
    fi
    if [[ -n "$peer" ]]; then
        lines="${lines//\"malloc\"/\"$peer\"}"
        lines="${lines//\"std::allocator\"/\"$peer\"}"
    fi
    echo "$lines" >>"$file"
}

say "get paths: every class, both dispatch variants in both layouts, in-process peers"
run_gb "$out/get.json" "$bin/get_benchmark"
for p in "${preloads[@]}"; do
    say "get paths: $p (LD_PRELOAD)"
    LD_PRELOAD="${preload[$p]}" run_gb "$out/get-$p.json" "$bin/get_benchmark" \
        --benchmark_filter='^get/(malloc|std::allocator)/'
done

# The scenarios: rounds interleaved, each round one process of the in-process rows (the
# pool, the bump and pool peers) and then one per LD_PRELOAD peer, so that the machine's
# drift over the minutes of the section falls on every allocator alike; scenario.rN.json,
# scenario-PEER.rN.json (sections/scenarios.py takes the median over the rounds).
scenario_rounds=5
if ((quick)); then scenario_rounds=1; fi
gb_flags=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true
          --benchmark_min_time=0.1 --benchmark_out_format=json)
for ((round = 1; round <= scenario_rounds; round++)); do
    say "scenarios: nested-container tree, GUI scene, round $round of $scenario_rounds"
    run_gb "$out/scenario.r$round.json" "$bin/scenario_benchmark"
    for p in "${preloads[@]}"; do
        LD_PRELOAD="${preload[$p]}" run_gb "$out/scenario-$p.r$round.json" \
            "$bin/scenario_benchmark" --benchmark_filter='^scenario/std::allocator/'
    done
done

say "peak RSS per scenario and allocator (one process each)"
scenario_allocs=(sta-branch sta-table sta-spans-branch sta-spans-table std::allocator
                 mimalloc-dlopen pmr-unsync-pool pmr-monotonic foonathan-stack)
for s in tree gui; do
    for a in "${scenario_allocs[@]}"; do
        if available "$a"; then
            one_process "$out/rss.jsonl" "$out/rss.log" "" "$bin/scenario_benchmark" \
                --rss "$s" "$a" 5
        fi
    done
    for p in "${preloads[@]}"; do
        one_process "$out/rss.jsonl" "$out/rss.log" "$p" "$bin/scenario_benchmark" --rss "$s" \
            std::allocator 5
    done
done

say "cold start: 10^6 x 32 B, 32 MiB of 4 KiB and of 32 KiB blocks; fresh processes (5 each)"
cold_allocs=(sta-branch sta-table sta-spans-branch sta-spans-table sta-spans+prefault
             sta-spans+thp sta+populate sta+populate-2M sta+thp-2M sta+thp-populate-2M
             malloc mimalloc-dlopen pmr-unsync-pool pmr-monotonic foonathan-pool
             foonathan-stack boost-pool)
# the big blocks (issue 38's fresh + first write at 4 KiB and 32 KiB): the pool's rows
# and the general-purpose allocators
cold_big_allocs=(sta-branch sta-table sta-spans-branch sta-spans-table malloc mimalloc-dlopen)
# cold_round BYTES ALLOCATOR...: one process of each in-process row that is there, then
# one per LD_PRELOAD peer, each allocating blocks of BYTES.
cold_round() {
    local bytes="$1" a p
    shift
    for a in "$@"; do
        if available "$a"; then
            one_process "$out/cold.jsonl" "$out/cold.log" "" "$bin/process_benchmark" \
                cold "$a" "$bytes"
        fi
    done
    for p in "${preloads[@]}"; do
        one_process "$out/cold.jsonl" "$out/cold.log" "$p" "$bin/process_benchmark" \
            cold malloc "$bytes"
    done
}
for i in 1 2 3 4 5; do
    cold_round 32 "${cold_allocs[@]}"
    cold_round 4096 "${cold_big_allocs[@]}"
    cold_round 32768 "${cold_big_allocs[@]}"
    echo "  ... round $i of 5" >&2
done

say "scale: live set 10^3 .. 10^7 blocks (3 processes each)"
scale_allocs=(sta-branch sta-table sta-spans-branch sta-spans-table malloc mimalloc-dlopen
              pmr-unsync-pool foonathan-pool boost-pool)
for i in 1 2 3; do
    for a in "${scale_allocs[@]}"; do
        if available "$a"; then
            one_process "$out/scale.jsonl" "$out/scale.log" "" "$bin/process_benchmark" scale "$a"
        fi
    done
    for p in "${preloads[@]}"; do
        one_process "$out/scale.jsonl" "$out/scale.log" "$p" "$bin/process_benchmark" scale malloc
    done
    echo "  ... round $i of 3" >&2
done

say "phase change: 64 MiB in 16 B blocks, freed, then 64 MiB in 1 KiB (3 processes each)"
phase_allocs=(sta-cursor sta-spans malloc mimalloc-dlopen)
for i in 1 2 3; do
    for a in "${phase_allocs[@]}"; do
        if available "$a"; then
            one_process "$out/phase.jsonl" "$out/phase.log" "" "$bin/process_benchmark" phase "$a"
        fi
    done
    for p in "${preloads[@]}"; do
        one_process "$out/phase.jsonl" "$out/phase.log" "$p" "$bin/process_benchmark" phase malloc
    done
done

# Waves (issue 13): each workload W = 10 times in one process; processes interleaved.
# Arguments chosen so one wave takes about 0.2-0.5 s here.
wave_workloads=("lua tests/clients/lua/binary_trees.lua 13"
                "lua tests/clients/lua/table_churn.lua 200"
                "lua tests/clients/lua/string_building.lua 3000"
                "tree 4096 12")
wave_allocs=(sta-cursor sta-spans malloc mimalloc-dlopen)
wave_processes=3
say "waves: ${#wave_workloads[@]} workloads x 10 waves in one process, $wave_processes processes each"
for i in $(seq "$wave_processes"); do
    for w in "${wave_workloads[@]}"; do
        read -r kind rest <<<"$w"
        for a in "${wave_allocs[@]}"; do
            if available "$a"; then
                # shellcheck disable=SC2086 # the workload's arguments are words on purpose
                one_process "$out/waves.jsonl" "$out/waves.log" "" "$bin/waves_benchmark" \
                    "$kind" "$a" $rest 10
            fi
        done
        if [[ -n "${preload[mimalloc]:-}" ]]; then
            # shellcheck disable=SC2086
            one_process "$out/waves.jsonl" "$out/waves.log" mimalloc "$bin/waves_benchmark" \
                "$kind" malloc $rest 10
        fi
    done
    echo "  ... round $i of $wave_processes" >&2
done

# Traversal (issue 13): whole processes, interleaved.
traversal_runs=5
traversal_args=()
if ((quick)); then traversal_runs=3; traversal_args=(4 24); fi
traversal_allocs=(sta-cursor sta-spans sta-spans+thp malloc mimalloc-dlopen)
say "traversal: GUI-like tree walked between partial teardowns ($traversal_runs processes each)"
for i in $(seq "$traversal_runs"); do
    for a in "${traversal_allocs[@]}"; do
        if available "$a"; then
            one_process "$out/traversal.jsonl" "$out/traversal.log" "" \
                "$bin/traversal_benchmark" "$a" "${traversal_args[@]}"
        fi
    done
    for p in "${preloads[@]}"; do
        one_process "$out/traversal.jsonl" "$out/traversal.log" "$p" \
            "$bin/traversal_benchmark" malloc "${traversal_args[@]}"
    done
    echo "  ... round $i of $traversal_runs" >&2
done

# Threads (issue 14): per-thread pools against the peers, whole processes interleaved;
# each process runs a warm-up and $thread_reps timed repetitions and prints their median.
# sta-spans-seed (the span layout in threads::one_owner) may run on one thread only.
thread_rounds=3
thread_reps=5
if ((quick)); then thread_rounds=1; thread_reps=3; fi
thread_workloads=(churn32 churn_mixed prodcons)
thread_allocs=(sta-spans malloc mimalloc-dlopen)
say "threads: churn and producer/consumer at 1 and 2 threads ($thread_rounds processes each)"
for i in $(seq "$thread_rounds"); do
    for w in "${thread_workloads[@]}"; do
        for t in 1 2; do
            run=(--workload="$w" --threads="$t" --reps="$thread_reps")
            for a in "${thread_allocs[@]}"; do
                if available "$a"; then
                    one_process "$out/threads.jsonl" "$out/threads.log" "" \
                        "$bin/threads_benchmark" --alloc="$a" "${run[@]}"
                fi
            done
            if [[ "$w" != prodcons && "$t" == 1 ]]; then
                one_process "$out/threads.jsonl" "$out/threads.log" "" \
                    "$bin/threads_benchmark" --alloc=sta-spans-seed "${run[@]}"
            fi
            for p in "${preloads[@]}"; do
                one_process "$out/threads.jsonl" "$out/threads.log" "$p" \
                    "$bin/threads_benchmark" --alloc=malloc "${run[@]}"
            done
        done
    done
    echo "  ... round $i of $thread_rounds" >&2
done

if command -v valgrind >/dev/null; then
    say "instruction counts: callgrind"
    scripts/callgrind_counts.sh --build build/bench --out "$out/callgrind.csv" ||
        die "callgrind_counts.sh failed (its messages are above)"
else
    missing callgrind "valgrind is not installed"
fi

# Programs others added to bench/CMakeLists.txt: run them and include their tables raw.
known=" get_benchmark op_counts scenario_benchmark process_benchmark "
known+="waves_benchmark traversal_benchmark threads_benchmark "
programs="$(sed -n 's/^[[:space:]]*sta_add_benchmark(\([A-Za-z0-9_]*\).*/\1/p' bench/CMakeLists.txt)"
for prog in $programs; do
    [[ "$known" != *" $prog "* ]] || continue
    say "other benchmark program: $prog"
    [[ -x "$bin/$prog" ]] || die "$prog was not built"
    timeout 600 "$bin/$prog" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
        --benchmark_min_time=0.1 --benchmark_out_format=json \
        --benchmark_out="$out/extra-$prog.json" >"$out/extra-$prog.log" 2>&1 ||
        die "$prog failed or timed out (status $?; see $out/extra-$prog.log)"
done

# Real programs (issue 8): their own runner, interleaved runs with an output oracle.
say "real programs on the pool: Lua, SQLite, libxml2"
if ! REBUILD=0 REPS="$reps" JSONL="$out/clients.jsonl" bench/clients/run_clients.sh \
    "$PWD/build/bench" \
    >"$out/clients.md" 2>"$out/clients.log"; then
    tail -n 10 "$out/clients.log" >&2
    die "the client programs failed (see $out/clients.log)"
fi

# sampled_runs N WHAT: N when perf may record here, else 0, with a line on stderr that
# says WHAT is not measured (the report's section says so too).
sampled_runs() {
    if ! command -v perf >/dev/null; then
        echo "report.sh: perf is not installed (Debian package linux-perf): $2 not measured" >&2
        echo 0
    elif ! perf record -q -e cpu-clock -o /dev/null -- true 2>/dev/null; then
        echo "report.sh: perf record is not permitted here (kernel.perf_event_paranoid): $2" \
            "not measured" >&2
        echo 0
    else
        echo "$1"
    fi
}

# Unchanged programs (issue 16): Debian's binaries as whole processes on glibc, the
# peers and libsta_malloc.so (LD_PRELOAD), rounds interleaved, with an output oracle.
# 9 programs x (2 + allocators x (reps + 3 sampled)) runs of 0.1-3 s: about 14 minutes
# with glibc, Debian's 3 peers and libsta_malloc with its checks on and off, 8 more a peer.
program_reps=7
if ((quick)); then program_reps=3; fi
program_tools=(/usr/bin/lua5.4 /usr/bin/xmllint /usr/bin/python3 /usr/bin/sqlite3 /usr/bin/pigz
               /usr/bin/time)
absent_tools=()
for tool in "${program_tools[@]}"; do
    [[ -x "$tool" ]] || absent_tools+=("$tool")
done
if ((${#absent_tools[@]})); then
    packages="lua5.4, libxml2-utils, python3, sqlite3, pigz, time"
    missing programs "not installed: ${absent_tools[*]} (Debian packages $packages)"
else
    # The share of perf samples inside the allocator: 3 sampled rounds, when perf may
    # record here (the report's programs section says "not measured" otherwise).
    perf_runs=$(sampled_runs 3 "the allocator's share of samples is")
    say "unchanged programs on libsta_malloc.so: lua5.4, xmllint, python3, sqlite3, pigz," \
        "big_buffers, start_up" \
        "($program_reps rounds, $perf_runs sampled with perf)"
    log="$out/programs.log"
    cmake --build build/bench --target sta_malloc sta_malloc_hardened big_buffers start_up >"$log" 2>&1 ||
        die "building libsta_malloc.so, libsta_malloc-hardened.so, big_buffers and start_up failed (see $log)"
    if ! ONLY='' ALLOCATORS='' REPS="$program_reps" PERF_RUNS="$perf_runs" JSONL="$out/programs.jsonl" \
        bench/programs/run_programs.sh \
        "$PWD/build/bench/src/malloc/libsta_malloc.so" >"$out/programs.md" 2>>"$log"; then
        tail -n 10 "$log" >&2
        die "the unchanged programs failed (see $log)"
    fi
fi

# A real toolkit (issue 38): bench/programs/qt_scene.cpp, a Qt 6 Widgets scene of about
# 19,000 widgets built, updated and deleted 5 times a process, as whole processes on glibc,
# the peers and libsta_malloc.so (LD_PRELOAD), rounds interleaved, with an output oracle.
# 2 + allocators x (reps + 2 sampled) runs of about 5 s: about 4 minutes with glibc,
# Debian's 3 peers and libsta_malloc, 1 more a peer.
toolkit_reps=5
if ((quick)); then toolkit_reps=3; fi
if [[ "$(dpkg-query -W -f='${Status}' qt6-base-dev 2>/dev/null)" != "install ok installed" ]]
then
    missing toolkit "qt6-base-dev is not installed (Qt 6 Widgets: bench/programs/qt_scene.cpp)"
elif [[ ! -x /usr/bin/time ]]; then
    missing toolkit "GNU time is not installed (Debian package time)"
else
    [[ -x build/bench/bench/qt_scene ]] ||
        die "qt6-base-dev is installed but build/bench/bench/qt_scene was not built" \
            "(bench/CMakeLists.txt found no Qt 6 Widgets: see cmake --preset bench)"
    # The shares of perf samples inside the allocator and the kernel: 2 sampled rounds,
    # when perf may record here (the report's toolkit section says "not measured" otherwise).
    toolkit_perf_runs=$(sampled_runs 2 "the toolkit's shares of samples are")
    say "a real toolkit on libsta_malloc.so: a Qt 6 Widgets scene ($toolkit_reps rounds," \
        "$toolkit_perf_runs sampled with perf)"
    log="$out/toolkit.log"
    cmake --build build/bench --target sta_malloc qt_scene >"$log" 2>&1 ||
        die "building libsta_malloc.so and qt_scene failed (see $log)"
    if ! REPS="$toolkit_reps" PERF_RUNS="$toolkit_perf_runs" JSONL="$out/toolkit.jsonl" \
        SCENE_ARGS='' bench/programs/run_toolkit.sh \
        "$PWD/build/bench/src/malloc/libsta_malloc.so" >"$out/toolkit.md" 2>>"$log"; then
        tail -n 10 "$log" >&2
        die "the toolkit's scene failed (see $log)"
    fi
fi

# Memory given back (issue 24): memory_back under glibc, the peers and libsta_malloc.so
# (LD_PRELOAD), 4 modes x 2 activities, rounds interleaved. 256 MiB a run: 2-4 s each,
# 8 allocators x 8 runs a round, 3 rounds: about 8-12 minutes on 2 shared cores (at 1024
# MiB, the issue's size, about 30: MEMORY_BACK_MIB sets it).
memory_back_rounds=3
if ((quick)); then memory_back_rounds=1; fi
memory_back_mib="${MEMORY_BACK_MIB:-256}"
say "memory given back: ${memory_back_mib} MiB freed, then light and busy activity" \
    "($memory_back_rounds rounds)"
log="$out/memory_back.log"
if ! ROUNDS="$memory_back_rounds" MIB="$memory_back_mib" JSONL="$out/memory_back.jsonl" \
    bench/programs/run_memory_back.sh "$PWD/build/bench/src/malloc/libsta_malloc.so" \
    >"$out/memory_back.md" 2>"$log"; then
    tail -n 10 "$log" >&2
    die "the memory given back failed (see $log)"
fi

# The heap map (issue 42): a heap aged in waves (bench/programs/lived_heap_map.c), what is
# resident under glibc, every peer and libsta_malloc.so, and libsta_malloc's spans at that
# moment, drawn into docs/heap_map.svg (bench/programs/run_heap_map.py; about 10 s).
if ! command -v cc >/dev/null; then
    missing heap_map "no C compiler (cc)"
else
    say "the heap map: a heap that has lived, under every allocator"
    log="$out/heap_map.log"
    if ! python3 -B bench/programs/run_heap_map.py \
        --lib "$PWD/build/bench/src/malloc/libsta_malloc.so" --out "$out" 2>"$log"; then
        tail -n 10 "$log" >&2
        die "the heap map failed (see $log)"
    fi
fi

# The field suite (issue 39): mimalloc-bench's programs from ../shared/field-suite (or
# STA_FIELD_SUITE), built once into build/field-suite, on glibc, the peers and
# libsta_malloc.so (LD_PRELOAD), rounds interleaved: bench/programs/run_field_suite.py.
# 17 programs a round, about 40 s an allocator: with glibc, Debian's 3 peers, the 3 extra
# ones and libsta_malloc about 5.5 minutes a round.
field_rounds=3
if ((quick)); then field_rounds=1; fi
field_suite="${STA_FIELD_SUITE:-$(dirname "$PWD")/shared/field-suite}"
if [[ ! -x "$field_suite/run.sh" ]]; then
    missing field_suite "no field suite at $field_suite (../shared/field-suite beside the" \
        "project, or STA_FIELD_SUITE)"
elif [[ ! -x /usr/bin/time ]]; then
    missing field_suite "GNU time is not installed (Debian package time)"
else
    say "the field suite: mimalloc-bench's programs on libsta_malloc.so ($field_rounds rounds)"
    log="$out/field_suite.log"
    if ! STA_FIELD_SUITE="$field_suite" python3 bench/programs/run_field_suite.py \
        --lib "$PWD/build/bench/src/malloc/libsta_malloc.so" --rounds "$field_rounds" \
        --jsonl "$out/field_suite.jsonl" >"$out/field_suite.md" 2>"$log"; then
        tail -n 10 "$log" >&2
        die "the field suite failed (see $log)"
    fi
fi

# Windows under wine (issues 7, 15, 28): cross-built with mingw-w64 g++ (no native TLS)
# and with clang (native TLS) against the same headers and libraries.
if ! command -v x86_64-w64-mingw32-g++-posix >/dev/null || ! command -v wine >/dev/null; then
    missing wine "mingw-w64 (x86_64-w64-mingw32-g++-posix) or wine is not installed"
elif ! command -v clang++ >/dev/null; then
    missing wine "clang is not installed (the windows-clang build)"
else
    say "under wine: Release builds with mingw-w64 g++ and with clang"
    log="$out/wine.log"
    # wine_build <folder> <toolchain> <targets...>
    wine_build() {
        local folder="$1" toolchain="$2"
        shift 2
        cmake -S . -B "build/$folder" --toolchain "$toolchain" -DCMAKE_BUILD_TYPE=Release \
            -DSTA_POOL_BUILD_EXAMPLES=OFF >>"$log" 2>&1 ||
            die "the $folder configure failed (see $log)"
        cmake --build "build/$folder" --target "$@" -j2 >>"$log" 2>&1 ||
            die "the $folder build failed (see $log)"
    }
    wine_build windows-bench cmake/mingw-w64-x86_64.cmake \
        tiers_benchmark com_benchmark com_box_benchmark paths_benchmark
    wine_build windows-clang-bench cmake/mingw-w64-x86_64-clang.cmake \
        com_box_benchmark paths_benchmark
    export WINEDEBUG=-all WINEPREFIX="$PWD/build/windows-bench/wineprefix"
    # on_wine <output> <program> <arguments...>: a program of a build folder's tests/
    on_wine() {
        local output="$1" program="$2"
        shift 2
        cmake/wine_run.sh "build/$program.exe" "$@" >>"$output" 2>>"$log" ||
            die "$program.exe failed under wine (see $log)"
    }
    say "under wine: the tiers against HeapAlloc, HeapCreate and malloc; COM creation (g++)"
    rm -f "$out/wine.md" "$out/com.md" "$out/wine.jsonl"
    on_wine "$out/wine.md" windows-bench/tests/tiers_benchmark 1 5
    on_wine "$out/com.md" windows-bench/tests/com_benchmark 20000 7
    wine_rounds=5
    paths_reps=7
    if ((quick)); then wine_rounds=1; paths_reps=3; fi
    say "under wine: the per-thread pool against the seed's mode, get paths, scenarios and" \
        "boxes; g++ and clang in turn, $wine_rounds rounds"
    for ((round = 1; round <= wine_rounds; round++)); do
        for folder in windows-bench windows-clang-bench; do
            on_wine "$out/wine.jsonl" "$folder/tests/paths_benchmark" 1 "$paths_reps" jsonl
            on_wine "$out/wine.jsonl" "$folder/tests/com_box_benchmark" 50000 101 jsonl
        done
    done
    wine --version >"$out/wine.version"
fi

say "report: docs/benchmarks.md, docs/benchmarks.svg, docs/heap_map.svg"
python3 scripts/report.py "$out" --docs docs "${skips[@]}" ||
    die "scripts/report.py failed (the reason is above); docs/ is unchanged"

echo >&2
if ((${#skips[@]})); then
    echo "skipped, as docs/benchmarks.md says: ${!absent[*]}" >&2
fi
echo "written: docs/benchmarks.md, docs/benchmarks.svg, docs/heap_map.svg (raw results in $out)" >&2
