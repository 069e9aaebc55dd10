"""What every section of the report uses: the names of the pool's rows and of the peers,
reading the raw files, the measures and the best variant of a peer (`best()`: the main
table and the targets both use it), the checks and verdicts, the Markdown helpers, the
main table and the targets table."""
import json
import os
import re
import statistics
from dataclasses import dataclass
from typing import Callable, NamedTuple, Optional

# ====================================================================================
# Names: the pool's rows, the peers
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
# their default thread policy (sections/seed.py).
SEED_ROW = "sta-spans-seed"
# libsta_malloc.so under LD_PRELOAD: the pool's row of the unchanged programs.
STA_MALLOC_ROW = "sta-malloc"
# The same libsta_malloc.so with STA_MALLOC_CHECKS=0 (its release checks off, issue 27): a
# row of the unchanged programs, the pool's own (is_pool), never a peer; only the measures
# of the checks' cost (sections/programs.py) name it beside ours.
STA_MALLOC_UNCHECKED_ROW = "sta-malloc-unchecked"
# libsta_malloc-hardened.so (issue 41): a row of the unchanged programs and of the field
# suite, the pool's own (is_pool), never a peer; the hardened library's cost measures
# compare it with STA_MALLOC_ROW.
STA_MALLOC_HARDENED_ROW = "sta-malloc-hardened"

# A peer and the allocator names it is measured under in the results. A peer's figure
# for a measure is the fastest of its variants.
PEERS = {
    "glibc": ["malloc", "std::allocator"],
    "mimalloc": ["mimalloc", "mimalloc (new)", "mimalloc-dlopen"],
    "jemalloc": ["jemalloc", "jemalloc (new)"],
    "tcmalloc": ["tcmalloc", "tcmalloc (new)"],
    "mimalloc3": ["mimalloc3", "mimalloc3 (new)"],
    "snmalloc": ["snmalloc", "snmalloc (new)"],
    "rpmalloc": ["rpmalloc", "rpmalloc (new)"],
    "boost::pool": ["boost-pool"],
    "bump": ["pmr-monotonic", "foonathan-stack"],
    "original CComBSTR": ["bstr-original"],
    "seed mode": [SEED_ROW],  # the seed-mode measures only (they name it beside ours)
    "checks off": [STA_MALLOC_UNCHECKED_ROW],  # the checks' cost measures only (likewise)
    "heap box": ["heap box"],  # under wine: the COM box over the heap (sections/wine.py)
}
# The LD_PRELOAD peers: Debian's packages, then the extra ones, the newest releases of
# the best peers built apart (scripts/peer_library.sh: from STA_EXTRA_PEERS_DIR, by
# default ../shared/peers beside the repository; scripts/report.sh skips the ones not
# present, whatever --allow-missing says). "mimalloc" is Debian's (2.0.9) alone.
DEBIAN_PEERS = ["mimalloc", "jemalloc", "tcmalloc"]
EXTRA_PEERS = ["mimalloc3", "snmalloc", "rpmalloc"]
# Groups of peers; "all" is every allocator that is not the pool.
GROUPS = {"general": DEBIAN_PEERS + EXTRA_PEERS}
GROUP_TEXT = {"glibc": "glibc", "mimalloc": "mimalloc", "mimalloc3": "mimalloc 3.4.3",
              "boost::pool": "boost::pool",
              "bump": "a bump allocator", "general": "the best general-purpose peer",
              "all": "the best peer", "original CComBSTR": "the original CComBSTR",
              "seed mode": "the seed's mode (threads::one_owner)",
              "checks off": "checks off",
              "default": "libsta_malloc.so's speed (at most 10 % slower)",
              "heap box": "the interlocked heap box"}
# Peers measured by running the `malloc` rows of the same binaries under LD_PRELOAD.
PRELOAD_PEERS = DEBIAN_PEERS + EXTRA_PEERS

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
    STA_MALLOC_UNCHECKED_ROW: "libsta_malloc.so (checks off)",
    STA_MALLOC_HARDENED_ROW: "libsta_malloc-hardened.so (LD_PRELOAD)",
    SEED_ROW: "sta (spans, seed mode: threads::one_owner)",
    "bstr-original": "original CComBSTR",
    "malloc": "glibc malloc",
    "std::allocator": "std::allocator (glibc)",
    "mimalloc-dlopen": "mimalloc (dlopen)",
    "mimalloc": "mimalloc (LD_PRELOAD)",
    "jemalloc": "jemalloc (LD_PRELOAD)",
    "tcmalloc": "tcmalloc (LD_PRELOAD)",
    "mimalloc3": "mimalloc 3.4.3 (LD_PRELOAD)",
    "snmalloc": "snmalloc (LD_PRELOAD)",
    "rpmalloc": "rpmalloc (LD_PRELOAD)",
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


def slug(text):
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


class Cond(NamedTuple):
    """One condition of a target.

    bound "faster": the group's best figure / ours >= threshold;
    bound "within": ours / the group's best figure <= threshold;
    bound "flat": ours is (lowest, highest) of the pool's figure over live-set sizes / the
    smallest's, within 1 +- threshold (group unused);
    bound "at_most": ours <= threshold, the figure itself (a ratio: wave 10 over wave 1,
    peak RSS over 64 MiB); the group's best figure is shown beside it;
    bound "share_at_most": ours <= the group's best (lowest) figure + threshold, both
    shares (0..1, shown as percentages: the share of the peak still resident);
    bound "kib_over_at_most": ours <= the group's best (lowest) figure + threshold, all
    three KiB (a small program's peak RSS over glibc's);
    bound "at_least": ours >= threshold, ours itself a speed-up against peers computed by
    its section (the field suite's geometric mean; group None).
    """
    measure: str
    group: Optional[str]
    bound: str
    threshold: float
    # how the targets table names the measure when a target has several; None: the last
    # part of the measure's id, up to its first "_" ("rss/tree" -> "tree")
    name: Optional[str] = None


class Target(NamedTuple):
    id: str
    label: str
    why: Callable  # (data, verdict) -> Markdown: why the target is missed
    conds: list
    layouts: tuple = tuple(LAYOUTS)  # the layouts it is judged on (threads: spans only)


# ====================================================================================
# Loading: raw files -> Results
# ====================================================================================


class ReportError(Exception):
    """A section's input is missing or malformed: the report cannot be complete."""


class Results:
    """The report's input, checked: each section's load() sets the attributes it names,
    and sections/get_paths.py the pool's build (from get.json's context) below."""
    policy: str  # the pool's rows (shared cursor, default dispatch): "sta-branch" or "sta-table"
    layout: str  # sta::memory_pool's default layout: "shared_cursor" or "spans"
    spans_threads: str  # the thread policy of the sta-spans-* rows

    def __init__(self, skips):
        self.skips = dict(skips)  # KEY -> reason

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
    """The JSON lines of `path`, one dict each. A section reads the keys it knows; any other
    key of a line (such as the "kind" the benchmark programs may lead it with) is left alone."""
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


def round_files(path):
    """The files of a section's interleaved rounds: PATH with ".rN" before its ".json"
    (scenario.json: scenario.r1.json, scenario.r2.json, ...), in round order; none is an
    error."""
    stem = path[:-len(".json")]
    rounds = []
    while os.path.exists(f"{stem}.r{len(rounds) + 1}.json"):
        rounds.append(f"{stem}.r{len(rounds) + 1}.json")
    if not rounds:
        raise ReportError(f"{stem}.r1.json: missing (the rounds of {os.path.basename(path)})")
    return rounds


def load_context(doc, path, key, allowed):
    value = doc.get("context", {}).get(key)
    if value not in allowed:
        raise ReportError(
            f"{path}: context key \"{key}\" is {value!r}, expected one of "
            f"{', '.join(allowed)} (get_benchmark reports the default it was built with)")
    return value


def median_by(rows, key, field_name, path):
    groups = {}
    for r in rows:
        try:
            groups.setdefault(key(r), []).append(r[field_name])
        except KeyError as e:
            raise ReportError(f"{path}: a row without {e}: {r}") from None
    return {k: statistics.median(v) for k, v in groups.items()}


def preloaded(data):
    """The LD_PRELOAD peers not skipped."""
    return [p for p in PRELOAD_PEERS if "preload:" + p not in data.skips]


def extra_peers(data):
    """The extra LD_PRELOAD peers present (not skipped)."""
    return [p for p in EXTRA_PEERS if "preload:" + p not in data.skips]


def peer_list(names):
    """'a, b and c' of the pretty names without " (LD_PRELOAD)"."""
    names = [pretty(n).replace(" (LD_PRELOAD)", "") for n in names]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def dispatch_rows(data):
    """The pool's rows by dispatch: every layout x dispatch policy."""
    return [data.row(lay, pol) for lay in LAYOUTS for pol in POLICIES.values()]


def missing_rows(name, present, expected):
    """[the problem of section `name`] when rows of `expected` are not in `present`."""
    missing = [a for a in expected if a not in present]
    return [f"{name}: no rows of {', '.join(missing)}"] if missing else []


# ====================================================================================
# Judging: measures, the best variant of a peer, verdicts
# ====================================================================================


@dataclass
class Measure:
    id: str  # "get/<pattern>/<ct|rt>/<bytes>", "scenario/<name>", "rss/<name>", "cold"
    label: str
    unit: str
    ours: object  # the pool's figure, or None; a "flat" measure's: (lowest, highest)
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


def check(measures, cond):
    measure = measures.get(cond.measure)
    if cond.bound == "flat":
        spread = measure.ours if measure else None
        ok = spread is not None and spread[0] >= 1 - cond.threshold and \
            spread[1] <= 1 + cond.threshold
        return Check(cond, None, spread, ok)
    if cond.bound == "at_least":
        value = measure.ours if measure else None
        return Check(cond, Figure(cond.group, None, None, value), value,
                     value is not None and value >= cond.threshold)
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
    elif cond.bound in ("share_at_most", "kib_over_at_most"):
        value = figure.ours
        ok = value is not None and figure.value is not None and \
            value <= figure.value + cond.threshold
    else:
        raise ValueError(f"unknown bound {cond.bound}")
    return Check(cond, figure, value, ok)


# ====================================================================================
# Rendering: Markdown
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


def pct(share):
    """A share (0..1) as a percentage: '12.3 %'."""
    return "n/a" if share is None else f"{100 * share:.1f} %"


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def skipped_note(data, key):
    return [f"Skipped: {data.skips[key]}.", ""] if key in data.skips else []


def pool_rows(data):
    """The pool's rows by dispatch, the default first: every layout x dispatch."""
    rows = [data.row(lay, pol) for lay in [data.layout] + [x for x in LAYOUTS if x != data.layout]
            for pol in [data.policy, data.other_policy]]
    return rows


MAIN_GROUPS = ["glibc", "general", "all"]  # the main table's peer columns


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


def short(cond):
    if cond.name is not None:
        return cond.name
    return cond.measure.split("/")[-1].split("_")[0]  # "rss/tree" -> "tree", ... -> "grow"


def cond_text(target, c):
    prefix = short(c) + " " if several_measures(target) else ""
    if c.bound == "faster":
        return f"{prefix}≥{c.threshold:g}× {GROUP_TEXT[c.group]}"
    if c.bound == "within":
        return f"{prefix}≤{c.threshold:g}× {GROUP_TEXT[c.group]}"
    if c.bound == "at_most":
        return f"{prefix}≤{c.threshold:g}×"
    if c.bound == "at_least":
        return f"{prefix}≥{c.threshold:g}× {GROUP_TEXT[c.group] if c.group else 'the best peer of each program'}"
    if c.bound == "share_at_most":
        margin = f" + {100 * c.threshold:g} points" if c.threshold else ""
        return f"{prefix}≤ {GROUP_TEXT[c.group]}{margin}"
    if c.bound == "kib_over_at_most":
        return f"{prefix}≤ {GROUP_TEXT[c.group]} + {c.threshold / 1024:g} MiB"
    return f"{prefix}within ±{c.threshold * 100:.0f}% from 10^3 to 10^7 live blocks"


def measured_text(target, c):
    prefix = short(c.cond) + " " if several_measures(target) else ""
    if c.cond.bound == "flat":
        return prefix + ("n/a" if c.value is None else
                         f"{c.value[0]:.2f}..{c.value[1]:.2f} of the 10^3 figure")
    if c.cond.bound == "at_most":
        best_peer = (f"{pretty(c.figure.variant)} {fx(c.figure.value)}" if c.figure.variant
                     else "n/a")
        return f"{prefix}{fx(c.value)} (best peer: {best_peer})"
    if c.cond.bound == "at_least":
        return f"{prefix}{fx(c.value)}"
    if c.cond.bound == "share_at_most":
        best_peer = (f"{pretty(c.figure.variant)} {pct(c.figure.value)}" if c.figure.variant
                     else "n/a")
        return f"{prefix}{pct(c.value)} (best: {best_peer})"
    if c.cond.bound == "kib_over_at_most":
        theirs = (f"{pretty(c.figure.variant)} {fmt(c.figure.value / 1024)} MiB"
                  if c.figure.variant else "n/a")
        return f"{prefix}{fmt(None if c.value is None else c.value / 1024)} MiB ({theirs})"
    word = "vs" if c.cond.bound == "faster" else "of"
    peer = pretty(c.figure.variant) if c.figure.variant else GROUP_TEXT[c.cond.group]
    return f"{prefix}{fx(c.value)} {word} {peer}"


def checks_text(v):
    """Every check of a verdict, measured, in one line."""
    return ", ".join(measured_text(v.target, c) for c in v.checks)


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
            row += ["n/a", "n/a"] if v is None else [checks_text(v), verdict_text(v)]
        rows.append(row)
    return md_table(header, rows)
