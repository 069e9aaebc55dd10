"""The traversal (bench/traversal_benchmark.cpp; traversal.jsonl): a GUI-like tree walked
between partial teardowns, whole-process CPU seconds."""
import os
import statistics
from typing import NamedTuple

from ..core import (LAYOUT_ROWS, Cond, ReportError, Target, best, fmt, fx, make_measure,
                    md_table, missing_rows, preloaded, pretty, ratio, read_lines)


class Spread(NamedTuple):
    median: float
    low: float
    high: float
    runs: int


def load(data, results):
    """data.traversal: allocator -> Spread of CPU seconds over processes."""
    path = os.path.join(results, "traversal.jsonl")
    groups = {}
    for r in read_lines(path):
        try:
            groups.setdefault(r["allocator"], []).append(float(r["cpu_seconds"]))
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: a malformed traversal line: {r}") from None
    data.traversal = {a: Spread(statistics.median(v), min(v), max(v), len(v))
                      for a, v in groups.items()}


def complete(data):
    return missing_rows("traversal (traversal.jsonl)", set(data.traversal),
                        list(LAYOUT_ROWS.values()) + ["malloc"] + preloaded(data))


def measures(data, layout):
    medians_ = {a: v.median for a, v in data.traversal.items()}
    return [make_measure("traversal", "traversal (CPU s per process)", "s",
                         medians_.get(LAYOUT_ROWS[layout]), medians_)]


def targets(data):
    return [Target("traversal", "traversal", why_traversal,
                   [Cond("traversal", "mimalloc", "faster", 1.15)])]


def why_traversal(data, v):
    thp = data.traversal.get("sta-spans+thp")
    c = v.checks[0]
    text = (f"{pretty(LAYOUT_ROWS[v.layout])} {fmt(c.figure.ours)} s vs "
            f"{pretty(c.figure.variant)} {fmt(c.figure.value)} s")
    if thp is not None:
        text += f"; the span layout on huge pages {fmt(thp.median)} s"
    ours = data.traversal.get(LAYOUT_ROWS[v.layout])
    peer = data.traversal.get(c.figure.variant)
    if ours is not None and peer is not None:  # a bimodal machine moves medians, not minima
        text += f"; the fastest runs {fmt(ours.low)} s vs {fmt(peer.low)} s"
    return text + ". The walk reads every string: the time is cache and TLB misses, so what " \
        "counts is the order the blocks of a regrown subtree come in (docs/dispatch.md, " \
        "\"Layouts\")."


def method(data):
    return [
        "- **traversal** (`bench/traversal_benchmark.cpp`): a tree of 19,607 GUI-like elements "
        "(name, string properties, handlers, children) walked depth first many times between "
        "partial teardowns and regrowth; whole-process CPU time."]


def render(data):
    rows = []
    mi = best(measures(data, data.layout)[0], "mimalloc")
    for a, v in sorted(data.traversal.items(), key=lambda kv: kv[1].median):
        rows.append([pretty(a), f"{v.median:.3f}", f"{v.low:.3f}–{v.high:.3f}", v.runs,
                     fx(ratio(mi.value, v.median))])
    return ["## Traversal: a GUI-like tree walked between partial teardowns", "",
            "From `bench/traversal_benchmark.cpp`: whole-process CPU seconds, one process per "
            "run, allocators interleaved; *vs mimalloc* = the better of mimalloc's variants "
            f"({pretty(mi.variant) if mi.variant else 'n/a'}) / this allocator's median.", "",
            md_table(["allocator", "median s", "min–max s", "runs", "× vs mimalloc"], rows), ""]
