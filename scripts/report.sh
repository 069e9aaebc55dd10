#!/usr/bin/env bash
# The benchmark report — the README's main command.
#
#   scripts/report.sh [--quick]
#
# Installs missing peers (scripts/install-deps.sh --bench; says which it skipped),
# builds Release (CMake preset `bench`), runs every benchmark side by side — the get
# paths, the scenarios, cold start, scale, peak RSS, callgrind instruction counts, and
# any other program added to bench/CMakeLists.txt — then prints the main Markdown table
# and writes docs/benchmarks.md and docs/benchmarks.svg. About 5-10 minutes on 2 cores.
# --quick: fewer repetitions (a smoke run; the figures are noisier).
set -uo pipefail
cd "$(dirname "$0")/.."
reps=3
min_time=0.05
if [[ "${1:-}" == "--quick" ]]; then reps=1; fi

step=0
say() { step=$((step + 1)); printf '\n[%d] %s (%s)\n' "$step" "$*" "$(date +%H:%M:%S)" >&2; }

say "peers: installing what is missing"
peer_packages=(libmimalloc-dev libjemalloc-dev libgoogle-perftools-dev libboost-dev
               libfoonathan-memory-dev valgrind)
if ! scripts/install-deps.sh --bench; then
    echo "install-deps failed (no root and no sudo, or no network); going on with what is here" >&2
fi
skipped=()
for p in "${peer_packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        skipped+=("$p (not installed: apt-get could not install it)")
    fi
done
libdir=$(dirname "$(ldconfig -p | awk '/libc\.so\.6 .*x86-64/ {print $NF; exit}')")
declare -A preload=([jemalloc]="$libdir/libjemalloc.so.2" [tcmalloc]="$libdir/libtcmalloc.so.4"
                    [mimalloc]="$libdir/libmimalloc.so.2")
preloads=()
for p in mimalloc jemalloc tcmalloc; do
    if [[ -e "${preload[$p]}" ]]; then preloads+=("$p"); else
        skipped+=("$p (${preload[$p]} missing)"); fi
done
if ((${#skipped[@]})); then
    echo "skipped: ${skipped[*]}" >&2
fi

say "build: Release, preset bench"
cmake --preset bench >/dev/null || exit 1
if ! cmake --build --preset bench >&2; then
    echo "the full bench build failed; building the report's own programs only" >&2
    cmake --build --preset bench --target get_benchmark op_counts scenario_benchmark \
        process_benchmark >&2 || exit 1
fi
bin=build/bench/bench
out=build/bench/report
rm -rf "$out"
mkdir -p "$out"

gb_flags=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true
          --benchmark_min_time="$min_time" --benchmark_out_format=json)
run_gb() { # run_gb <json> <binary> [flags...] : progress on stderr, JSON to file
    local json="$1"; shift
    "$@" "${gb_flags[@]}" --benchmark_out="$json" 2>&1 | awk '
        /_median/ { n++; if (n % 20 == 0) printf "  ... %d benchmarks\n", n > "/dev/stderr" }
        END { printf "  %d benchmarks done\n", n > "/dev/stderr" }'
}

say "get paths: every class, both dispatch variants, in-process peers"
run_gb "$out/get.json" "$bin/get_benchmark"
for p in "${preloads[@]}"; do
    say "get paths: $p (LD_PRELOAD)"
    LD_PRELOAD="${preload[$p]}" run_gb "$out/get-$p.json" "$bin/get_benchmark" \
        --benchmark_filter='^get/(malloc|std::allocator)/'
done

say "scenarios: nested-container tree, GUI scene"
gb_flags=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true
          --benchmark_min_time=0.1 --benchmark_out_format=json)
run_gb "$out/scenario.json" "$bin/scenario_benchmark"
for p in "${preloads[@]}"; do
    say "scenarios: $p (LD_PRELOAD)"
    LD_PRELOAD="${preload[$p]}" run_gb "$out/scenario-$p.json" "$bin/scenario_benchmark" \
        --benchmark_filter='^scenario/std::allocator/'
done

say "peak RSS per scenario and allocator (one process each)"
scenario_allocs=(sta-branch sta-table std::allocator mimalloc-dlopen pmr-unsync-pool
                 pmr-monotonic foonathan-stack)
for s in tree gui; do
    for a in "${scenario_allocs[@]}"; do
        "$bin/scenario_benchmark" --rss "$s" "$a" 5 >>"$out/rss.jsonl" 2>/dev/null
    done
    for p in "${preloads[@]}"; do
        LD_PRELOAD="${preload[$p]}" "$bin/scenario_benchmark" --rss "$s" std::allocator 5 \
            2>/dev/null | sed "s/\"std::allocator\"/\"$p\"/" >>"$out/rss.jsonl"
    done
done

say "cold start: 10^6 x 32 B in fresh processes (5 each)"
cold_allocs=(sta-branch sta-table sta+populate sta+populate-2M sta+thp-2M sta+thp-populate-2M
             malloc mimalloc-dlopen pmr-unsync-pool pmr-monotonic foonathan-pool
             foonathan-stack boost-pool)
for i in 1 2 3 4 5; do
    for a in "${cold_allocs[@]}"; do
        "$bin/process_benchmark" cold "$a" >>"$out/cold.jsonl" 2>/dev/null
    done
    for p in "${preloads[@]}"; do
        LD_PRELOAD="${preload[$p]}" "$bin/process_benchmark" cold malloc 2>/dev/null |
            sed "s/\"malloc\"/\"$p\"/" >>"$out/cold.jsonl"
    done
    echo "  ... round $i of 5" >&2
done

say "scale: live set 10^3 .. 10^7 blocks (3 processes each)"
scale_allocs=(sta-branch sta-table malloc mimalloc-dlopen pmr-unsync-pool foonathan-pool
              boost-pool)
for i in 1 2 3; do
    for a in "${scale_allocs[@]}"; do
        "$bin/process_benchmark" scale "$a" >>"$out/scale.jsonl" 2>/dev/null
    done
    for p in "${preloads[@]}"; do
        LD_PRELOAD="${preload[$p]}" "$bin/process_benchmark" scale malloc 2>/dev/null |
            sed "s/\"malloc\"/\"$p\"/" >>"$out/scale.jsonl"
    done
    echo "  ... round $i of 3" >&2
done

if command -v valgrind >/dev/null; then
    say "instruction counts: callgrind"
    scripts/callgrind_counts.sh --build build/bench --out "$out/callgrind.csv" || true
else
    skipped+=("callgrind counts (valgrind not installed)")
fi

# Programs others added to bench/CMakeLists.txt: run them and include their tables raw.
known=" get_benchmark op_counts scenario_benchmark process_benchmark "
while read -r prog; do
    [[ -z "$prog" || "$known" == *" $prog "* ]] && continue
    say "other benchmark program: $prog"
    if [[ -x "$bin/$prog" ]]; then
        timeout 600 "$bin/$prog" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
            --benchmark_min_time=0.1 --benchmark_out_format=json \
            --benchmark_out="$out/extra-$prog.json" >"$out/extra-$prog.log" 2>&1 ||
            echo "  $prog failed or timed out (see $out/extra-$prog.log)" >&2
    else
        echo "  $prog was not built" >&2
    fi
done < <(sed -n 's/^[[:space:]]*sta_add_benchmark(\([A-Za-z0-9_]*\).*/\1/p' bench/CMakeLists.txt)

say "report: docs/benchmarks.md, docs/benchmarks.svg"
skipped_text=$(IFS=';'; echo "${skipped[*]:-}")
python3 scripts/report.py "$out" --docs docs --skipped "${skipped_text//;/; }"
# Real programs (issue 8): their own runner, interleaved runs with an output oracle.
say "real programs on the pool: Lua, SQLite, libxml2"
if REBUILD=0 REPS=3 bench/clients/run_clients.sh "$PWD/build/bench" >"$out/clients.md" \
    2>"$out/clients.log"; then
    {
        echo
        echo "## Real programs on the pool: Lua, SQLite, libxml2"
        echo
        echo "From \`bench/clients/run_clients.sh\` (3 interleaved runs each; method and"
        echo "analysis in [clients.md](clients.md)); every run's output equals the glibc run's."
        echo
        cat "$out/clients.md"
    } >>docs/benchmarks.md
else
    echo "  the client programs failed (see $out/clients.log)" >&2
fi

# Windows under wine (issue 7): the pool and thread_heap against the Windows heaps.
if command -v x86_64-w64-mingw32-g++-posix >/dev/null && command -v wine >/dev/null; then
    say "under wine: the pool and thread_heap against HeapAlloc, HeapCreate and malloc"
    if cmake -S . -B build/windows-bench --toolchain cmake/mingw-w64-x86_64.cmake \
        -DCMAKE_BUILD_TYPE=Release -DSTA_POOL_BUILD_EXAMPLES=OFF >"$out/wine.log" 2>&1 &&
        cmake --build build/windows-bench --target tiers_benchmark com_benchmark -j2 \
            >>"$out/wine.log" 2>&1 &&
        WINEDEBUG=-all WINEPREFIX="$PWD/build/windows-bench/wineprefix" \
            wine build/windows-bench/tests/tiers_benchmark.exe 1 5 >"$out/wine.md" 2>>"$out/wine.log" &&
        WINEDEBUG=-all WINEPREFIX="$PWD/build/windows-bench/wineprefix" \
            wine build/windows-bench/tests/com_benchmark.exe 20000 7 >"$out/com.md" 2>>"$out/wine.log"; then
        {
            echo
            echo "## Under wine: the tiers against the Windows heaps"
            echo
            echo "From \`bench/windows/tiers_benchmark.cpp\`, cross-built with mingw-w64 and run"
            echo "under wine $(wine --version 2>/dev/null). Wine's heap is not Microsoft's: these"
            echo "figures say how the pool fares on wine, not on Windows."
            echo
            cat "$out/wine.md"
            echo
            echo "### COM object creation: the activation slot against CoCreateInstance"
            echo
            echo "From \`bench/com_benchmark.cpp\` (method in [lazy_slot.md](lazy_slot.md))."
            echo
            cat "$out/com.md"
        } >>docs/benchmarks.md
    else
        echo "  the wine benchmark failed (see $out/wine.log)" >&2
    fi
else
    echo "  skipped the wine benchmark: mingw-w64 or wine is not installed" >&2
fi

echo >&2
echo "written: docs/benchmarks.md, docs/benchmarks.svg (raw results in $out)" >&2
