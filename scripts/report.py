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

# The value of get_benchmark's context key "sta_default_policy" -> the pool's rows (in
# the seed's shared-cursor layout; the span layout's rows are "sta-spans-" + the rest).
POLICIES = {"inline_branch": "sta-branch", "self_rewriting_table": "sta-table"}
# The layouts, as get_benchmark's context key "sta_default_layout" names them. Every
# target is judged on each; the report shows the verdicts side by side.
LAYOUTS = ["shared_cursor", "spans"]
LAYOUT_TEXT = {"shared_cursor": "shared cursor", "spans": "spans"}
# The pool's rows in the sections that name the layout, not the dispatch (waves,
# traversal, phase change, clients, BSTR, threads): the default dispatch in each layout.
LAYOUT_ROWS = {"shared_cursor": "sta-cursor", "spans": "sta-spans"}
# The span layout in the seed's thread mode (threads::one_owner, the default dispatch):
# a row of get, the scenarios and the threads' churn at 1 thread, beside the span rows in
# their default thread policy, which get_benchmark's context key "sta_spans_threads" names.
SEED_ROW = "sta-spans-seed"
SPANS_THREADS = ["per_thread", "one_owner"]
# The threads benchmark (bench/threads_benchmark.cpp): workloads and thread counts
# (prodcons at N: N producers + N consumers).
THREAD_WORKLOADS = ["churn32", "churn_mixed", "prodcons"]
THREAD_COUNTS = [1, 2]
THREAD_WORKLOAD_TEXT = {"churn32": "churn 32 B", "churn_mixed": "churn mixed sizes",
                        "prodcons": "producer/consumer"}

# A peer and the allocator names it is measured under in the results. A peer's figure
# for a measure is the fastest of its variants.
PEERS = {
    "glibc": ["malloc", "std::allocator"],
    "mimalloc": ["mimalloc", "mimalloc (new)", "mimalloc-dlopen"],
    "jemalloc": ["jemalloc", "jemalloc (new)"],
    "tcmalloc": ["tcmalloc", "tcmalloc (new)"],
    "boost::pool": ["boost-pool"],
    "bump": ["pmr-monotonic", "foonathan-stack"],
    "original CComBSTR": ["bstr-original"],
    "seed mode": [SEED_ROW],  # the seed-mode measures only (they name it beside ours)
}
# Groups of peers; "all" is every allocator that is not the pool.
GROUPS = {"general": ["mimalloc", "jemalloc", "tcmalloc"]}
GROUP_TEXT = {"glibc": "glibc", "mimalloc": "mimalloc", "boost::pool": "boost::pool",
              "bump": "a bump allocator", "general": "the best general-purpose peer",
              "all": "the best peer", "original CComBSTR": "the original CComBSTR",
              "seed mode": "the seed's mode (threads::one_owner)"}
# Peers measured by running the `malloc` rows of the same binaries under LD_PRELOAD.
PRELOAD_PEERS = ["mimalloc", "jemalloc", "tcmalloc"]
SKIPPABLE = ["preload:" + p for p in PRELOAD_PEERS] + ["callgrind", "clients", "programs",
                                                        "wine"]
WAVES = 10  # waves per process; the target compares the last with the first
PHASE_MIB = 64  # the phase change's bytes per phase
BSTR_APPENDS = 10000  # the BSTR target's size (docs/bstr.md)
# Unchanged programs under LD_PRELOAD (issue 16, bench/programs/run_programs.sh): the
# pool's row is libsta_malloc.so (the span layout; judged there only). A program counts
# as allocator-bound when glibc's median takes at least ALLOC_BOUND times the best
# general-purpose peer's: then the allocator visibly decides its time.
STA_MALLOC_ROW = "sta-malloc"
ALLOC_BOUND = 1.15

PATTERNS = ["fresh", "pure_get", "balanced"]
SEED = {"pure_get": 2.30, "balanced": 2.45, "fresh": 1.95}  # ns, 32 B, Windows


class Cond(NamedTuple):
    """One condition of a target.

    bound "faster": the group's best figure / ours >= threshold;
    bound "within": ours / the group's best figure <= threshold;
    bound "flat": ours at every live-set size / ours at the smallest, within
    1 +- threshold (group unused);
    bound "at_most": ours <= threshold, the figure itself (a ratio: wave 10 over wave 1,
    peak RSS over 64 MiB); the group's best figure is shown beside it.
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
    layouts: tuple = tuple(LAYOUTS)  # the layouts it is judged on (threads: spans only)


def thread_text(workload, n):
    """How the report names a thread count: "1 thread", "2 threads", "1+1 threads"."""
    if workload == "prodcons":
        return f"{n}+{n} threads"
    return f"{n} thread" + ("s" if n > 1 else "")


TARGETS = (
    [Target(f"ct32_{p}", f"32 B ct {p}", "ct32",
            [Cond(f"get/{p}/ct/32", "general", "faster", 3.0),
             Cond(f"get/{p}/ct/32", "glibc", "faster", 5.0),
             Cond(f"get/{p}/ct/32", "boost::pool", "within", 1.2)]) for p in PATTERNS]
    + [Target(f"rt32_{p}", f"32 B rt {p}", "rt32",
              [Cond(f"get/{p}/rt/32", "general", "faster", 2.5)]) for p in PATTERNS]
    + [Target(f"ct32_mi_{p}", f"32 B ct {p} vs mimalloc", "ct32_mi",
              [Cond(f"get/{p}/ct/32", "mimalloc", "faster", t)])
       for p, t in [("fresh", 4.0), ("pure_get", 1.0), ("balanced", 2.5)]]
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
               Cond("rss/gui", "glibc", "within", 1.3)]),
       Target("traversal", "traversal", "traversal",
              [Cond("traversal", "mimalloc", "faster", 1.15)]),
       Target("phase", "phase change (peak RSS / 64 MiB)", "phase",
              [Cond("phase", "all", "at_most", 1.2)]),
       Target("bstr", f"BSTR append, {BSTR_APPENDS} appends", "bstr",
              [Cond(f"bstr/{BSTR_APPENDS}", "original CComBSTR", "faster", 38.0)])]
    # issue 14: per-thread pools (the span layout only: the shared cursor has one owner)
    + [Target(f"threads_{w}", f"threads: {THREAD_WORKLOAD_TEXT[w]}, per thread", "threads",
              [Cond(f"threads/{w}/{n}", "all", "faster", t) for n in THREAD_COUNTS], ("spans",))
       for w, t in [("churn32", 1.5), ("churn_mixed", 1.5), ("prodcons", 1.0)]]
    + [Target("threads_rss", "threads: producer/consumer peak RSS over baseline", "threads_rss",
              [Cond(f"threads_rss/prodcons/{n}", "mimalloc", "within", 1.2)
               for n in THREAD_COUNTS], ("spans",))]
    + [Target(f"seed_{p}", f"per-thread vs seed mode, 32 B {p}", "seed",
              [Cond(f"seed/get/{p}/{m}/32", "seed mode", "within", 1.10) for m in ["ct", "rt"]],
              ("spans",)) for p in PATTERNS]
    + [Target("seed_scenario", "per-thread vs seed mode, scenarios", "seed",
              [Cond(f"seed/scenario/{s}", "seed mode", "within", 1.10) for s in ["tree", "gui"]],
              ("spans",))])


def wave_target(workload):
    return Target(f"waves_{slug(workload)}", f"waves, {workload} (wave {WAVES} / wave 1)",
                  "waves", [Cond(f"waves/{workload}", "all", "at_most", 1.10)])


def client_target(workload):
    return Target(f"client_{slug(workload)}", f"client {workload}", "client",
                  [Cond(f"client/{workload}", "mimalloc", "faster", 1.0),
                   Cond(f"client/{workload}", "glibc", "faster", 1.2),
                   Cond(f"client_rss/{workload}", "glibc", "within", 1.15)])


def program_spread(data, program):
    """glibc's median / the best general-purpose peer's for `program` (None without them)."""
    glibc = data.programs.get(("malloc", program))
    peers = [data.programs[(p, program)]["seconds"] for p in GROUPS["general"]
             if (p, program) in data.programs]
    if glibc is None or not peers:
        return None
    return ratio(glibc["seconds"], min(peers))


def per_round(data, program, peer):
    """`peer`'s wall time / libsta_malloc's in each round (the two ran seconds apart, so a
    slow spell of the machine hits both): the median, min and max, or None."""
    ours, theirs = data.programs.get((STA_MALLOC_ROW, program)), data.programs.get((peer, program))
    if ours is None or theirs is None or len(ours["walls"]) != len(theirs["walls"]):
        return None
    ratios = [t / o for t, o in zip(theirs["walls"], ours["walls"]) if o > 0]
    return (statistics.median(ratios), min(ratios), max(ratios)) if ratios else None


def allocator_bound(data, program):
    spread = program_spread(data, program)
    return spread is not None and spread >= ALLOC_BOUND


def program_target(data, program):
    """The multi-threaded one: >= 1.0x the best peer (whatever its spread); the other
    allocator-bound ones: >= 1.05x the best peer and >= 1.3x glibc; the rest >= 0.97x the
    best peer (no loss beyond the noise); every one: peak RSS <= 1.2x mimalloc's."""
    time_id, rss_id = f"program/{program}", f"program_rss/{program}"
    if program in data.program_threads:
        kind = "multi-threaded"
        conds = [Cond(time_id, "all", "faster", 1.0)]
    elif allocator_bound(data, program):
        kind = "allocator-bound"
        conds = [Cond(time_id, "all", "faster", 1.05), Cond(time_id, "glibc", "faster", 1.3)]
    else:
        kind = "not allocator-bound"
        conds = [Cond(time_id, "all", "faster", 0.97)]
    return Target(f"program_{slug(program)}", f"program {program} ({kind})", "program",
                  conds + [Cond(rss_id, "mimalloc", "within", 1.2)], ("spans",))


def slug(text):
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def targets(data):
    """TARGETS, then one waves target per waves workload, one per client workload and one
    per unchanged program."""
    return (TARGETS + [wave_target(w) for w in sorted({k[1] for k in data.waves})]
            + [client_target(w) for w in data.client_workloads]
            + [program_target(data, p) for p in data.program_list])

PRETTY = {
    "sta-branch": "sta (inline_branch)",
    "sta-table": "sta (self_rewriting_table)",
    "sta-spans-branch": "sta spans (inline_branch)",
    "sta-spans-table": "sta spans (self_rewriting_table)",
    "sta-spans-branch-seed": "sta spans (inline_branch, seed mode: threads::one_owner)",
    "sta-cursor": "sta (shared cursor)",
    "sta-spans": "sta (spans)",
    "sta-spans+thp": "sta (spans, huge pages)",
    "sta-spans+prefault": "sta (spans, prefault)",
    STA_MALLOC_ROW: "libsta_malloc.so (LD_PRELOAD)",
    SEED_ROW: "sta (spans, seed mode: threads::one_owner)",
    "bstr-original": "original CComBSTR",
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
    policy: str  # the pool's rows (shared cursor, default dispatch): "sta-branch" or "sta-table"
    layout: str  # sta::memory_pool's default layout: "shared_cursor" or "spans"
    get: dict  # (allocator, pattern, mode, bytes) -> ns per op
    scenarios: dict  # (allocator, scenario) -> µs per round (CPU time)
    rss_net: dict  # (allocator, scenario) -> peak RSS over the baseline, KiB
    cold: dict  # allocator -> ns per block
    cold_faults: dict  # allocator -> minor faults
    scale: dict  # (allocator, live blocks) -> {field: median}
    ir: dict  # (allocator, pattern, mode, bytes) -> instructions per op
    extras: list  # (program, [benchmark entries])
    clients_md: Optional[str]
    wine: Optional[dict]  # {"version", "tiers", "com", "box"}
    waves: dict = field(default_factory=dict)  # (allocator, workload) -> Waves
    traversal: dict = field(default_factory=dict)  # allocator -> Spread of CPU seconds
    phase: dict = field(default_factory=dict)  # allocator -> {"net_peak_kib", "first_phase_kib"}
    clients: dict = field(default_factory=dict)  # (allocator, workload) -> {"seconds", "maxrss_kib"}
    client_workloads: list = field(default_factory=list)  # in the runner's order
    bstr: dict = field(default_factory=dict)  # (way, appends) -> ns per run
    # (allocator, program) -> {"seconds", "min", "max", "cpu_seconds", "maxrss_kib", "runs",
    # "walls"}: medians over runs (wall seconds, min and max of them; CPU seconds; peak
    # RSS), and every run's wall seconds, round by round
    programs: dict = field(default_factory=dict)
    program_list: list = field(default_factory=list)  # in the runner's order
    program_threads: set = field(default_factory=set)  # the multi-threaded programs
    skips: dict = field(default_factory=dict)  # KEY -> reason
    # (allocator, workload, threads) -> {"ns_per_op", "cpu_ns_per_op", "net_peak_kib",
    # "processes"}: medians over processes
    threads: dict = field(default_factory=dict)
    spans_threads: str = "per_thread"  # the thread policy of the sta-spans-* rows

    @property
    def other_policy(self):
        return "sta-table" if self.policy == "sta-branch" else "sta-branch"

    def row(self, layout, policy=None):
        """The pool's row of the sections by dispatch (get, scenarios, cold, ...)."""
        policy = policy or self.policy
        return policy if layout == "shared_cursor" else "sta-spans-" + policy[len("sta-"):]

    @property
    def default_row(self):
        return self.row(self.layout)


class Waves(NamedTuple):
    ratio: float  # wave W / wave 1, the median over processes
    waves: list  # the median of each wave over processes, seconds
    processes: int


class Spread(NamedTuple):
    median: float
    low: float
    high: float
    runs: int


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


def load_context(doc, path, key, allowed):
    value = doc.get("context", {}).get(key)
    if value not in allowed:
        raise ReportError(
            f"{path}: context key \"{key}\" is {value!r}, expected one of "
            f"{', '.join(allowed)} (get_benchmark reports the default it was built with)")
    return value


def load_get(results, skips):
    """(the pool's rows, the default layout, the span rows' thread policy,
    {(allocator, pattern, mode, bytes): ns per op})."""
    table = {}
    policy = layout = spans_threads = None
    for preload, path in preload_files(results, "get", skips):
        doc = read_json(path)
        if not preload:
            policy = POLICIES[load_context(doc, path, "sta_default_policy", POLICIES)]
            layout = load_context(doc, path, "sta_default_layout", LAYOUTS)
            spans_threads = load_context(doc, path, "sta_spans_threads", SPANS_THREADS)
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
    return policy, layout, spans_threads, table


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


def load_waves(path):
    """(allocator, workload) -> Waves. The lines of one process are consecutive, waves
    1..W in order; the ratio is taken per process, then its median over processes."""
    runs = {}
    current = None
    for r in read_lines(path):
        try:
            key, wave, seconds = (r["alloc"], r["workload"]), int(r["wave"]), float(r["seconds"])
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: a malformed wave line: {r}") from None
        if wave == 1:
            current = []
            runs.setdefault(key, []).append(current)
        elif current is None or runs[key][-1] is not current or wave != len(current) + 1:
            raise ReportError(f"{path}: wave {wave} of {key[1]} on {key[0]} does not follow "
                              f"wave {wave - 1} of the same process")
        current.append(seconds)
    table = {}
    for key, processes in runs.items():
        if any(len(p) != WAVES for p in processes):
            raise ReportError(f"{path}: {key[1]} on {key[0]}: a process without {WAVES} waves")
        if any(p[0] <= 0 for p in processes):
            raise ReportError(f"{path}: {key[1]} on {key[0]}: a first wave of no time")
        table[key] = Waves(statistics.median(p[-1] / p[0] for p in processes),
                           [statistics.median(p[i] for p in processes) for i in range(WAVES)],
                           len(processes))
    return table


def load_traversal(path):
    groups = {}
    for r in read_lines(path):
        try:
            groups.setdefault(r["allocator"], []).append(float(r["cpu_seconds"]))
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: a malformed traversal line: {r}") from None
    return {a: Spread(statistics.median(v), min(v), max(v), len(v)) for a, v in groups.items()}


def load_phase(path):
    rows = read_lines(path)
    by_alloc = lambda r: r["allocator"]  # noqa: E731
    net = median_by(rows, by_alloc, "net_peak_kib", path)
    first = median_by(rows, by_alloc, "first_phase_kib", path)
    return {a: {"net_peak_kib": net[a], "first_phase_kib": first[a]} for a in net}


def load_threads(path):
    """(allocator, workload, threads) -> medians over processes of each process's median."""
    groups = {}
    for r in read_lines(path):
        try:
            key = (r["allocator"], r["workload"], int(r["threads"]))
            row = {f: float(r[f]) for f in ["ns_per_op", "cpu_ns_per_op", "net_peak_kib"]}
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: a malformed threads line: {r}") from None
        if r.get("kind") != "threads" or key[1] not in THREAD_WORKLOADS or row["ns_per_op"] <= 0:
            raise ReportError(f"{path}: not a threads result: {r}")
        groups.setdefault(key, []).append(row)
    return {k: dict({f: statistics.median(x[f] for x in rows) for f in rows[0]},
                    processes=len(rows)) for k, rows in groups.items()}


# The client runner's allocator names -> the report's (the pool's by layout, the peers').
CLIENT_NAMES = {"cursor": "sta-cursor", "spans": "sta-spans", "glibc": "malloc",
                "mimalloc": "mimalloc"}


def load_clients(path):
    table = {}
    workloads = []
    for r in read_lines(path):
        try:
            alloc, workload = CLIENT_NAMES[r["allocator"]], r["workload"]
            table[(alloc, workload)] = {"seconds": float(r["seconds"]),
                                        "maxrss_kib": float(r["maxrss_kib"])}
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: a malformed client line: {r}") from None
        if workload not in workloads:
            workloads.append(workload)
    return table, workloads


# The program runner's allocator names -> the report's.
PROGRAM_NAMES = {"glibc": "malloc", "mimalloc": "mimalloc", "jemalloc": "jemalloc",
                 "tcmalloc": "tcmalloc", "sta": STA_MALLOC_ROW}


def load_programs(path):
    """(allocator, program) -> figures, the programs in order, the multi-threaded ones."""
    table = {}
    programs = []
    threads = set()
    for r in read_lines(path):
        try:
            alloc, program = PROGRAM_NAMES[r["allocator"]], r["program"]
            row = {f: float(r[f]) for f in ["seconds", "min", "max", "cpu_seconds",
                                            "maxrss_kib"]}
            row["runs"] = int(r["runs"])
            row["walls"] = [float(w) for w in r["walls"]]
            # the share of perf samples inside the allocator (absent or null: not sampled)
            share, shares = r.get("alloc_share"), r.get("alloc_shares")
            row["alloc_share"] = None if share is None else float(share)
            row["alloc_shares"] = None if shares is None else [float(x) for x in shares]
            if row["alloc_share"] is not None and not (
                    0 <= row["alloc_share"] <= 1 and row["alloc_shares"]
                    and min(row["alloc_shares"]) <= row["alloc_share"] <= max(row["alloc_shares"])):
                raise ValueError(share)
            threaded = r["threads"]
            if not isinstance(threaded, bool):
                raise TypeError(threaded)
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: a malformed program line: {r}") from None
        if (not 0 < row["min"] <= row["seconds"] <= row["max"] or row["runs"] < 1
                or len(row["walls"]) != row["runs"]):
            raise ReportError(f"{path}: not a program result (min <= median <= max, runs): {r}")
        if (alloc, program) in table:
            raise ReportError(f"{path}: {program} on {r['allocator']} twice")
        table[(alloc, program)] = row
        if program not in programs:
            programs.append(program)
        if threaded:
            threads.add(program)
    return table, programs, threads


def load_bstr(results):
    """(way, appends) -> ns per run, from bstr_benchmark's output (an extra program)."""
    path = os.path.join(results, "extra-bstr_benchmark.json")
    table = {}
    for run_name, b in medians(read_json(path), path).items():
        parts = run_name.split("/")
        if len(parts) == 3 and parts[0] == "bstr":
            table[(parts[1], int(parts[2]))] = to_ns(b, "real_time")
    for way in ["original", "pool-cursor", "pool-spans"]:
        if (way, BSTR_APPENDS) not in table:
            raise ReportError(f"{path}: no bstr/{way}/{BSTR_APPENDS}")
    return table


def load(results, skips):
    """Every input of the report, checked: missing or malformed input -> ReportError."""
    if not os.path.isdir(results):
        raise ReportError(f"{results}: no such directory")
    def path(name):
        return os.path.join(results, name)

    policy, layout, spans_threads, get = load_get(results, skips)
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
    clients, client_workloads = (({}, []) if "clients" in skips else
                                 load_clients(path("clients.jsonl")))
    programs, program_list, program_threads = (({}, [], set()) if "programs" in skips else
                                               load_programs(path("programs.jsonl")))
    data = Results(
        policy=policy, layout=layout, get=get, scenarios=scenarios,
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
            "tiers": read_text(path("wine.md")), "com": read_text(path("com.md")),
            "box": read_text(path("box.md"))},
        waves=load_waves(path("waves.jsonl")), traversal=load_traversal(path("traversal.jsonl")),
        phase=load_phase(path("phase.jsonl")), clients=clients,
        client_workloads=client_workloads, programs=programs, program_list=program_list,
        program_threads=program_threads, bstr=load_bstr(results), skips=dict(skips),
        threads=load_threads(path("threads.jsonl")), spans_threads=spans_threads)
    check_complete(data)
    return data


def check_complete(data):
    """Every process section holds the pool's rows in both layouts (and, where the report
    runs them, both dispatch policies) and every LD_PRELOAD peer not skipped."""
    peers = [p for p in PRELOAD_PEERS if "preload:" + p not in data.skips]
    by_dispatch = [data.row(lay, pol) for lay in LAYOUTS for pol in POLICIES.values()]
    by_layout = list(LAYOUT_ROWS.values())
    mimalloc = [] if "preload:mimalloc" in data.skips else ["mimalloc"]
    sections = {  # name -> (rows present, rows expected)
        "get (get.json, get-PEER.json)": ({k[0] for k in data.get},
                                          by_dispatch + [SEED_ROW] + peers),
        "scenarios (scenario.json, scenario-PEER.json)": ({k[0] for k in data.scenarios},
                                                          by_dispatch + [SEED_ROW] + peers),
        "peak RSS (rss.jsonl)": ({k[0] for k in data.rss_net}, by_dispatch + peers),
        "cold start (cold.jsonl)": (set(data.cold), by_dispatch + peers),
        "scale (scale.jsonl)": ({k[0] for k in data.scale}, by_dispatch + peers),
        "phase change (phase.jsonl)": (set(data.phase), by_layout + ["malloc"] + peers),
        "traversal (traversal.jsonl)": (set(data.traversal), by_layout + ["malloc"] + peers),
    }
    for workload in sorted({k[1] for k in data.waves}):
        sections[f"waves {workload} (waves.jsonl)"] = (
            {a for a, w in data.waves if w == workload}, by_layout + ["malloc"] + mimalloc)
    for w in THREAD_WORKLOADS:
        for n in THREAD_COUNTS:
            seed = [SEED_ROW] if w != "prodcons" and n == 1 else []
            sections[f"threads {w} at {n} (threads.jsonl)"] = (
                {a for a, w_, n_ in data.threads if (w_, n_) == (w, n)},
                [LAYOUT_ROWS["spans"]] + seed + ["malloc"] + peers)
    for program in data.program_list:
        sections[f"program {program} (programs.jsonl)"] = (
            {a for a, p in data.programs if p == program}, [STA_MALLOC_ROW, "malloc"] + peers)
    if data.ir:
        sections["instruction counts (callgrind.csv)"] = ({k[0] for k in data.ir},
                                                          by_dispatch + peers)
    problems = [f"{name}: no rows of {', '.join(missing)}"
                for name, (present, expected) in sections.items()
                for missing in [[a for a in expected if a not in present]] if missing]
    if not data.waves:
        problems.append("waves (waves.jsonl): no workloads")
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
    layout: str  # the layout whose pool rows were judged
    row: str  # the pool's row of the sections by dispatch for that layout
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


def build_measures(data, layout=None):
    """id -> Measure, for every measure the tables and targets use; ours = the pool's
    rows in `layout` (default: sta::memory_pool's default layout)."""
    layout = layout or data.layout
    sta = data.row(layout)
    mine = LAYOUT_ROWS[layout]
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
    for w in sorted({k[1] for k in data.waves}):
        ratios = {a: v.ratio for (a, w_), v in data.waves.items() if w_ == w}
        out.append(make_measure(f"waves/{w}", f"waves {w}: wave {WAVES} / wave 1", "×",
                                ratios.get(mine), ratios))
    medians_ = {a: v.median for a, v in data.traversal.items()}
    out.append(make_measure("traversal", "traversal (CPU s per process)", "s",
                            medians_.get(mine), medians_))
    phase = {a: v["net_peak_kib"] / (PHASE_MIB * 1024) for a, v in data.phase.items()}
    out.append(make_measure("phase", "phase change: peak RSS over the baseline / 64 MiB", "×",
                            phase.get(mine), phase))
    for w in data.client_workloads:
        seconds = {a: v["seconds"] for (a, w_), v in data.clients.items() if w_ == w}
        rss = {a: v["maxrss_kib"] for (a, w_), v in data.clients.items() if w_ == w}
        out.append(make_measure(f"client/{w}", f"client {w} (s)", "s", seconds.get(mine), seconds))
        out.append(make_measure(f"client_rss/{w}", f"client {w} peak RSS", "KiB", rss.get(mine),
                                rss))
    for p in data.program_list:  # libsta_malloc.so is one build, the same in both layouts
        seconds = {a: v["seconds"] for (a, p_), v in data.programs.items() if p_ == p}
        rss = {a: v["maxrss_kib"] for (a, p_), v in data.programs.items() if p_ == p}
        out.append(make_measure(f"program/{p}", f"program {p} (wall s)", "s",
                                seconds.get(STA_MALLOC_ROW), seconds))
        out.append(make_measure(f"program_rss/{p}", f"program {p} peak RSS", "KiB",
                                rss.get(STA_MALLOC_ROW), rss))
    way = "pool-cursor" if layout == "shared_cursor" else "pool-spans"
    out.append(make_measure(f"bstr/{BSTR_APPENDS}", f"BSTR, {BSTR_APPENDS} appends", "ns",
                            data.bstr.get((way, BSTR_APPENDS)),
                            {"bstr-original": data.bstr.get(("original", BSTR_APPENDS))}))
    for w in THREAD_WORKLOADS:
        for n in THREAD_COUNTS:
            rows = {a: v for (a, w_, n_), v in data.threads.items() if (w_, n_) == (w, n)}
            speed = {a: v["ns_per_op"] for a, v in rows.items()}
            rss = {a: v["net_peak_kib"] for a, v in rows.items()}
            text = f"{THREAD_WORKLOAD_TEXT[w]}, {thread_text(w, n)}"
            out.append(make_measure(f"threads/{w}/{n}", f"{text} (ns per op per thread)", "ns",
                                    speed.get(mine), speed))
            out.append(make_measure(f"threads_rss/{w}/{n}", f"{text}: peak RSS over baseline",
                                    "KiB", rss.get(mine), rss))
    out += seed_measures(data, layout)
    return {m.id: m for m in out}


def seed_measures(data, layout):
    """The span rows in their default thread policy (ours) against the seed's mode, which
    is named in `others` as the one variant of the group "seed mode"; ours is None on the
    shared cursor, which has the seed's mode only."""
    spans = layout == "spans"
    row = data.row("spans")
    out = []
    for (a, p, mode, size) in sorted((k for k in data.get if k[0] == SEED_ROW),
                                     key=lambda k: (k[3], PATTERNS.index(k[1]), k[2])):
        out.append(Measure(f"seed/get/{p}/{mode}/{size}", f"{size} B {p} {mode}", "ns",
                           data.get.get((row, p, mode, size)) if spans else None,
                           {SEED_ROW: data.get[(a, p, mode, size)]}))
    for s in ["tree", "gui"]:
        if (SEED_ROW, s) in data.scenarios:
            out.append(Measure(f"seed/scenario/{s}", f"scenario {s}", "µs",
                               data.scenarios.get((row, s)) if spans else None,
                               {SEED_ROW: data.scenarios[(SEED_ROW, s)]}))
    for w in THREAD_WORKLOADS:
        seed = data.threads.get((SEED_ROW, w, 1))
        if seed is not None:
            ours = data.threads.get((LAYOUT_ROWS["spans"], w, 1))
            out.append(Measure(f"seed/threads/{w}", f"threads: {THREAD_WORKLOAD_TEXT[w]}, "
                               "1 thread", "ns", ours["ns_per_op"] if spans and ours else None,
                               {SEED_ROW: seed["ns_per_op"]}))
    return out


MAIN_GROUPS = ["glibc", "general", "all"]  # the main table's peer columns


def main_rows(measures):
    """[(measure, {group: Figure})]: the main table."""
    ids = [f"get/{p}/{m}/32" for m in ["ct", "rt"] for p in PATTERNS]
    ids += [f"get/{p}/rt/{s}" for s in [8, 256, 4096, 32768] for p in PATTERNS]
    ids += ["scenario/tree", "scenario/gui", "cold"]
    return [(measures[i], {g: best(measures[i], g) for g in MAIN_GROUPS})
            for i in ids if i in measures and measures[i].ours is not None]


def flat_spread(data, field_name, row):
    """(lowest, highest) of the pool's figure (`row`) over live-set sizes / the smallest's."""
    series = [v[field_name] for (a, _), v in sorted(data.scale.items(), key=lambda kv: kv[0][1])
              if a == row and field_name in v]
    if not series or series[0] <= 0:
        return None
    return min(series) / series[0], max(series) / series[0]


def check(data, measures, cond, row):
    if cond.bound == "flat":
        spread = flat_spread(data, cond.measure.split("/", 1)[1], row)
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
    elif cond.bound == "at_most":
        value = figure.ours
        ok = value is not None and value <= cond.threshold
    else:
        raise ValueError(f"unknown bound {cond.bound}")
    return Check(cond, figure, value, ok)


def judge(data, measures_by_layout):
    """A Verdict for every target and layout: {layout: {id: Measure}} -> [Verdict]."""
    return [Verdict(t, lay, data.row(lay), [check(data, measures, c, data.row(lay))
                                            for c in t.conds])
            for t in targets(data) for lay, measures in measures_by_layout.items()
            if lay in t.layouts]


def measures_by_layout(data):
    return {lay: build_measures(data, lay) for lay in LAYOUTS}


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


def render_main(data, rows, other=None):
    """The main table on the default layout's rows; `other` ({id: Measure} of the other
    layout) adds its figure in a column."""
    other_row = data.row(next(lay for lay in LAYOUTS if lay != data.layout))
    header = ["measure", pretty(data.default_row)] + ([pretty(other_row)] if other else []) + [
        "glibc", "× vs glibc", "best general-purpose peer", "× vs it", "best peer of all",
        "× vs it"]

    def named(f, unit):
        return f"{pretty(f.variant)} {fmt(f.value)} {unit}" if f.variant else "n/a"

    body = []
    for m, figs in rows:
        g, gp, every = figs["glibc"], figs["general"], figs["all"]
        theirs = [f"{fmt(other[m.id].ours)} {m.unit}"] if other and m.id in other else \
            (["n/a"] if other else [])
        body.append([m.label, f"{fmt(m.ours)} {m.unit}"] + theirs + [
            f"{fmt(g.value)} {m.unit}", fx(g.speedup), named(gp, m.unit), fx(gp.speedup),
            named(every, m.unit), fx(every.speedup)])
    return md_table(header, body)


def several_measures(target):
    return len({c.measure for c in target.conds}) > 1


SHORT = {"client": "time", "client_rss": "peak RSS", "program": "time",
         "program_rss": "peak RSS"}  # measures named by their kind


def short(measure_id):
    parts = measure_id.split("/")
    kind = parts[0]
    if kind in SHORT:
        return SHORT[kind]
    if kind in ("threads", "threads_rss"):  # threads/<workload>/<n>
        return thread_text(parts[1], int(parts[2]))
    if kind == "seed":  # seed/get/<pattern>/<mode>/<bytes>, seed/scenario/<name>
        return parts[3] if parts[1] == "get" else parts[2]
    return measure_id.split("/")[-1].split("_")[0]  # "rss/tree" -> "tree", ... -> "grow"


def cond_text(target, c):
    prefix = short(c.measure) + " " if several_measures(target) else ""
    if c.bound == "faster":
        return f"{prefix}≥{c.threshold:g}× {GROUP_TEXT[c.group]}"
    if c.bound == "within":
        return f"{prefix}≤{c.threshold:g}× {GROUP_TEXT[c.group]}"
    if c.bound == "at_most":
        return f"{prefix}≤{c.threshold:g}×"
    return f"{prefix}within ±{c.threshold * 100:.0f}% from 10^3 to 10^7 live blocks"


def measured_text(target, c):
    prefix = short(c.cond.measure) + " " if several_measures(target) else ""
    if c.cond.bound == "flat":
        return prefix + ("n/a" if c.value is None else
                         f"{c.value[0]:.2f}..{c.value[1]:.2f} of the 10^3 figure")
    if c.cond.bound == "at_most":
        best_peer = (f"{pretty(c.figure.variant)} {fx(c.figure.value)}" if c.figure.variant
                     else "n/a")
        return f"{prefix}{fx(c.value)} (best peer: {best_peer})"
    word = "vs" if c.cond.bound == "faster" else "of"
    peer = pretty(c.figure.variant) if c.figure.variant else GROUP_TEXT[c.cond.group]
    return f"{prefix}{fx(c.value)} {word} {peer}"


def verdict_text(v):
    return "met" if v.ok else "**missed**"


def render_targets(verdicts, default_layout=None):
    """One row per target, the measured figures and the verdict of each layout side by side."""
    by_target = {}
    for v in verdicts:
        by_target.setdefault(v.target.id, []).append(v)
    layouts = [lay for lay in LAYOUTS if any(v.layout == lay for v in verdicts)]
    header = ["target"]
    for lay in layouts:
        mark = " (default)" if lay == default_layout else ""
        header += [f"{LAYOUT_TEXT[lay]}{mark}: measured", "verdict"]
    rows = []
    for vs in by_target.values():
        t = vs[0].target
        row = [f"{t.label}: " + ", ".join(cond_text(t, c) for c in t.conds)]
        for lay in layouts:
            v = next((v for v in vs if v.layout == lay), None)
            row += (["n/a", "n/a"] if v is None else
                    [", ".join(measured_text(t, c) for c in v.checks), verdict_text(v)])
        rows.append(row)
    return md_table(header, rows)


# "Why missed" texts, by the target's `why` key: (data, verdict) -> Markdown.
def why_ct32(data, v):
    pattern = v.target.conds[0].measure.split("/")[1]
    boost = next(c.figure for c in v.checks if c.cond.group == "boost::pool")
    text = (f"{pretty(v.row)} {fmt(boost.ours)} ns vs boost::pool {fmt(boost.value)} ns; "
            f"instructions per op {fmt(data.ir.get((v.row, pattern, 'ct', 32)), 1)} vs "
            f"{fmt(data.ir.get(('boost-pool', pattern, 'rt', 32)), 1)}.")
    if pattern == "pure_get":
        return text + (
            " Every peer's state is escaped before its loop (issue 12). The pool reaches its "
            "state through a base register (`through_register`), which on this machine's core "
            "makes a store-then-reload of the head as cheap as boost::pool's stack slot; the "
            "`rt` path still indexes the heads (`[base+index]`, about 1.9x per reload in "
            "`bench/store_forwarding_probe.cpp`). What remains is noise and code placement. "
            "Details: "
            "[dispatch.md](dispatch.md), \"The free-list floor (pure get)\".")
    if v.layout == "spans" and pattern == "balanced":
        text += (" The span layout's free compares the block with its class's current span "
                 "before it pushes it (see the instruction counts below, both layouts).")
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
    if v.layout == "spans":
        pre = data.cold.get("sta-spans+prefault")
        return (f"page faults dominate: {fmt(data.cold_faults.get(v.row), 0)} minor faults for "
                f"{fmt(peer.ours)} ns per block, the same first-touch cost every peer pays. The "
                f"span layout with set_prefault(true) measured {fmt(pre)} ns per block "
                f"({fx(ratio(peer.value, pre))} vs {pretty(peer.variant)}): see the cold-start "
                "table.")
    pop = data.cold.get("sta+thp-populate-2M")
    return (f"page faults dominate: {fmt(data.cold_faults.get(v.row), 0)} minor faults "
            f"for {fmt(peer.ours)} ns per block with the default 1 MiB pages, the same "
            f"first-touch cost every peer pays. 2 MiB pages with MADV_HUGEPAGE + "
            f"MADV_POPULATE_WRITE measured {fmt(pop)} ns per block "
            f"({fx(ratio(peer.value, pop))} vs {pretty(peer.variant)}): see the cold-start "
            "table; this layout has no prefault option (the span layout has set_prefault).")


def why_scale(data, v):
    return ("the churn touches a block per op; beyond the caches (10^6 × 32 B = 32 MiB) each "
            "touch is a cache miss, for every allocator (compare the peers' rows): memory, not "
            "the pool's bookkeeping, which is O(1) per op at every size.")


def why_memory(data, v):
    if v.layout == "spans":
        return ("the span layout takes 2 MiB segments and gives each class its own 64 KiB "
                "spans; the small scenarios' peak is dominated by partly used spans (see the "
                "RSS table).")
    return ("the pool takes 1 MiB pages and keeps freed blocks for reuse per class; the small "
            "scenarios' peak is dominated by whole pages (see the RSS table).")


def why_ct32_mi(data, v):
    c = v.checks[0]
    pattern = c.cond.measure.split("/")[1]
    return (f"{pretty(v.row)} {fmt(c.figure.ours)} ns vs {pretty(c.figure.variant)} "
            f"{fmt(c.figure.value)} ns; instructions per op "
            f"{fmt(data.ir.get((v.row, pattern, 'ct', 32)), 1)} vs mimalloc's "
            f"{fmt(data.ir.get(('mimalloc-dlopen', pattern, 'rt', 32)), 1)} (dlopen) — see the "
            "instruction counts below.")


def why_waves(data, v):
    workload = v.target.conds[0].measure.split("/", 1)[1]
    w = data.waves.get((LAYOUT_ROWS[v.layout], workload))
    if w is None:
        return "no waves of the pool in this layout."
    return (f"the pool's waves in {LAYOUT_TEXT[v.layout]}: wave 1 {w.waves[0]:.3f} s, wave "
            f"{WAVES} {w.waves[-1]:.3f} s (medians of {w.processes} processes; every wave in the "
            "waves table, beside the peers' on the same machine: compare their spread before "
            "reading a trend).")


def why_traversal(data, v):
    thp = data.traversal.get("sta-spans+thp")
    c = v.checks[0]
    text = (f"{pretty(LAYOUT_ROWS[v.layout])} {fmt(c.figure.ours)} s vs "
            f"{pretty(c.figure.variant)} {fmt(c.figure.value)} s")
    if thp is not None:
        text += f"; the span layout on huge pages {fmt(thp.median)} s"
    return text + ". The walk reads every string: the time is cache and TLB misses, so what " \
        "counts is the order the blocks of a regrown subtree come in (docs/dispatch.md, " \
        "\"Layouts\")."


def why_phase(data, v):
    p = data.phase.get(LAYOUT_ROWS[v.layout])
    if p is None:
        return "no phase-change run of the pool in this layout."
    return (f"the first phase holds {p['first_phase_kib'] / 1024:.0f} MiB, the peak is "
            f"{p['net_peak_kib'] / 1024:.0f} MiB over the baseline: memory freed in 16 B blocks "
            "is not reused for 1 KiB blocks in this layout.")


def why_client(data, v):
    return ", ".join(measured_text(v.target, c) for c in v.checks) + \
        " (the client table below has every run's median)."


def runs_text(data, alloc, program):
    v = data.programs.get((alloc, program))
    if v is None:
        return f"{pretty(alloc)}: n/a"
    return f"{pretty(alloc)} {v['seconds']:.3f} s ({v['min']:.3f}–{v['max']:.3f})"


def why_program(data, v):
    program = v.target.conds[0].measure.split("/", 1)[1]
    text = ", ".join(measured_text(v.target, c) for c in v.checks)
    best_peer = v.checks[0].figure.variant
    if best_peer is None:
        return text + "."
    ours = data.programs.get((STA_MALLOC_ROW, program))
    theirs = data.programs[(best_peer, program)]
    text += (f"; the runs: {runs_text(data, STA_MALLOC_ROW, program)}, "
             f"{runs_text(data, best_peer, program)}")
    if ours is not None and ours["min"] <= theirs["max"] and theirs["min"] <= ours["max"]:
        text += " — the two time ranges overlap: within this run's noise"
    rounds = per_round(data, program, best_peer)
    if rounds is not None:
        text += (f"; round by round {pretty(best_peer)} / libsta_malloc = {fx(rounds[0])} "
                 f"({rounds[1]:.2f}–{rounds[2]:.2f})")
    if ours is not None and ours["alloc_share"] is not None and theirs["alloc_share"] is not None:
        text += (f"; inside the allocator: {share_text(ours)} of libsta_malloc's CPU samples, "
                 f"{share_text(theirs)} of {pretty(best_peer)}'s")
    return text + " (the unchanged-programs table has every allocator's runs)."


def share_text(v):
    """A program row's share of samples in the allocator: '12.3 %' (or '–')."""
    return "–" if v is None or v["alloc_share"] is None else f"{100 * v['alloc_share']:.1f} %"


def render_shares(data, allocs):
    """The share of CPU samples inside the allocator, per program and allocator."""
    lines = ["### Share of CPU samples inside the allocator (perf)", ""]
    if not any(v["alloc_share"] is not None for v in data.programs.values()):
        return lines + ["Not measured in this run (`PERF_RUNS=0`, or `perf record` was not "
                        "permitted: see the report's log).", ""]
    sampled = sorted({len(v["alloc_shares"]) for v in data.programs.values()
                      if v["alloc_shares"]})
    lines += [
        f"{'/'.join(str(n) for n in sampled)} runs per program and allocator under `perf record "
        "-e cpu-clock -F 4999` (one of each allocator per round, after the timed rounds): the "
        "samples inside the allocator — any function of the peer's library or of "
        "libsta_malloc, glibc's malloc functions in libc.so — over all the run's samples, the "
        "median of the runs (their range beside it). One run measures this far more steadily "
        "than its time: it is the allocator's own cost, without the locality it gives the "
        "program (that is in the times above). *Lowest peer* = the smallest share among "
        "glibc, mimalloc, jemalloc and tcmalloc; *sta / lowest* below 1: libsta_malloc spends "
        "less of the program's time in the allocator.", ""]
    rows = []
    for p in data.program_list:
        cells, peer_shares = [p], []
        for a in allocs:
            v = data.programs.get((a, p))
            if v is None or v["alloc_share"] is None:
                cells.append("–")
                continue
            cells.append(f"{share_text(v)} ({100 * min(v['alloc_shares']):.1f}–"
                         f"{100 * max(v['alloc_shares']):.1f})")
            if a != STA_MALLOC_ROW:
                peer_shares.append((v["alloc_share"], a))
        ours = data.programs.get((STA_MALLOC_ROW, p))
        if ours is not None and ours["alloc_share"] is not None and peer_shares:
            low, low_alloc = min(peer_shares)
            cells.append(f"{ratio(ours['alloc_share'], low):.2f} ({pretty(low_alloc)})"
                         if low > 0 else "–")
        else:
            cells.append("–")
        rows.append(cells)
    return lines + [md_table(["program"] + [pretty(a) for a in allocs] +
                             ["sta / lowest peer"], rows), ""]


def why_bstr(data, v):
    return ", ".join(measured_text(v.target, c) for c in v.checks) + "."


def why_threads(data, v):
    workload = v.target.conds[0].measure.split("/")[1]
    text = (", ".join(measured_text(v.target, c) for c in v.checks) +
            " (ns per op per thread; every allocator in the threads table).")
    if workload == "prodcons":
        return text + (
            " Every block is freed by another thread than the one that allocated it: the pool "
            "pushes it onto its owner's inbox with one compare-and-swap and the owner takes "
            "the inbox back at its next refill; the blocks themselves cross cores, for every "
            "allocator alike.")
    return text + (
        " The churn frees blocks at random over the ring, across spans: a span's freed blocks "
        "go back to its class sorted into address order each time the class takes the span "
        "again (span_core::in_address_order, the largest symbol after the loop itself in a "
        "perf profile of churn32 here).")


def why_threads_rss(data, v):
    return (", ".join(measured_text(v.target, c) for c in v.checks) +
            " (peak RSS of the process over its baseline). Blocks freed by the consumers wait "
            "in their owner's inbox until its next refill.")


def why_seed(data, v):
    return (", ".join(measured_text(v.target, c) for c in v.checks) +
            ". The per-thread pool reaches its thread's state through one thread-local "
            "pointer where the seed's mode has a constant address, and a free compares the "
            "span's owner with it (the per-thread vs seed table has every pattern).")


WHY = {"ct32": why_ct32, "rt32": why_rt32, "scenario": why_scenario, "cold": why_cold,
       "scale": why_scale, "memory": why_memory, "ct32_mi": why_ct32_mi, "waves": why_waves,
       "traversal": why_traversal, "phase": why_phase, "client": why_client, "bstr": why_bstr,
       "program": why_program,
       "threads": why_threads, "threads_rss": why_threads_rss, "seed": why_seed}


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
    "- **layouts**: every pool row is measured in the seed's shared-cursor layout (`sta-branch`, "
    "`sta-table`, `sta (shared cursor)`) and in the span layout (`sta spans ...`, `sta "
    "(spans)`); the targets are judged on each, side by side.",
    "- **phase change** (`bench/process_benchmark.cpp phase`): 64 MiB in 16 B blocks, all "
    "freed, then 64 MiB in 1 KiB blocks, each block touched; peak RSS (VmHWM) over the RSS "
    "before.",
    "- **waves** (`bench/waves_benchmark.cpp`): a workload 10 times in one process (Lua "
    "scripts of `tests/clients/lua` in a new state closed after each wave; the tree scenario, "
    "larger, built and destroyed); CPU time per wave.",
    "- **traversal** (`bench/traversal_benchmark.cpp`): a tree of 19,607 GUI-like elements "
    "(name, string properties, handlers, children) walked depth first many times between "
    "partial teardowns and regrowth; whole-process CPU time.",
    "- **threads** (`bench/threads_benchmark.cpp`, issue 14): one process per run, allocators "
    "interleaved. *churn* = each thread frees the block of a pseudo-random slot of its own "
    "ring of live blocks and allocates its replacement (32 B: 4,096 slots; mixed: 1,024 slots, "
    "80% 8–256 B, 17% to 4 KiB, 3% to 32 KiB), the same work per thread at 1 and 2 threads; "
    "*producer/consumer* = N producers allocate blocks of 16–1024 B, write a header and hand "
    "them in batches of 256 through one bounded queue to N consumers that check and free them "
    "(at 2: 2 + 2 threads on this 2-core machine). Sizes are opaque to the compiler; the pool "
    "frees with the size, the malloc rows with free(p). Wall time per op per thread: the "
    "median of the repetitions after a warm-up in each process, then the median over "
    "processes. Peak RSS = ru_maxrss over the baseline before the first block. The pool row "
    "is the span layout in threads::per_thread; *seed mode* rows are the span layout in "
    "threads::one_owner (get, scenarios, churn at 1 thread).",
    "- **unchanged programs** (`bench/programs/run_programs.sh`, issue 16): Debian's lua5.4, "
    "xmllint, python3, sqlite3 and pigz as whole processes under glibc, mimalloc, jemalloc, "
    "tcmalloc and libsta_malloc.so (`LD_PRELOAD`), rounds interleaved, output oracle; wall "
    "time and peak RSS. libsta_malloc.so is the span layout: its targets are judged there.",
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


def pool_rows(data):
    """The pool's rows by dispatch, the default first: every layout x dispatch."""
    rows = [data.row(lay, pol) for lay in [data.layout] + [x for x in LAYOUTS if x != data.layout]
            for pol in [data.policy, data.other_policy]]
    return rows


def render_get_tables(data):
    sta = data.default_row
    get, ir = data.get, data.ir
    pools = pool_rows(data)
    lines = ["## The seed's table beside ours (32 B, compile-time size)", "",
             md_table(["pattern", "seed (Windows)"] + [pretty(a) for a in pools] +
                      [f"instructions {pretty(a)}" for a in pools],
                      [[p, f"{SEED[p]:.2f} ns"] + [f"{fmt(get.get((a, p, 'ct', 32)))} ns"
                                                   for a in pools] +
                       [fmt(ir.get((a, p, "ct", 32)), 1) for a in pools] for p in PATTERNS]), ""]
    rows = [[f"{size} B"] + [fmt(get.get((sta, p, mode, size))) for p in PATTERNS
                             for mode in ["ct", "rt"]]
            for size in sorted({k[3] for k in get if k[0] == sta})]
    lines += [f"## {pretty(sta)}: every class (ns per op)", "",
              md_table(["class"] + [f"{p} {m}" for p in PATTERNS for m in ["ct", "rt"]], rows),
              ""]
    allocs = pools + sorted({k[0] for k in get if not is_pool(k[0])})
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
    lines += ["From `scripts/callgrind_counts.sh`; balanced counts one free + one alloc.",
              "", md_table(["allocator", "fresh", "pure get", "balanced"], rows), ""]
    sizes = sorted({k[3] for k in ir if is_pool(k[0])})
    rows = [[f"{pretty(a)} [{mode}]"] + [" / ".join(fmt(ir.get((a, p, mode, size)), 1)
                                                    for p in PATTERNS) for size in sizes]
            for a in pool_rows(data) for mode in ["ct", "rt"]
            if any((a, p, mode, size) in ir for p in PATTERNS for size in sizes)]
    return lines + ["### The pool, every dispatch × layout: fresh / pure get / balanced", "",
                    md_table(["pool"] + [f"{size} B" for size in sizes], rows), ""]


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


def render_waves(data):
    lines = [f"## Waves: a workload {WAVES} times in one process (CPU s per wave)", "",
             f"From `bench/waves_benchmark.cpp`: each wave runs the workload from nothing and "
             f"gives every byte back (Lua: `lua_close`; tree: destroyed), on the same allocator; "
             f"processes interleaved. *ratio* = wave {WAVES} / wave 1 per process, the median over "
             f"processes; the waves are medians over processes.", ""]
    for w in sorted({k[1] for k in data.waves}):
        rows = []
        for a in sorted({a for a, w_ in data.waves if w_ == w},
                        key=lambda a: (not is_pool(a), a)):
            v = data.waves[(a, w)]
            rows.append([pretty(a), fx(v.ratio), v.processes] + [f"{x:.3f}" for x in v.waves])
        lines += [f"### {w}", "", md_table(["allocator", "ratio", "processes"] +
                                           [f"w{i + 1}" for i in range(WAVES)], rows), ""]
    return lines


def render_traversal(data):
    rows = []
    mi = best(build_measures(data)["traversal"], "mimalloc")
    for a, v in sorted(data.traversal.items(), key=lambda kv: kv[1].median):
        rows.append([pretty(a), f"{v.median:.3f}", f"{v.low:.3f}–{v.high:.3f}", v.runs,
                     fx(ratio(mi.value, v.median))])
    return ["## Traversal: a GUI-like tree walked between partial teardowns", "",
            "From `bench/traversal_benchmark.cpp`: whole-process CPU seconds, one process per "
            "run, allocators interleaved; *vs mimalloc* = the better of mimalloc's variants "
            f"({pretty(mi.variant) if mi.variant else 'n/a'}) / this allocator's median.", "",
            md_table(["allocator", "median s", "min–max s", "runs", "× vs mimalloc"], rows), ""]


def render_threads(data):
    measures = build_measures(data, "spans")
    cols = [(w, n) for w in THREAD_WORKLOADS for n in THREAD_COUNTS]
    allocs = sorted({k[0] for k in data.threads}, key=lambda a: (not is_pool(a), a))
    processes = sorted({v["processes"] for v in data.threads.values()})
    rss_cols = [f"producer/consumer peak RSS, {thread_text('prodcons', n)} (KiB)"
                for n in THREAD_COUNTS]
    header = ["allocator"] + [f"{THREAD_WORKLOAD_TEXT[w]}, {thread_text(w, n)}"
                              for w, n in cols] + rss_cols

    def cell(a, w, n, f, digits=2):
        return fmt(data.threads.get((a, w, n), {}).get(f), digits)

    def table(f):
        return [[pretty(a)] + [cell(a, w, n, f) for w, n in cols] +
                [cell(a, "prodcons", n, "net_peak_kib", 0) for n in THREAD_COUNTS]
                for a in allocs]

    ours = LAYOUT_ROWS["spans"]
    vs = [f"**{pretty(ours)}: × vs the best peer**"]
    for w, n in cols:
        f = best(measures[f"threads/{w}/{n}"], "all")
        vs.append(f"{fx(f.speedup)} ({pretty(f.variant)})" if f.variant else "n/a")
    for n in THREAD_COUNTS:
        f = best(measures[f"threads_rss/prodcons/{n}"], "mimalloc")
        vs.append(f"{fx(f.share)} of {pretty(f.variant)}" if f.variant else "n/a")
    return ["## Threads: per-thread pools", "",
            "From `bench/threads_benchmark.cpp` (method above): wall ns per op per thread — "
            "the time of a repetition / the ops of one thread (of one producer) — so a flat "
            "figure from 1 to 2 threads means the work scales; the median over "
            f"{'/'.join(str(p) for p in processes)} processes. *× vs the best peer* = the "
            "fastest peer's figure / the pool's; peak RSS is over the process's baseline, "
            "against mimalloc's lowest variant.", "",
            md_table(header, table("ns_per_op") + [vs]), "",
            "### CPU ns per op (all worker threads' CPU time / all ops)", "",
            "Steadier than wall time when another process takes a core; waiting counts "
            "(spinning and yields of the producer/consumer queue).", "",
            md_table(header[:1 + len(cols)],
                     [r[:1 + len(cols)] for r in table("cpu_ns_per_op")]), ""]


def render_seed(data):
    measures = seed_measures(data, "spans")
    row = data.row("spans")
    note = ""
    if data.spans_threads == "one_owner":
        note = (" In this build the span rows are in threads::one_owner too: both columns "
                "measure the seed's mode.")
    rows = [[m.label, f"{fmt(m.ours)} {m.unit}", f"{fmt(m.others[SEED_ROW])} {m.unit}",
             fx(ratio(m.ours, m.others[SEED_ROW]))] for m in measures]
    return ["## Per-thread pools vs the seed's mode (span layout, one thread)", "",
            f"`{pretty(row)}` is the span layout in its default thread policy "
            f"(`threads::{data.spans_threads}` in this build); `{pretty(SEED_ROW)}` is the "
            "same layout with the default dispatch in `threads::one_owner`. *ratio* = "
            "per-thread / seed mode: above 1.00× the per-thread pool is slower; the targets "
            "allow 1.10× (32 B and the scenarios)." + note, "",
            md_table(["measure", pretty(row), pretty(SEED_ROW), "ratio"], rows), ""]


def render_phase(data):
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


def render_clients(data):
    lines = ["## Real programs on the pool: Lua, SQLite, libxml2", ""]
    if data.clients_md is None:
        return lines + skipped_note(data, "clients")
    return lines + ["From `bench/clients/run_clients.sh` (interleaved runs; method and analysis "
                    "in [clients.md](clients.md)); every run's output equals the glibc run's.",
                    "", data.clients_md.rstrip(), ""]


def render_programs(data):
    lines = ["## Unchanged programs on libsta_malloc.so (LD_PRELOAD)", ""]
    if "programs" in data.skips:
        return lines + skipped_note(data, "programs")
    measures = build_measures(data, "spans")
    runs = sorted({v["runs"] for v in data.programs.values()})
    lines += [
        "From `bench/programs/run_programs.sh` (issue 16; method in [malloc.md](malloc.md), "
        "\"Measured\"): Debian's own binaries, unchanged, and two small programs of the "
        "project's that free and grow big buffers (`bench/programs/big_buffers.cpp`, plain "
        "malloc / realloc / free), each run a whole process under "
        "glibc (no preload), the peers and libsta_malloc.so through `LD_PRELOAD`; "
        f"{'/'.join(str(r) for r in runs)} timed runs per program and allocator, one of each "
        "allocator per round, the order rotated every round; every run's output is "
        "byte-identical to the glibc run's. Time: wall seconds of the process, the median of "
        "its runs (min–max beside it); peak RSS: ru_maxrss, the median. *× vs glibc* and *× vs "
        "the best peer* = their median / libsta_malloc's (above 1: libsta_malloc is faster); "
        "the best peer is the fastest of glibc, mimalloc, jemalloc and tcmalloc. *Round by "
        "round*: the best peer's time / libsta_malloc's within each round (the two ran "
        "moments apart, so a slow spell of the machine hits both): the median over rounds "
        "and its range, a steadier comparison than two medians on a noisy machine; the "
        "targets take the medians.", "",
        f"**Allocator-bound** (from this run): a program whose time on glibc is at least "
        f"{ALLOC_BOUND:.2f}× the best general-purpose peer's (mimalloc, jemalloc, tcmalloc): "
        "there the allocator visibly decides the time, and the targets ask ≥ 1.05× the best "
        "peer and ≥ 1.3× glibc. Below that spread the program spends little of its time in "
        "malloc, and the target is no loss beyond the noise (≥ 0.97× the best peer). The "
        "multi-threaded program's target is ≥ 1.0× the best peer, whatever its spread. Peak "
        "RSS ≤ 1.2× mimalloc's for every program.", ""]
    spread_rows, verdict = [], []
    for p in data.program_list:
        spread = program_spread(data, p)
        general = best(measures[f"program/{p}"], "general")
        bound = allocator_bound(data, p)
        verdict.append(f"- *{p}*: glibc / {pretty(general.variant) if general.variant else 'n/a'}"
                       f" = {fx(spread)} → "
                       f"{'allocator-bound' if bound else 'not allocator-bound'}"
                       f"{' (multi-threaded)' if p in data.program_threads else ''}")
        t = measures[f"program/{p}"]
        every = best(t, "all")
        glibc = best(t, "glibc")
        rss = best(measures[f"program_rss/{p}"], "mimalloc")
        ours = data.programs.get((STA_MALLOC_ROW, p))
        noise = [v["max"] / v["min"] - 1 for (a, p_), v in data.programs.items() if p_ == p]
        rounds = per_round(data, p, every.variant) if every.variant else None
        spread_rows.append([
            p, f"{ours['seconds']:.3f} ({ours['min']:.3f}–{ours['max']:.3f})" if ours else "n/a",
            fx(glibc.speedup),
            f"{fx(every.speedup)} ({pretty(every.variant)})" if every.variant else "n/a",
            f"{fx(rounds[0])} ({rounds[1]:.2f}–{rounds[2]:.2f})" if rounds else "n/a",
            fx(spread), "yes" if bound else "no",
            f"{100 * statistics.median(noise):.0f}%" if noise else "n/a",
            fmt(ours["maxrss_kib"] / 1024, 1) if ours else "n/a",
            f"{fx(rss.share)}" if rss.variant else "n/a"])
    lines += verdict + ["", md_table(
        ["program", "libsta_malloc s (min–max)", "× vs glibc", "× vs the best peer",
         "the same, round by round (median, min–max)", "glibc / best general peer",
         "allocator-bound", "runs' spread (median max/min − 1)", "peak RSS MiB",
         "RSS / mimalloc"], spread_rows), "",
        "### Every allocator (wall seconds: median, min–max; CPU seconds; peak RSS)", "",
        "CPU seconds (user + system, every thread; the median) count no time spent waiting "
        "for a core, so they move less than wall time when another process runs.", ""]
    allocs = ["malloc", "mimalloc", "jemalloc", "tcmalloc", STA_MALLOC_ROW]
    rows = []
    for p in data.program_list:
        for a in allocs:
            v = data.programs.get((a, p))
            if v is None:
                continue
            g = data.programs.get(("malloc", p))
            rows.append([p, pretty(a), f"{v['seconds']:.3f}", f"{v['min']:.3f}–{v['max']:.3f}",
                         int(v["runs"]), fx(ratio(g["seconds"], v["seconds"]) if g else None),
                         f"{v['cpu_seconds']:.3f}", fmt(v["maxrss_kib"] / 1024, 1)])
    return lines + [md_table(["program", "allocator", "median s", "min–max s", "runs",
                              "× vs glibc", "CPU s", "peak RSS MiB"], rows), ""] + \
        render_shares(data, allocs)


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
        w["com"].rstrip(), "",
        "### Boxed values: the static `true` / `false` and pool boxes against the heap box", "",
        "From `bench/com_box_benchmark.cpp` (method and limits in [com_box.md](com_box.md)): "
        "a COM method that reads an `IReference<T>*` argument, the box made per call and "
        "released after it, against passing a pointer the caller already holds.", "",
        w["box"].rstrip(), ""]


def render_report(data, rows, verdicts, info, now, other=None):
    packages = [f"{k[8:]} ({r})" for k, r in data.skips.items() if k.startswith("package:")]
    lines = [
        "# Benchmarks", "",
        f"Generated by `scripts/report.sh` on {now}. Do not edit by hand: rerun it.", "",
        f"- Machine: {info['cpu']}, {info['cores']} cores; {info['os']}; THP `{info['thp']}`",
        f"- Compiler: {info['compiler']}, Release (`-O3 -DNDEBUG`, CMake preset `bench`)",
        f"- Default dispatch: `{pretty(data.policy)}` (see [dispatch.md](dispatch.md)); "
        f"default layout: {LAYOUT_TEXT[data.layout]} (`STA_POOL_SPANS`); every target is "
        "judged on both layouts",
        f"- Skipped peers: {'; '.join(packages) or 'none'}", "",
        "![ns per operation at 32 B](benchmarks.svg)", "",
        "## Method", ""] + METHOD + render_preload_method(data) + METHOD_AFTER_PRELOAD + [
        "", "## Main table", "", render_main(data, rows, other), "",
        "## Targets", "", render_targets(verdicts, data.layout), ""]
    missed = [v for v in verdicts if not v.ok]
    if missed:
        lines += ["### Why the missed targets are missed", ""]
        lines += [f"- *{v.target.label}* ({LAYOUT_TEXT[v.layout]}): {WHY[v.target.why](data, v)}"
                  for v in missed] + [""]
    lines += render_get_tables(data) + render_callgrind(data) + render_processes(data)
    lines += render_phase(data) + render_waves(data) + render_traversal(data)
    lines += render_threads(data) + render_seed(data)
    lines += render_extras(data) + render_clients(data) + render_programs(data)
    lines += render_wine(data)
    return "\n".join(lines) + "\n"


def svg_chart(data):
    """Grouped horizontal bars: ns/op at 32 B per pattern and allocator."""
    sta, other, spans, other_spans = pool_rows(data)
    allocs = [(sta, "ct"), (sta, "rt"), (other, "ct"), (spans, "ct"), (other_spans, "ct"),
              ("malloc", "rt"),
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
    by_layout = measures_by_layout(data)
    measures = by_layout[data.layout]
    other = next(m for lay, m in by_layout.items() if lay != data.layout)
    rows = main_rows(measures)
    verdicts = judge(data, by_layout)
    print(render_main(data, rows, other) + "\n\n" + render_targets(verdicts, data.layout))
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    os.makedirs(args.docs, exist_ok=True)
    with open(os.path.join(args.docs, "benchmarks.md"), "w") as f:
        f.write(render_report(data, rows, verdicts, machine(args.results), now, other))
    with open(os.path.join(args.docs, "benchmarks.svg"), "w") as f:
        f.write(svg_chart(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
