"""Turn the raw results of scripts/report.sh into the benchmark report.

scripts/report.py runs main() below. One section of the report is one module of
sections/: it reads its own files, names its measures and targets, says why a target is
missed and renders its part of the Markdown. core.py has what the sections share: the
names of the pool's rows and of the peers, reading the raw files, `best()` (the fastest
variant of a peer for a measure; the main table and the targets both use it), the checks
and verdicts, the Markdown helpers. Only the Python 3 standard library is used.

A section module defines what it has of:
    SKIP                   the --skip key that leaves the section out (it then loads
                           nothing and says "Skipped: REASON" under its heading)
    load(data, results)    reads its files from the directory `results` into attributes of
                           `data` (a core.Results); missing or malformed input: ReportError
    complete(data)         [problem]: rows the results must hold and do not
    MAIN                   the ids of its measures that are rows of the main table
    measures(data, layout) [core.Measure], the pool's rows of `layout` as ours
    targets(data)          [core.Target]; each names its why-missed function
    method(data)           its bullets of the report's method
    render(data)           its lines of the report
and is added to SECTIONS below, where the report shows it.
"""
import argparse
import datetime
import os
import sys

from .core import (LAYOUT_TEXT, LAYOUTS, MAIN_GROUPS, PRELOAD_PEERS, ReportError, Results,
                   Verdict, best, check, pretty, render_main, render_targets)
from .machine import machine
from .sections import (bstr, callgrind, clients, cold, extras, field_suite, get_paths,
                       heap_map, layouts, memory, memory_back, phase, programs, scale,
                       scenarios, seed, threads, toolkit, traversal, waves, wine)

# The sections, in the order the report shows them (and loads and checks them).
SECTIONS = [
    get_paths,
    callgrind,
    scenarios,
    cold,
    scale,
    memory,
    layouts,
    phase,
    waves,
    traversal,
    threads,
    seed,
    bstr,
    extras,
    clients,
    programs,
    toolkit,
    memory_back,
    heap_map,
    field_suite,
    wine,
]
# The targets table takes these sections' targets first, in this order, then the other
# sections', in the order of SECTIONS.
TARGET_ORDER = [get_paths, scenarios, cold, scale, memory, traversal, phase, bstr, threads,
                seed, waves, clients, programs, toolkit, memory_back, field_suite]
SKIPPABLE = ["preload:" + p for p in PRELOAD_PEERS] + [s.SKIP for s in SECTIONS
                                                        if hasattr(s, "SKIP")]


def each(name, order=SECTIONS):
    """The sections' `name` (a function or a list), of those that define it, in `order`."""
    return [getattr(s, name) for s in order if hasattr(s, name)]


def parse_skips(items):
    skips = {}
    for item in items:
        key, sep, reason = item.partition("=")
        if not sep or not reason.strip():
            raise ReportError(f"--skip {item!r}: expected KEY=REASON")
        if key not in SKIPPABLE and not key.startswith("package:"):
            raise ReportError(f"--skip {item!r}: KEY is one of {', '.join(SKIPPABLE)}, "
                              f"or package:NAME")
        skips[key] = reason.strip()
    return skips


def load(results, skips):
    """Every input of the report, checked: missing or malformed input -> ReportError.
    Every process section must hold the pool's rows in both layouts (and, where the report
    runs them, both dispatch policies) and every LD_PRELOAD peer not skipped."""
    if not os.path.isdir(results):
        raise ReportError(f"{results}: no such directory")
    data = Results(skips)
    for load_section in each("load"):
        load_section(data, results)
    problems = [p for complete in each("complete") for p in complete(data)]
    if problems:
        raise ReportError("incomplete results: " + "; ".join(problems))
    return data


def build_measures(data, layout):
    """id -> Measure, for every measure the tables and targets use; ours = the pool's
    rows in `layout`."""
    return {m.id: m for measures in each("measures") for m in measures(data, layout)}


def measures_by_layout(data):
    return {lay: build_measures(data, lay) for lay in LAYOUTS}


def targets(data):
    order = TARGET_ORDER + [s for s in SECTIONS if s not in TARGET_ORDER]
    return [t for section_targets in each("targets", order) for t in section_targets(data)]


def judge(data, measures_by_layout):
    """A Verdict for every target and layout: {layout: {id: Measure}} -> [Verdict]."""
    return [Verdict(t, lay, data.row(lay), [check(measures, c) for c in t.conds])
            for t in targets(data) for lay, measures in measures_by_layout.items()
            if lay in t.layouts]


def main_rows(measures):
    """[(measure, {group: Figure})]: the main table."""
    ids = [i for main in each("MAIN") for i in main]
    return [(measures[i], {g: best(measures[i], g) for g in MAIN_GROUPS})
            for i in ids if i in measures and measures[i].ours is not None]


METHOD = [
    "All figures are medians of repeated runs measured in one report run, side by side; the "
    "machine is shared and noisy, so compare ratios, not absolute times, and use the "
    "instruction counts (valgrind/callgrind, stable) to settle small differences. A peer's "
    "figure is the fastest of the ways it was measured (mimalloc: LD_PRELOAD through malloc, "
    "through operator new, and dlopen; glibc: malloc and std::allocator), in the main table "
    "and in the targets alike.",
    "",
]


def render_report(data, rows, verdicts, info, now, other=None):
    packages = [f"{k[8:]} ({r})" for k, r in data.skips.items() if k.startswith("package:")]
    lines = [
        "# Benchmarks", "",
        f"Generated by `scripts/report.sh` from runs that ended on {now}. Do not edit by hand: "
        "rerun it.", "",
        f"- Machine: {info['cpu']}, {info['cores']} cores; {info['os']}; THP `{info['thp']}`",
        f"- Compiler: {info['compiler']}, Release (`-O3 -DNDEBUG`, CMake preset `bench`)",
        f"- Default dispatch: `{pretty(data.policy)}` (see [dispatch.md](dispatch.md)); "
        f"default layout: {LAYOUT_TEXT[data.layout]} (`STA_POOL_SPANS`); every target is "
        "judged on both layouts",
        f"- Skipped peers: {'; '.join(packages) or 'none'}", "",
        "![ns per operation at 32 B](benchmarks.svg)", "",
        "## Method", ""] + METHOD + [line for method in each("method") for line in method(data)]
    lines += ["", "## Main table", "", render_main(data, rows, other), "",
              "## Targets", "", render_targets(verdicts, data.layout), ""]
    missed = [v for v in verdicts if not v.ok]
    if missed:
        lines += ["### Why the missed targets are missed", ""]
        lines += [f"- *{v.target.label}* ({LAYOUT_TEXT[v.layout]}): {v.target.why(data, v)}"
                  for v in missed] + [""]
    lines += [line for render in each("render") for line in render(data)]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--docs", default="docs")
    ap.add_argument("--skip", action="append", default=[], metavar="KEY=REASON")
    args = ap.parse_args(argv)
    try:
        data = load(args.results, parse_skips(args.skip))
    except ReportError as e:
        print(f"report.py: {e}", file=sys.stderr)
        return 1
    by_layout = measures_by_layout(data)
    measures = by_layout[data.layout]
    other = next(m for lay, m in by_layout.items() if lay != data.layout)
    rows = main_rows(measures)
    verdicts = judge(data, by_layout)
    print(render_main(data, rows, other) + "\n\n" + render_targets(verdicts, data.layout))
    # When the runs ended (the newest raw result): the same date however often the report
    # is rendered from them.
    now = datetime.datetime.fromtimestamp(max(
        os.path.getmtime(os.path.join(args.results, name)) for name in os.listdir(args.results)
    )).strftime("%Y-%m-%d %H:%M")
    os.makedirs(args.docs, exist_ok=True)
    with open(os.path.join(args.docs, "benchmarks.md"), "w") as f:
        f.write(render_report(data, rows, verdicts, machine(args.results), now, other))
    with open(os.path.join(args.docs, "benchmarks.svg"), "w") as f:
        f.write(get_paths.svg_chart(data))
    heap_map_svg = heap_map.svg(data)
    if heap_map_svg is not None:
        with open(os.path.join(args.docs, heap_map.SVG_NAME), "w") as f:
            f.write(heap_map_svg)
    return 0
