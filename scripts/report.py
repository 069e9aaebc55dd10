#!/usr/bin/env python3
"""Turn the raw results of scripts/report.sh into the benchmark report.

    scripts/report.py RESULTS_DIR [--docs DIR] [--skip KEY=REASON]...

Reads RESULTS_DIR (Google Benchmark JSON, JSON lines, the callgrind CSV, the Markdown of
the client programs and of the wine run), prints the main Markdown table and the targets
to stdout, and writes DIR/benchmarks.md and DIR/benchmarks.svg.

Every section's input must be there and well formed, or the report fails with the reason
(exit status 1). A section may be left out only by `--skip KEY=REASON`, and the report
then says so under that section's heading. KEY is one of SKIPPABLE below, or
`package:NAME` for a peer package that is not installed.

Three parts, kept apart: loading (raw files -> `Results`), judging (`best()` picks the
fastest variant of a peer for a measure; the main table and the targets both use it),
rendering (Markdown, SVG). Only the Python 3 standard library is used.
"""
import argparse
import csv
import datetime
import glob
import html
import json
import os
import platform
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from typing import NamedTuple, Optional

# ====================================================================================
# Data: peers, targets
# ====================================================================================

# The value of get_benchmark's context key "sta_default_policy" -> the pool's rows.
POLICIES = {"inline_branch": "sta-branch", "self_rewriting_table": "sta-table"}

# A peer and the allocator names it is measured under in the results. A peer's figure
# for a measure is the fastest of its variants.
PEERS = {
    "glibc": ["malloc", "std::allocator"],
    "mimalloc": ["mimalloc", "mimalloc (new)", "mimalloc-dlopen"],
    "jemalloc": ["jemalloc", "jemalloc (new)"],
    "tcmalloc": ["tcmalloc", "tcmalloc (new)"],
    "boost::pool": ["boost-pool"],
    "bump": ["pmr-monotonic", "foonathan-stack"],
}
# Groups of peers; "all" is every allocator that is not the pool.
GROUPS = {"general": ["mimalloc", "jemalloc", "tcmalloc"]}
GROUP_TEXT = {"glibc": "glibc", "mimalloc": "mimalloc", "boost::pool": "boost::pool",
              "bump": "a bump allocator", "general": "the best general-purpose peer",
              "all": "the best peer"}
# Peers measured by running the `malloc` rows of the same binaries under LD_PRELOAD.
PRELOAD_PEERS = ["mimalloc", "jemalloc", "tcmalloc"]
SKIPPABLE = ["preload:" + p for p in PRELOAD_PEERS] + ["callgrind", "clients", "wine"]

PATTERNS = ["fresh", "pure_get", "balanced"]
SEED = {"pure_get": 2.30, "balanced": 2.45, "fresh": 1.95}  # ns, 32 B, Windows


class Cond(NamedTuple):
    """One condition of a target.

    bound "faster": the group's best figure / ours >= threshold;
    bound "within": ours / the group's best figure <= threshold;
    bound "flat": ours at every live-set size / ours at the smallest, within
    1 +- threshold (group unused).
    """
    measure: str
    group: Optional[str]
    bound: str
    threshold: float


class Target(NamedTuple):
    id: str
    label: str
    why: str  # key of the "why missed" text (WHY below)
    conds: list


TARGETS = (
    [Target(f"ct32_{p}", f"32 B ct {p}", "ct32",
            [Cond(f"get/{p}/ct/32", "general", "faster", 3.0),
             Cond(f"get/{p}/ct/32", "glibc", "faster", 5.0),
             Cond(f"get/{p}/ct/32", "boost::pool", "within", 1.2)]) for p in PATTERNS]
    + [Target(f"rt32_{p}", f"32 B rt {p}", "rt32",
              [Cond(f"get/{p}/rt/32", "general", "faster", 2.5)]) for p in PATTERNS]
    + [Target(f"scenario_{s}", f"scenario {s}", "scenario",
              [Cond(f"scenario/{s}", "glibc", "faster", 1.6),
               Cond(f"scenario/{s}", "mimalloc", "faster", 1.15),
               Cond(f"scenario/{s}", "bump", "within", 1.15)]) for s in ["tree", "gui"]]
    + [Target("cold", "cold start", "cold", [Cond("cold", "all", "faster", 2.0)]),
       Target("scale", "scale", "scale",
              [Cond("scale/grow_ns_per_op", None, "flat", 0.2),
               Cond("scale/churn_ns_per_pair", None, "flat", 0.2)]),
       Target("memory", "memory", "memory",
              [Cond("rss/tree", "glibc", "within", 1.3),
               Cond("rss/gui", "glibc", "within", 1.3)])])

PRETTY = {
    "sta-branch": "sta (inline_branch)",
    "sta-table": "sta (self_rewriting_table)",
    "malloc": "glibc malloc",
    "std::allocator": "std::allocator (glibc)",
    "mimalloc-dlopen": "mimalloc (dlopen)",
    "mimalloc": "mimalloc (LD_PRELOAD)",
    "jemalloc": "jemalloc (LD_PRELOAD)",
    "tcmalloc": "tcmalloc (LD_PRELOAD)",
    "pmr-unsync-pool": "pmr::unsynchronized_pool_resource",
    "pmr-monotonic": "pmr::monotonic_buffer_resource",
    "foonathan-pool": "foonathan::memory_pool",
    "foonathan-stack": "foonathan::memory_stack",
    "boost-pool": "boost::pool<>",
    "boost-fast-pool": "boost::fast_pool_allocator",
}


def pretty(name):
    if name and name.endswith(" (new)"):
        return name[:-6] + " (LD_PRELOAD, operator new)"
    return PRETTY.get(name, name)


def is_pool(name):
    return name.startswith("sta")


# ====================================================================================
# Loading: raw files -> Results
# ====================================================================================


class ReportError(Exception):
    """A section's input is missing or malformed: the report cannot be complete."""


@dataclass
class Results:
    policy: str  # the pool's rows: "sta-branch" or "sta-table"
    get: dict  # (allocator, pattern, mode, bytes) -> ns per op
    scenarios: dict  # (allocator, scenario) -> µs per round (CPU time)
    rss_net: dict  # (allocator, scenario) -> peak RSS over the baseline, KiB
    cold: dict  # allocator -> ns per block
    cold_faults: dict  # allocator -> minor faults
    scale: dict  # (allocator, live blocks) -> {field: median}
    ir: dict  # (allocator, pattern, mode, bytes) -> instructions per op
    extras: list  # (program, [benchmark entries])
    clients_md: Optional[str]
    wine: Optional[dict]  # {"version", "tiers", "com"}
    skips: dict = field(default_factory=dict)  # KEY -> reason

    @property
    def other_policy(self):
        return "sta-table" if self.policy == "sta-branch" else "sta-branch"


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        raise ReportError(f"{path}: {e.strerror}") from None


def read_json(path):
    text = read_text(path)
    try:
        return json.loads(text)
    except ValueError as e:
        raise ReportError(f"{path}: not JSON ({e})") from None


def read_lines(path):
    rows = []
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError:
            raise ReportError(f"{path}:{number}: not a JSON line: {line[:80]!r}") from None
    if not rows:
        raise ReportError(f"{path}: no results")
    return rows


def medians(doc, path):
    """run_name -> benchmark entry of its median (or of its single run)."""
    result = {}
    for b in doc.get("benchmarks", []):
        if b.get("error_occurred"):
            raise ReportError(f"{path}: {b.get('name')} failed: {b.get('error_message')}")
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        key = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate" or key not in result:
            result[key] = b
    if not result:
        raise ReportError(f"{path}: no benchmarks")
    return result


def to_ns(b, field_name):
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
    return b[field_name] * scale


def preload_files(results, prefix, skips):
    """[(preload peer or "", path)]: the in-process file, then one per LD_PRELOAD peer."""
    files = [("", os.path.join(results, f"{prefix}.json"))]
    for p in PRELOAD_PEERS:
        if "preload:" + p not in skips:
            files.append((p, os.path.join(results, f"{prefix}-{p}.json")))
    return files


def load_policy(doc, path):
    value = doc.get("context", {}).get("sta_default_policy")
    if value not in POLICIES:
        raise ReportError(
            f"{path}: context key \"sta_default_policy\" is {value!r}, expected one of "
            f"{', '.join(POLICIES)} (get_benchmark reports the default it was built with)")
    return POLICIES[value]


def load_get(results, skips):
    """(the pool's rows, {(allocator, pattern, mode, bytes): ns per op})."""
    table = {}
    policy = None
    for preload, path in preload_files(results, "get", skips):
        doc = read_json(path)
        if not preload:
            policy = load_policy(doc, path)
        for run_name, b in medians(doc, path).items():
            parts = run_name.split("/")
            if len(parts) < 5 or parts[0] != "get":
                continue
            alloc, pattern, mode, size = parts[1], parts[2], parts[3], int(parts[4])
            if preload:
                if alloc == "malloc":
                    alloc = preload
                elif alloc == "std::allocator":
                    alloc = preload + " (new)"
                else:
                    continue
            ops = b.get("ops", 1.0) or 1.0
            field_name = "real_time" if "manual_time" in run_name else "cpu_time"
            table[(alloc, pattern, mode, size)] = to_ns(b, field_name) / ops
    return policy, table


def load_scenarios(results, skips):
    """(allocator, scenario) -> µs per round (CPU time)."""
    table = {}
    for preload, path in preload_files(results, "scenario", skips):
        for run_name, b in medians(read_json(path), path).items():
            parts = run_name.split("/")
            if len(parts) < 3 or parts[0] != "scenario":
                continue
            alloc, scenario = parts[1], parts[2]
            if preload:
                if alloc != "std::allocator":
                    continue
                alloc = preload
            table[(alloc, scenario)] = to_ns(b, "cpu_time") / 1e3
    return table


def median_by(rows, key, field_name, path):
    groups = {}
    for r in rows:
        try:
            groups.setdefault(key(r), []).append(r[field_name])
        except KeyError as e:
            raise ReportError(f"{path}: a row without {e}: {r}") from None
    return {k: statistics.median(v) for k, v in groups.items()}


def load_callgrind(path):
    text = read_text(path)
    table = {}
    for r in csv.DictReader(text.splitlines()):
        try:
            key = (r["allocator"], r["pattern"], r["mode"], int(r["bytes"]))
            table[key] = float(r["instructions_per_op"])
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: malformed row {r}") from None
    if not table:
        raise ReportError(f"{path}: no counts")
    return table


def load(results, skips):
    """Every input of the report, checked: missing or malformed input -> ReportError."""
    if not os.path.isdir(results):
        raise ReportError(f"{results}: no such directory")
    def path(name):
        return os.path.join(results, name)

    policy, get = load_get(results, skips)
    scenarios = load_scenarios(results, skips)
    rss_rows = read_lines(path("rss.jsonl"))
    cold_rows = read_lines(path("cold.jsonl"))
    scale_rows = read_lines(path("scale.jsonl"))
    def by_alloc_scenario(r):
        return r["allocator"], r["scenario"]

    rss = median_by(rss_rows, by_alloc_scenario, "peak_rss_kib", path("rss.jsonl"))
    base = median_by(rss_rows, by_alloc_scenario, "baseline_kib", path("rss.jsonl"))
    scale = {}
    for field_name in ["grow_ns_per_op", "churn_ns_per_pair"]:
        medians_ = median_by(scale_rows, lambda r: (r["allocator"], r["live_blocks"]),
                             field_name, path("scale.jsonl"))
        for k, v in medians_.items():
            scale.setdefault(k, {})[field_name] = v
    data = Results(
        policy=policy, get=get, scenarios=scenarios,
        rss_net={k: rss[k] - base[k] for k in rss},
        cold=median_by(cold_rows, lambda r: r["allocator"], "ns_per_block", path("cold.jsonl")),
        cold_faults=median_by(cold_rows, lambda r: r["allocator"], "minor_faults",
                              path("cold.jsonl")),
        scale=scale,
        ir={} if "callgrind" in skips else load_callgrind(path("callgrind.csv")),
        extras=[(os.path.basename(p)[6:-5], list(medians(read_json(p), p).values()))
                for p in sorted(glob.glob(path("extra-*.json")))],
        clients_md=None if "clients" in skips else read_text(path("clients.md")),
        wine=None if "wine" in skips else {
            "version": read_text(path("wine.version")).strip(),
            "tiers": read_text(path("wine.md")), "com": read_text(path("com.md"))},
        skips=dict(skips))
    check_complete(data)
    return data


def check_complete(data):
    """Every process section holds the pool's rows and every LD_PRELOAD peer not skipped."""
    expected = [data.policy] + [p for p in PRELOAD_PEERS if "preload:" + p not in data.skips]
    sections = {
        "get (get.json, get-PEER.json)": {k[0] for k in data.get},
        "scenarios (scenario.json, scenario-PEER.json)": {k[0] for k in data.scenarios},
        "peak RSS (rss.jsonl)": {k[0] for k in data.rss_net},
        "cold start (cold.jsonl)": set(data.cold),
        "scale (scale.jsonl)": {k[0] for k in data.scale},
    }
    if data.ir:
        sections["instruction counts (callgrind.csv)"] = {k[0] for k in data.ir}
    problems = [f"{name}: no rows of {', '.join(missing)}"
                for name, present in sections.items()
                for missing in [[a for a in expected if a not in present]] if missing]
    if problems:
        raise ReportError("incomplete results: " + "; ".join(problems))


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


# ====================================================================================
# Judging: measures, the best variant of a peer, verdicts
# ====================================================================================


@dataclass
class Measure:
    id: str  # "get/<pattern>/<ct|rt>/<bytes>", "scenario/<name>", "rss/<name>", "cold"
    label: str
    unit: str
    ours: Optional[float]
    others: dict  # every allocator that is not the pool -> its figure


@dataclass
class Figure:
    """Ours against the fastest variant of a group for one measure."""
    group: str
    variant: Optional[str]  # the allocator name of that variant, None: no figure
    value: Optional[float]
    ours: Optional[float]

    @property
    def speedup(self):  # how many times faster ours is
        return ratio(self.value, self.ours)

    @property
    def share(self):  # ours as a multiple of the peer's figure
        return ratio(self.ours, self.value)


@dataclass
class Check:
    cond: Cond
    figure: Optional[Figure]  # None for "flat"
    value: object  # the speed-up, the share, or (lowest, highest) for "flat"
    ok: bool


@dataclass
class Verdict:
    target: Target
    checks: list

    @property
    def ok(self):
        return all(c.ok for c in self.checks)


def ratio(a, b):
    if a is None or b is None or b <= 0:
        return None
    return a / b


def variants(group):
    if group in GROUPS:
        return [v for peer in GROUPS[group] for v in PEERS[peer]]
    return PEERS[group]


def best(measure, group):
    """The fastest variant of `group` for `measure`: the one figure every table shows."""
    names = measure.others if group == "all" else variants(group)
    candidates = sorted((measure.others[n], n) for n in names
                        if measure.others.get(n) is not None)
    if not candidates:
        return Figure(group, None, None, measure.ours)
    value, variant = candidates[0]
    return Figure(group, variant, value, measure.ours)


def make_measure(mid, label, unit, ours, figures):
    others = {a: v for a, v in figures.items() if not is_pool(a) and v is not None}
    return Measure(mid, label, unit, ours, others)


def build_measures(data):
    """id -> Measure, for every measure the tables and targets use."""
    sta = data.policy
    out = []
    get_allocs = {k[0] for k in data.get}
    for size in sorted({k[3] for k in data.get}):
        for mode in ["ct", "rt"]:
            size_text = "compile-time" if mode == "ct" else "run-time"
            for p in PATTERNS:
                # peers have no compile-time path: their run-time figure serves both
                out.append(make_measure(
                    f"get/{p}/{mode}/{size}",
                    f"{size} B {p}, {size_text} size", "ns", data.get.get((sta, p, mode, size)),
                    {a: data.get.get((a, p, "rt", size)) for a in get_allocs}))
    for s in ["tree", "gui"]:
        out.append(make_measure(
            f"scenario/{s}", f"scenario {s} (µs per round)", "µs",
            data.scenarios.get((sta, s)), {a: v for (a, s_), v in data.scenarios.items()
                                           if s_ == s}))
        out.append(make_measure(
            f"rss/{s}", f"scenario {s} peak RSS over baseline", "KiB",
            data.rss_net.get((sta, s)), {a: v for (a, s_), v in data.rss_net.items() if s_ == s}))
    out.append(make_measure("cold",
                            "cold start, 10^6 × 32 B allocated + touched (ns per block)", "ns",
                            data.cold.get(sta), data.cold))
    return {m.id: m for m in out}


MAIN_GROUPS = ["glibc", "general", "all"]  # the main table's peer columns


def main_rows(measures):
    """[(measure, {group: Figure})]: the main table."""
    ids = [f"get/{p}/{m}/32" for m in ["ct", "rt"] for p in PATTERNS]
    ids += [f"get/{p}/rt/{s}" for s in [8, 256, 4096, 32768] for p in PATTERNS]
    ids += ["scenario/tree", "scenario/gui", "cold"]
    return [(measures[i], {g: best(measures[i], g) for g in MAIN_GROUPS})
            for i in ids if i in measures and measures[i].ours is not None]


def flat_spread(data, field_name):
    """(lowest, highest) of the pool's figure over live-set sizes / the smallest's."""
    series = [v[field_name] for (a, _), v in sorted(data.scale.items(), key=lambda kv: kv[0][1])
              if a == data.policy and field_name in v]
    if not series or series[0] <= 0:
        return None
    return min(series) / series[0], max(series) / series[0]


def check(data, measures, cond):
    if cond.bound == "flat":
        spread = flat_spread(data, cond.measure.split("/", 1)[1])
        ok = spread is not None and spread[0] >= 1 - cond.threshold and \
            spread[1] <= 1 + cond.threshold
        return Check(cond, None, spread, ok)
    measure = measures.get(cond.measure)
    figure = best(measure, cond.group) if measure else Figure(cond.group, None, None, None)
    if cond.bound == "faster":
        value = figure.speedup
        ok = value is not None and value >= cond.threshold
    elif cond.bound == "within":
        value = figure.share
        ok = value is not None and value <= cond.threshold
    else:
        raise ValueError(f"unknown bound {cond.bound}")
    return Check(cond, figure, value, ok)


def judge(data, measures):
    return [Verdict(t, [check(data, measures, c) for c in t.conds]) for t in TARGETS]


# ====================================================================================
# Rendering: Markdown, SVG
# ====================================================================================


def fmt(x, digits=2):
    if x is None:
        return "n/a"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.{digits}f}"


def fx(r):
    return "n/a" if r is None else f"{r:.2f}×"


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def render_main(data, rows):
    header = ["measure", pretty(data.policy), "glibc", "× vs glibc", "best general-purpose peer",
              "× vs it", "best peer of all", "× vs it"]

    def named(f, unit):
        return f"{pretty(f.variant)} {fmt(f.value)} {unit}" if f.variant else "n/a"

    body = []
    for m, figs in rows:
        g, gp, every = figs["glibc"], figs["general"], figs["all"]
        body.append([m.label, f"{fmt(m.ours)} {m.unit}", f"{fmt(g.value)} {m.unit}",
                     fx(g.speedup), named(gp, m.unit), fx(gp.speedup), named(every, m.unit),
                     fx(every.speedup)])
    return md_table(header, body)


def several_measures(target):
    return len({c.measure for c in target.conds}) > 1


def short(measure_id):
    return measure_id.split("/")[-1].split("_")[0]  # "rss/tree" -> "tree", ... -> "grow"


def cond_text(target, c):
    prefix = short(c.measure) + " " if several_measures(target) else ""
    if c.bound == "faster":
        return f"{prefix}≥{c.threshold:g}× {GROUP_TEXT[c.group]}"
    if c.bound == "within":
        return f"{prefix}≤{c.threshold:g}× {GROUP_TEXT[c.group]}"
    return f"{prefix}within ±{c.threshold * 100:.0f}% from 10^3 to 10^7 live blocks"


def measured_text(target, c):
    prefix = short(c.cond.measure) + " " if several_measures(target) else ""
    if c.cond.bound == "flat":
        return prefix + ("n/a" if c.value is None else
                         f"{c.value[0]:.2f}..{c.value[1]:.2f} of the 10^3 figure")
    word = "vs" if c.cond.bound == "faster" else "of"
    peer = pretty(c.figure.variant) if c.figure.variant else GROUP_TEXT[c.cond.group]
    return f"{prefix}{fx(c.value)} {word} {peer}"


def render_targets(verdicts):
    return md_table(["target", "measured", "verdict"], [
        [f"{v.target.label}: " + ", ".join(cond_text(v.target, c) for c in v.target.conds),
         ", ".join(measured_text(v.target, c) for c in v.checks),
         "met" if v.ok else "**missed**"] for v in verdicts])


# "Why missed" texts, by the target's `why` key: (data, verdict) -> Markdown.
def why_ct32(data, v):
    pattern = v.target.conds[0].measure.split("/")[1]
    boost = next(c.figure for c in v.checks if c.cond.group == "boost::pool")
    text = (f"{pretty(data.policy)} {fmt(boost.ours)} ns vs boost::pool {fmt(boost.value)} ns; "
            f"instructions per op {fmt(data.ir.get((data.policy, pattern, 'ct', 32)), 1)} vs "
            f"{fmt(data.ir.get(('boost-pool', pattern, 'rt', 32)), 1)}.")
    if pattern == "pure_get":
        return text + (
            " Every peer's state is escaped before its loop (issue 12), so each stores and "
            "reloads its list head around every call, as the pool does; that changed no measured "
            "instruction. The gap is how the head is addressed: boost::pool's sits in a stack "
            "slot (`[rsp+disp]`), the pool's is a global reached `[rip+disp]` (ct) or "
            "`[base+index]` (rt), and on this machine's core a store-then-reload through those "
            "two forms costs about 1.9x as much as through `[base+disp]` "
            "(`bench/store_forwarding_probe.cpp`); with the pool's state reached through a "
            "pointer register its pure get matched boost::pool in a scratch build. Details: "
            "[dispatch.md](dispatch.md), \"The free-list floor (pure get)\".")
    return text + (
        " Where the instruction counts are equal or lower, the gap is timing noise and code "
        "placement on a shared 2-core machine (the seed says the same of its leading "
        "variants); where they are higher, the pool pays for serving 13 classes from one "
        "state (a class index, a bump test) where boost::pool serves one size.")


def why_rt32(data, v):
    return ("a run-time size costs the class computation (lzcnt, a range check) on alloc and "
            "on free; see the rt vs ct instruction counts below.")


def why_scenario(data, v):
    return (", ".join(measured_text(v.target, c) for c in v.checks) + ". A whole workload "
            "spends most of its time outside the allocator (string formatting, map compares, "
            "std::function), which caps any allocator's gain; mimalloc's per-size free lists "
            "are as short a path as the pool's on these sizes.")


def why_cold(data, v):
    peer = v.checks[0].figure
    pop = data.cold.get("sta+thp-populate-2M")
    return (f"page faults dominate: {fmt(data.cold_faults.get(data.policy), 0)} minor faults "
            f"for {fmt(peer.ours)} ns per block with the default 1 MiB pages, the same "
            f"first-touch cost every peer pays. 2 MiB pages with MADV_HUGEPAGE + "
            f"MADV_POPULATE_WRITE measured {fmt(pop)} ns per block "
            f"({fx(ratio(peer.value, pop))} vs {pretty(peer.variant)}): see the cold-start "
            "table; the pool would need a prefault option (its page source is internal).")


def why_scale(data, v):
    return ("the churn touches a block per op; beyond the caches (10^6 × 32 B = 32 MiB) each "
            "touch is a cache miss, for every allocator (compare the peers' rows): memory, not "
            "the pool's bookkeeping, which is O(1) per op at every size.")


def why_memory(data, v):
    return ("the pool takes 1 MiB pages and keeps freed blocks for reuse per class; the small "
            "scenarios' peak is dominated by whole pages (see the RSS table).")


WHY = {"ct32": why_ct32, "rt32": why_rt32, "scenario": why_scenario, "cold": why_cold,
       "scale": why_scale, "memory": why_memory}


def skipped_note(data, key):
    return [f"Skipped: {data.skips[key]}.", ""] if key in data.skips else []


def machine(results):
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    compiler = "unknown compiler"
    try:
        with open(os.path.join(results, "..", "CMakeCache.txt")) as f:
            m = re.search(r"CMAKE_CXX_COMPILER:\w+=(.*)", f.read())
        if m:
            compiler = subprocess.run([m.group(1), "--version"], capture_output=True,
                                      text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        pass
    os_name = platform.platform()
    try:
        with open("/etc/os-release") as f:
            m = re.search(r'PRETTY_NAME="([^"]*)"', f.read())
            if m:
                os_name = f"{m.group(1)}, Linux {platform.release()}"
    except OSError:
        pass
    thp = ""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            thp = f.read().strip()
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "os": os_name, "compiler": compiler, "thp": thp}


METHOD = [
    "All figures are medians of repeated runs measured in one report run, side by side; the "
    "machine is shared and noisy, so compare ratios, not absolute times, and use the "
    "instruction counts (valgrind/callgrind, stable) to settle small differences. A peer's "
    "figure is the fastest of the ways it was measured (mimalloc: LD_PRELOAD through malloc, "
    "through operator new, and dlopen; glibc: malloc and std::allocator), in the main table "
    "and in the targets alike.",
    "",
    "- **get** (`bench/get_benchmark.cpp`): *fresh* = allocations only, free lists empty (the "
    "pool's bump path; every run takes new memory: the pool has its own tagged instance, peers "
    "are warmed once so no page faults are timed); *pure get* = allocations from a warm free "
    "list (a batch of up to 1024 blocks allocated, timed, then given back, untimed); "
    "*balanced* = free + allocate pairs over a ring of live blocks (one op = one pair). Times "
    "are the thread's CPU time (the machine is shared). A compiler barrier follows each call, "
    "as the work between allocations does in a program. *ct* = size known at compile time "
    "(`alloc<N>()`), *rt* = size opaque at every call. General-purpose peers have no "
    "compile-time path; their figure is used for both.",
]
METHOD_AFTER_PRELOAD = [
    "- **scenario** (`bench/scenario_benchmark.cpp`): *tree* = map<string, vector<node>>, node "
    "= {string, vector<uint32_t>, map<int, string>}, the allocator at every level: built (4,096 "
    "nodes), shaken (a quarter of the keys erased and re-inserted, a quarter of the vectors "
    "regrown) and destroyed; *gui* = 4,000 elements with a name, a property map, std::function "
    "handlers and child vectors, built then discarded. CPU time per round.",
    "- **cold start** (`bench/process_benchmark.cpp cold`): a fresh process allocates and "
    "first-touches 1,000,000 × 32 B; median of 5 processes.",
    "- **scale** (`bench/process_benchmark.cpp scale`): 32 B blocks, the live set grows 10^3 → "
    "10^7; *grow* = alloc + touch per block while growing, *churn* = free + alloc + touch pairs "
    "over the ring of live blocks.",
    "- **memory**: peak RSS of a process running 5 rounds of a scenario, minus its baseline "
    "before the first round.",
]


def render_preload_method(data):
    line = ("- jemalloc, tcmalloc and mimalloc are measured by running the `malloc` rows of the "
            "same binary under `LD_PRELOAD`; mimalloc is also measured in-process through "
            "`dlopen` (each call through a function pointer).")
    skipped = [f"{p} ({data.skips['preload:' + p]})" for p in PRELOAD_PEERS
               if "preload:" + p in data.skips]
    if skipped:
        line += " Skipped under LD_PRELOAD: " + "; ".join(skipped) + "."
    return [line]


def render_get_tables(data):
    sta, other = data.policy, data.other_policy
    get, ir = data.get, data.ir
    lines = ["## The seed's table beside ours (32 B, compile-time size)", "",
             md_table(["pattern", "seed (Windows)", pretty(sta), pretty(other),
                       f"instructions {pretty(sta)}", f"instructions {pretty(other)}"],
                      [[p, f"{SEED[p]:.2f} ns", f"{fmt(get.get((sta, p, 'ct', 32)))} ns",
                        f"{fmt(get.get((other, p, 'ct', 32)))} ns",
                        fmt(ir.get((sta, p, "ct", 32)), 1), fmt(ir.get((other, p, "ct", 32)), 1)]
                       for p in PATTERNS]), ""]
    rows = [[f"{size} B"] + [fmt(get.get((sta, p, mode, size))) for p in PATTERNS
                             for mode in ["ct", "rt"]]
            for size in sorted({k[3] for k in get if k[0] == sta})]
    lines += [f"## {pretty(sta)}: every class (ns per op)", "",
              md_table(["class"] + [f"{p} {m}" for p in PATTERNS for m in ["ct", "rt"]], rows),
              ""]
    allocs = [sta, other] + sorted({k[0] for k in get if not is_pool(k[0])})
    for size in [8, 32, 256, 4096, 32768]:
        rows = []
        for a in allocs:
            for mode in ["ct", "rt"] if is_pool(a) else ["rt"]:
                vals = [get.get((a, p, mode, size)) for p in PATTERNS]
                if any(v is not None for v in vals):
                    rows.append([f"{pretty(a)} [{mode}]"] + [fmt(v) for v in vals])
        if rows:
            lines += [f"### get, {size} B (ns per op)", "",
                      md_table(["allocator", "fresh", "pure get", "balanced"], rows), ""]
    return lines


def render_callgrind(data):
    lines = ["## Instructions per operation at 32 B (callgrind, net of the loop)", ""]
    if "callgrind" in data.skips:
        return lines + skipped_note(data, "callgrind")
    ir = data.ir
    rows = []
    for a in sorted({k[0] for k in ir}, key=lambda a: (not is_pool(a), a)):
        for mode in ["ct", "rt"]:
            vals = [ir.get((a, p, mode, 32)) for p in PATTERNS]
            if any(v is not None for v in vals):
                rows.append([f"{pretty(a)} [{mode}]"] + [fmt(v, 1) for v in vals])
    return lines + ["From `scripts/callgrind_counts.sh`; balanced counts one free + one alloc.",
                    "", md_table(["allocator", "fresh", "pure get", "balanced"], rows), ""]


def render_processes(data):
    rows = []
    for a in sorted({k[0] for k in data.scenarios}, key=lambda a: (not is_pool(a), a)):
        rt_, rg = data.rss_net.get((a, "tree")), data.rss_net.get((a, "gui"))
        rows.append([pretty(a), fmt(data.scenarios.get((a, "tree"))),
                     fmt(data.scenarios.get((a, "gui"))), fmt(rt_, 0), fmt(rg, 0)])
    lines = ["## Scenarios (µs per round, CPU time; peak RSS over baseline, KiB)", "",
             md_table(["allocator", "tree", "gui", "tree RSS KiB", "gui RSS KiB"], rows), ""]
    rows = [[pretty(a), fmt(v), fmt(data.cold_faults.get(a), 0)]
            for a, v in sorted(data.cold.items(), key=lambda kv: kv[1])]
    lines += ["## Cold start: 10^6 × 32 B in a fresh process (ns per block, median of 5)", "",
              "`sta+...` rows are the default pool with another page source swapped in (an "
              "experiment; the pool itself maps plain 1 MiB pages): `populate` = MAP_POPULATE, "
              "`thp-2M` = 2 MiB pages aligned to 2 MiB with madvise(MADV_HUGEPAGE), "
              "`thp-populate-2M` = the same plus madvise(MADV_POPULATE_WRITE).", "",
              md_table(["allocator", "ns per block", "minor faults"], rows), ""]
    lives = sorted({k[1] for k in data.scale})
    rows = []
    for a in sorted({k[0] for k in data.scale}, key=lambda a: (not is_pool(a), a)):
        cells = [data.scale.get((a, live), {}) for live in lives]
        rows.append([pretty(a)] + [f"{fmt(c.get('grow_ns_per_op'))} / "
                                   f"{fmt(c.get('churn_ns_per_pair'))}" for c in cells])
    lines += ["## Scale: 32 B blocks, grow / churn ns per op by live blocks", "",
              md_table(["allocator"] + [f"10^{len(str(live)) - 1}" for live in lives], rows), ""]
    return lines


COUNTER_SKIP = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
                "repetitions", "repetition_index", "threads", "aggregate_name", "aggregate_unit",
                "iterations", "real_time", "cpu_time", "time_unit", "error_occurred",
                "error_message", "label"}


def render_extras(data):
    if not data.extras:
        return []
    lines = ["## Other benchmark programs (raw)", "",
             "Programs added to `bench/CMakeLists.txt` that the report does not know; their "
             "Google Benchmark output as is (medians when repeated).", ""]
    for name, entries in data.extras:
        rows = []
        for b in entries:
            counters = {k: v for k, v in b.items()
                        if k not in COUNTER_SKIP and isinstance(v, (int, float))}
            unit = b.get("time_unit", "ns")
            rows.append([b.get("run_name", b["name"]), f"{b['real_time']:.4g} {unit}",
                         f"{b['cpu_time']:.4g} {unit}", b.get("iterations", ""),
                         ", ".join(f"{k}={v:.4g}" for k, v in counters.items())])
        lines += [f"### {name}", "",
                  md_table(["benchmark", "real time", "CPU time", "iterations", "counters"],
                           rows), ""]
    return lines


def render_clients(data):
    lines = ["## Real programs on the pool: Lua, SQLite, libxml2", ""]
    if data.clients_md is None:
        return lines + skipped_note(data, "clients")
    return lines + ["From `bench/clients/run_clients.sh` (interleaved runs; method and analysis "
                    "in [clients.md](clients.md)); every run's output equals the glibc run's.",
                    "", data.clients_md.rstrip(), ""]


def render_wine(data):
    lines = ["## Under wine: the tiers against the Windows heaps", ""]
    if data.wine is None:
        return lines + skipped_note(data, "wine")
    w = data.wine
    return lines + [
        "From `bench/windows/tiers_benchmark.cpp`, cross-built with mingw-w64 and run under "
        f"wine {w['version']}. Wine's heap is not Microsoft's: these figures say how the pool "
        "fares on wine, not on Windows.", "", w["tiers"].rstrip(), "",
        "### COM object creation: the activation slot against CoCreateInstance", "",
        "From `bench/com_benchmark.cpp` (method in [lazy_slot.md](lazy_slot.md)).", "",
        w["com"].rstrip(), ""]


def render_report(data, rows, verdicts, info, now):
    packages = [f"{k[8:]} ({r})" for k, r in data.skips.items() if k.startswith("package:")]
    lines = [
        "# Benchmarks", "",
        f"Generated by `scripts/report.sh` on {now}. Do not edit by hand: rerun it.", "",
        f"- Machine: {info['cpu']}, {info['cores']} cores; {info['os']}; THP `{info['thp']}`",
        f"- Compiler: {info['compiler']}, Release (`-O3 -DNDEBUG`, CMake preset `bench`)",
        f"- Default dispatch: `{pretty(data.policy)}` (see [dispatch.md](dispatch.md))",
        f"- Skipped peers: {'; '.join(packages) or 'none'}", "",
        "![ns per operation at 32 B](benchmarks.svg)", "",
        "## Method", ""] + METHOD + render_preload_method(data) + METHOD_AFTER_PRELOAD + [
        "", "## Main table", "", render_main(data, rows), "",
        "## Targets", "", render_targets(verdicts), ""]
    missed = [v for v in verdicts if not v.ok]
    if missed:
        lines += ["### Why the missed targets are missed", ""]
        lines += [f"- *{v.target.label}*: {WHY[v.target.why](data, v)}" for v in missed] + [""]
    lines += render_get_tables(data) + render_callgrind(data) + render_processes(data)
    lines += render_extras(data) + render_clients(data) + render_wine(data)
    return "\n".join(lines) + "\n"


def svg_chart(data):
    """Grouped horizontal bars: ns/op at 32 B per pattern and allocator."""
    sta = data.policy
    allocs = [(sta, "ct"), (sta, "rt"), (data.other_policy, "ct"), ("malloc", "rt"),
              ("jemalloc", "rt"), ("tcmalloc", "rt"), ("mimalloc", "rt"), ("mimalloc-dlopen", "rt"),
              ("pmr-unsync-pool", "rt"), ("foonathan-pool", "rt"), ("boost-pool", "rt"),
              ("boost-fast-pool", "rt")]
    rows = []
    for pattern in PATTERNS:
        group = []
        for alloc, mode in allocs:
            v = data.get.get((alloc, pattern, mode, 32))
            if v is not None:
                group.append((f"{pretty(alloc)} [{mode}]", v, is_pool(alloc)))
        rows.append((pattern, group))
    vmax = max([v for _, g in rows for _, v, _ in g] + [1.0])
    label_w, bar_w, bar_h, gap = 290, 420, 16, 4
    height = 50 + sum(28 + len(g) * (bar_h + gap) for _, g in rows)
    width = label_w + bar_w + 80
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           '<text x="10" y="22" font-size="15" font-weight="bold">sta-pool vs peers: ns per '
           'operation, 32 B blocks (median, lower is better)</text>']
    y = 44
    for pattern, group in rows:
        out.append(f'<text x="10" y="{y + 14}" font-weight="bold">{pattern}</text>')
        y += 22
        for label, v, ours in group:
            w = max(1.0, bar_w * v / vmax)
            color = "#2b7bba" if ours else "#b0b0b0"
            out.append(f'<text x="{label_w - 6}" y="{y + 12}" text-anchor="end">'
                       f'{html.escape(label)}</text>')
            out.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" '
                       f'fill="{color}"/>')
            out.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 12}">{v:.2f}</text>')
            y += bar_h + gap
        y += 6
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ====================================================================================


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
    measures = build_measures(data)
    rows = main_rows(measures)
    verdicts = judge(data, measures)
    print(render_main(data, rows) + "\n\n" + render_targets(verdicts))
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    os.makedirs(args.docs, exist_ok=True)
    with open(os.path.join(args.docs, "benchmarks.md"), "w") as f:
        f.write(render_report(data, rows, verdicts, machine(args.results), now))
    with open(os.path.join(args.docs, "benchmarks.svg"), "w") as f:
        f.write(svg_chart(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
