"""Per-thread pools vs the seed's mode (issue 14): the span rows in their default thread
policy against the same layout in threads::one_owner (SEED_ROW), from the get paths, the
scenarios and the threads' churn at 1 thread. Judged on the span layout only."""
from ..core import (LAYOUT_ROWS, SEED_ROW, Cond, Measure, Target, checks_text, fmt, fx,
                    md_table, pretty, ratio)
from .get_paths import PATTERNS
from .scenarios import SCENARIOS
from .threads import THREAD_WORKLOAD_TEXT, THREAD_WORKLOADS


def measures(data, layout):
    """The seed's mode is named in `others` as the one variant of the group "seed mode";
    ours is None on the shared cursor, which has the seed's mode only."""
    spans = layout == "spans"
    row = data.row("spans")
    out = []
    for (a, p, mode, size) in sorted((k for k in data.get if k[0] == SEED_ROW),
                                     key=lambda k: (k[3], PATTERNS.index(k[1]), k[2])):
        out.append(Measure(f"seed/get/{p}/{mode}/{size}", f"{size} B {p} {mode}", "ns",
                           data.get.get((row, p, mode, size)) if spans else None,
                           {SEED_ROW: data.get[(a, p, mode, size)]}))
    for s in SCENARIOS:
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


def targets(data):
    return (
        [Target(f"seed_{p}", f"per-thread vs seed mode, 32 B {p}", why_seed,
                [Cond(f"seed/get/{p}/{m}/32", "seed mode", "within", 1.10, m)
                 for m in ["ct", "rt"]], ("spans",)) for p in PATTERNS]
        + [Target("seed_scenario", "per-thread vs seed mode, scenarios", why_seed,
                  [Cond(f"seed/scenario/{s}", "seed mode", "within", 1.10) for s in SCENARIOS],
                  ("spans",))])


def why_seed(data, v):
    return (checks_text(v) +
            ". The per-thread pool reaches its thread's state through one thread-local "
            "pointer where the seed's mode has a constant address, and a free compares the "
            "span's owner with it (the per-thread vs seed table has every pattern).")


def render(data):
    row = data.row("spans")
    note = ""
    if data.spans_threads == "one_owner":
        note = (" In this build the span rows are in threads::one_owner too: both columns "
                "measure the seed's mode.")
    rows = [[m.label, f"{fmt(m.ours)} {m.unit}", f"{fmt(m.others[SEED_ROW])} {m.unit}",
             fx(ratio(m.ours, m.others[SEED_ROW]))] for m in measures(data, "spans")]
    return ["## Per-thread pools vs the seed's mode (span layout, one thread)", "",
            f"`{pretty(row)}` is the span layout in its default thread policy "
            f"(`threads::{data.spans_threads}` in this build); `{pretty(SEED_ROW)}` is the "
            "same layout with the default dispatch in `threads::one_owner`. *ratio* = "
            "per-thread / seed mode: above 1.00× the per-thread pool is slower; the targets "
            "allow 1.10× (32 B and the scenarios)." + note, "",
            md_table(["measure", pretty(row), pretty(SEED_ROW), "ratio"], rows), ""]
