"""The waves (bench/waves_benchmark.cpp; waves.jsonl): a workload 10 times in one process,
CPU seconds per wave; the target compares the last wave with the first."""
import os
import statistics
from typing import NamedTuple

from ..core import (LAYOUT_ROWS, LAYOUT_TEXT, Cond, ReportError, Target, fx, is_pool,
                    make_measure, md_table, missing_rows, pretty, read_lines, slug)

WAVES = 10  # waves per process; the target compares the last with the first


class Waves(NamedTuple):
    ratio: float  # wave W / wave 1, the median over processes
    waves: list  # the median of each wave over processes, seconds
    processes: int


def workloads(data):
    return sorted({k[1] for k in data.waves})


def load(data, results):
    """data.waves: (allocator, workload) -> Waves. The lines of one process are consecutive,
    waves 1..W in order; the ratio is taken per process, then its median over processes."""
    path = os.path.join(results, "waves.jsonl")
    runs = {}
    current = None
    for r in read_lines(path):
        try:
            key = (r["allocator"], r["workload"])
            wave, seconds = int(r["wave"]), float(r["seconds"])
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: a malformed wave line: {r}") from None
        if wave == 1:
            current = []
            runs.setdefault(key, []).append(current)
        elif current is None or runs[key][-1] is not current or wave != len(current) + 1:
            raise ReportError(f"{path}: wave {wave} of {key[1]} on {key[0]} does not follow "
                              f"wave {wave - 1} of the same process")
        current.append(seconds)
    data.waves = {}
    for key, processes in runs.items():
        if any(len(p) != WAVES for p in processes):
            raise ReportError(f"{path}: {key[1]} on {key[0]}: a process without {WAVES} waves")
        if any(p[0] <= 0 for p in processes):
            raise ReportError(f"{path}: {key[1]} on {key[0]}: a first wave of no time")
        data.waves[key] = Waves(statistics.median(p[-1] / p[0] for p in processes),
                                [statistics.median(p[i] for p in processes)
                                 for i in range(WAVES)],
                                len(processes))


def complete(data):
    """The pool's rows in both layouts, glibc and mimalloc (LD_PRELOAD, unless skipped)."""
    mimalloc = [] if "preload:mimalloc" in data.skips else ["mimalloc"]
    problems = [p for w in workloads(data)
                for p in missing_rows(f"waves {w} (waves.jsonl)",
                                      {a for a, w_ in data.waves if w_ == w},
                                      list(LAYOUT_ROWS.values()) + ["malloc"] + mimalloc)]
    return problems + ([] if data.waves else ["waves (waves.jsonl): no workloads"])


def measures(data, layout):
    out = []
    for w in workloads(data):
        ratios = {a: v.ratio for (a, w_), v in data.waves.items() if w_ == w}
        out.append(make_measure(f"waves/{w}", f"waves {w}: wave {WAVES} / wave 1", "×",
                                ratios.get(LAYOUT_ROWS[layout]), ratios))
    return out


def targets(data):
    """One a workload."""
    return [Target(f"waves_{slug(w)}", f"waves, {w} (wave {WAVES} / wave 1)", why_waves,
                   [Cond(f"waves/{w}", "all", "at_most", 1.10)]) for w in workloads(data)]


def why_waves(data, v):
    workload = v.target.conds[0].measure.split("/", 1)[1]
    w = data.waves.get((LAYOUT_ROWS[v.layout], workload))
    if w is None:
        return "no waves of the pool in this layout."
    return (f"the pool's waves in {LAYOUT_TEXT[v.layout]}: wave 1 {w.waves[0]:.3f} s, wave "
            f"{WAVES} {w.waves[-1]:.3f} s (medians of {w.processes} processes; every wave in the "
            "waves table, beside the peers' on the same machine: compare their spread before "
            "reading a trend).")


def method(data):
    return [
        "- **waves** (`bench/waves_benchmark.cpp`): a workload 10 times in one process (Lua "
        "scripts of `tests/clients/lua` in a new state closed after each wave; the tree scenario, "
        "larger, built and destroyed); CPU time per wave."]


def render(data):
    lines = [f"## Waves: a workload {WAVES} times in one process (CPU s per wave)", "",
             f"From `bench/waves_benchmark.cpp`: each wave runs the workload from nothing and "
             f"gives every byte back (Lua: `lua_close`; tree: destroyed), on the same allocator; "
             f"processes interleaved. *ratio* = wave {WAVES} / wave 1 per process, the median over "
             f"processes; the waves are medians over processes.", ""]
    for w in workloads(data):
        rows = []
        for a in sorted({a for a, w_ in data.waves if w_ == w},
                        key=lambda a: (not is_pool(a), a)):
            v = data.waves[(a, w)]
            rows.append([pretty(a), fx(v.ratio), v.processes] + [f"{x:.3f}" for x in v.waves])
        lines += [f"### {w}", "", md_table(["allocator", "ratio", "processes"] +
                                           [f"w{i + 1}" for i in range(WAVES)], rows), ""]
    return lines
