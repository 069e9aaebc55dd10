"""Scale (bench/process_benchmark.cpp scale; scale.jsonl): 32 B blocks, the live set grown
from 10^3 to 10^7; grow and churn ns per op at each size."""
import os

from ..core import (Cond, Measure, Target, dispatch_rows, fmt, is_pool, md_table, median_by,
                    missing_rows, preloaded, pretty, read_lines)

FIELDS = ["grow_ns_per_op", "churn_ns_per_pair"]


def load(data, results):
    """data.scale: (allocator, live blocks) -> {field: median over processes}."""
    path = os.path.join(results, "scale.jsonl")
    rows = read_lines(path)
    data.scale = {}
    for field_name in FIELDS:
        medians_ = median_by(rows, lambda r: (r["allocator"], r["live_blocks"]), field_name, path)
        for k, v in medians_.items():
            data.scale.setdefault(k, {})[field_name] = v


def complete(data):
    return missing_rows("scale (scale.jsonl)", {k[0] for k in data.scale},
                        dispatch_rows(data) + preloaded(data))


def flat_spread(data, field_name, row):
    """(lowest, highest) of the pool's figure (`row`) over live-set sizes / the smallest's."""
    series = [v[field_name] for (a, _), v in sorted(data.scale.items(), key=lambda kv: kv[0][1])
              if a == row and field_name in v]
    if not series or series[0] <= 0:
        return None
    return min(series) / series[0], max(series) / series[0]


def measures(data, layout):
    """The pool's spread over live-set sizes, for the bound "flat" (no peer's)."""
    return [Measure(f"scale/{f}", f"scale {f}: over live-set sizes / at the smallest", "×",
                    flat_spread(data, f, data.row(layout)), {}) for f in FIELDS]


def targets(data):
    return [Target("scale", "scale", why_scale,
                   [Cond(f"scale/{f}", None, "flat", 0.2) for f in FIELDS])]


def why_scale(data, v):
    return ("the churn touches a block per op; beyond the caches (10^6 × 32 B = 32 MiB) each "
            "touch is a cache miss, for every allocator (compare the peers' rows): memory, not "
            "the pool's bookkeeping, which is O(1) per op at every size.")


def method(data):
    return [
        "- **scale** (`bench/process_benchmark.cpp scale`): 32 B blocks, the live set grows "
        "10^3 → 10^7; *grow* = alloc + touch per block while growing, *churn* = free + alloc + "
        "touch pairs over the ring of live blocks."]


def render(data):
    lives = sorted({k[1] for k in data.scale})
    rows = []
    for a in sorted({k[0] for k in data.scale}, key=lambda a: (not is_pool(a), a)):
        cells = [data.scale.get((a, live), {}) for live in lives]
        rows.append([pretty(a)] + [f"{fmt(c.get('grow_ns_per_op'))} / "
                                   f"{fmt(c.get('churn_ns_per_pair'))}" for c in cells])
    return ["## Scale: 32 B blocks, grow / churn ns per op by live blocks", "",
            md_table(["allocator"] + [f"10^{len(str(live)) - 1}" for live in lives], rows), ""]
