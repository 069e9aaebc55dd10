"""Peak RSS per scenario (bench/scenario_benchmark.cpp --rss; rss.jsonl): a process running
5 rounds of a scenario, over its baseline. Its figures are in the scenarios' table
(sections/scenarios.py)."""
import os

from ..core import Cond, Target, dispatch_rows, median_by, missing_rows, preloaded, read_lines
from .scenarios import SCENARIOS, per_scenario


def load(data, results):
    """data.rss_net: (allocator, scenario) -> peak RSS over the baseline, KiB (medians)."""
    path = os.path.join(results, "rss.jsonl")
    rows = read_lines(path)
    def by_alloc_scenario(r):
        return r["allocator"], r["scenario"]

    rss = median_by(rows, by_alloc_scenario, "peak_rss_kib", path)
    base = median_by(rows, by_alloc_scenario, "baseline_kib", path)
    data.rss_net = {k: rss[k] - base[k] for k in rss}


def complete(data):
    return missing_rows("peak RSS (rss.jsonl)", {k[0] for k in data.rss_net},
                        dispatch_rows(data) + preloaded(data))


def measures(data, layout):
    return per_scenario(data, layout, "rss", "scenario {} peak RSS over baseline", "KiB",
                        data.rss_net)


def targets(data):
    return [Target("memory", "memory", why_memory,
                   [Cond(f"rss/{s}", "glibc", "within", 1.3) for s in SCENARIOS])]


def why_memory(data, v):
    if v.layout == "spans":
        return ("the span layout takes 2 MiB segments and gives each class its own 64 KiB "
                "spans; the small scenarios' peak is dominated by partly used spans (see the "
                "RSS table).")
    return ("the pool takes 1 MiB pages and keeps freed blocks for reuse per class; the small "
            "scenarios' peak is dominated by whole pages (see the RSS table).")


def method(data):
    return ["- **memory**: peak RSS of a process running 5 rounds of a scenario, minus its "
            "baseline before the first round."]
