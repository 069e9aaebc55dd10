"""The phase change (bench/process_benchmark.cpp phase; phase.jsonl): 64 MiB in 16 B
blocks, all freed, then 64 MiB in 1 KiB blocks; the peak RSS over the baseline."""
import os

from ..core import (LAYOUT_ROWS, Cond, Target, fx, make_measure, md_table, median_by,
                    missing_rows, preloaded, pretty, read_lines)

PHASE_MIB = 64  # the phase change's bytes per phase


def load(data, results):
    """data.phase: allocator -> {"net_peak_kib", "first_phase_kib"} (medians)."""
    path = os.path.join(results, "phase.jsonl")
    rows = read_lines(path)
    by_alloc = lambda r: r["allocator"]  # noqa: E731
    net = median_by(rows, by_alloc, "net_peak_kib", path)
    first = median_by(rows, by_alloc, "first_phase_kib", path)
    data.phase = {a: {"net_peak_kib": net[a], "first_phase_kib": first[a]} for a in net}


def complete(data):
    return missing_rows("phase change (phase.jsonl)", set(data.phase),
                        list(LAYOUT_ROWS.values()) + ["malloc"] + preloaded(data))


def measures(data, layout):
    phase = {a: v["net_peak_kib"] / (PHASE_MIB * 1024) for a, v in data.phase.items()}
    return [make_measure("phase", "phase change: peak RSS over the baseline / 64 MiB", "×",
                         phase.get(LAYOUT_ROWS[layout]), phase)]


def targets(data):
    return [Target("phase", "phase change (peak RSS / 64 MiB)", why_phase,
                   [Cond("phase", "all", "at_most", 1.2)])]


def why_phase(data, v):
    p = data.phase.get(LAYOUT_ROWS[v.layout])
    if p is None:
        return "no phase-change run of the pool in this layout."
    return (f"the first phase holds {p['first_phase_kib'] / 1024:.0f} MiB, the peak is "
            f"{p['net_peak_kib'] / 1024:.0f} MiB over the baseline: memory freed in 16 B blocks "
            "is not reused for 1 KiB blocks in this layout.")


def method(data):
    return [
        "- **phase change** (`bench/process_benchmark.cpp phase`): 64 MiB in 16 B blocks, all "
        "freed, then 64 MiB in 1 KiB blocks, each block touched; peak RSS (VmHWM) over the RSS "
        "before."]


def render(data):
    rows = []
    for a, v in sorted(data.phase.items(), key=lambda kv: kv[1]["net_peak_kib"]):
        rows.append([pretty(a), f"{v['first_phase_kib'] / 1024:.1f}",
                     f"{v['net_peak_kib'] / 1024:.1f}",
                     fx(v["net_peak_kib"] / (PHASE_MIB * 1024))])
    return [f"## Phase change: {PHASE_MIB} MiB in 16 B blocks, all freed, then {PHASE_MIB} MiB "
            "in 1 KiB blocks", "",
            "From `bench/process_benchmark.cpp phase`: one process each (median of 3); RSS over "
            "the baseline taken before the first phase (VmRSS), peak = VmHWM.", "",
            md_table(["allocator", "after phase 1 MiB", "peak MiB", "peak / 64 MiB"], rows), ""]
