"""Memory given back (bench/programs/run_memory_back.sh, issue 24; memory_back.jsonl):
bench/programs/memory_back.cpp, a plain malloc/free program, allocates a large heap, frees
it (all of it, the older half, from another thread, or the tree scenario destroyed) and
keeps working lightly or busily; whole processes under glibc, the LD_PRELOAD peers and
libsta_malloc.so. The measure is the share of the peak still resident at the end.
libsta_malloc.so is the span layout: judged there only."""
import os
import statistics

from ..core import (PRELOAD_PEERS, STA_MALLOC_ROW, Cond, ReportError, Target, check, fmt,
                    make_measure, md_table, missing_rows, peer_list, pct, preloaded, pretty,
                    read_lines)

# The activities after the frees, as the runner names them, in the report's order.
ACTIVITIES = ["light", "busy"]
ACTIVITY_TEXT = {"light": "light activity", "busy": "busy activity"}
# memory_back's modes, in the report's order (the runner's may hold fewer).
MODES = ["all", "older_half", "after_exit", "tree"]
MODE_TEXT = {
    "all": "every block freed",
    "older_half": "the older half freed (the newer half stays live: about 50 % is what the "
                  "program still holds)",
    "after_exit": "every block freed by the main thread after the thread that allocated them "
                  "has ended",
    "tree": "the tree scenario (bench/scenarios.hpp) through std::allocator, built, shaken "
            "once and destroyed",
}
# The runner's allocator names -> the report's.
NAMES = dict({"glibc": "malloc", "sta": STA_MALLOC_ROW}, **{p: p for p in PRELOAD_PEERS})
FIELDS = ["baseline_kib", "peak_kib", "after_kib", "after_share"]


def load(data, results):
    """data.memory_back: (activity, mode, allocator) -> {"base_mib", "peak_mib", "after_mib",
    "share", "runs"}: medians over the runs of the allocator's own baseline, of the RSS
    over the program's baseline (the lowest allocator's) at the peak and after the
    activity (MiB) and of the share of the peak still resident; data.memory_back_modes in
    the report's order; data.memory_back_setup: {"mib", "activity_ms", "blocks_per_ms":
    {activity: blocks}} (one figure each in a file)."""
    path = os.path.join(results, "memory_back.jsonl")
    runs, setup = {}, {"mib": set(), "activity_ms": set(), "blocks_per_ms": {}}
    for r in read_lines(path):
        try:
            alloc, activity, mode = NAMES[r["allocator"]], r["activity"], r["mode"]
            row = {f: float(r[f]) for f in FIELDS}
            mib, activity_ms = int(r["mib"]), int(r["activity_ms"])
            blocks = int(r["blocks_per_ms"])
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: a malformed memory_back line: {r}") from None
        if (r.get("kind") != "memory_back" or activity not in ACTIVITIES or mode not in MODES
                or row["peak_kib"] <= row["baseline_kib"]):
            raise ReportError(f"{path}: not a memory_back result: {r}")
        setup["mib"].add(mib)
        setup["activity_ms"].add(activity_ms)
        setup["blocks_per_ms"].setdefault(activity, set()).add(blocks)
        runs.setdefault((activity, mode, alloc), []).append(row)
    for key, values in [("mib", setup["mib"]), ("activity_ms", setup["activity_ms"])] + [
            (f"blocks_per_ms of {a}", b) for a, b in setup["blocks_per_ms"].items()]:
        if len(values) != 1:
            raise ReportError(f"{path}: several {key} in one run: {sorted(values)}")
    data.memory_back_setup = {
        "mib": setup["mib"].pop(), "activity_ms": setup["activity_ms"].pop(),
        "blocks_per_ms": {a: b.pop() for a, b in setup["blocks_per_ms"].items()}}
    # The program's own baseline in each activity x mode: the lowest of the allocators'
    # median baselines. What an allocator has resident before the program's first block
    # (mimalloc 3.4.3 and tcmalloc: about 4 MiB) is the allocator's, and counting it as
    # the program's would credit that allocator for purging its own start-up pages.
    base_kib = {}
    for (activity, mode, _), rows in runs.items():
        own = statistics.median(r["baseline_kib"] for r in rows)
        base_kib[activity, mode] = min(own, base_kib.get((activity, mode), own))

    def over_baseline_mib(rows, field_name, base):
        return statistics.median(r[field_name] - base for r in rows) / 1024

    data.memory_back = {}
    for key, rows in runs.items():
        base = base_kib[key[0], key[1]]
        data.memory_back[key] = {
            "base_mib": statistics.median(r["baseline_kib"] for r in rows) / 1024,
            "peak_mib": over_baseline_mib(rows, "peak_kib", base),
            "after_mib": over_baseline_mib(rows, "after_kib", base),
            "share": statistics.median((r["after_kib"] - base) / (r["peak_kib"] - base)
                                       for r in rows),
            "runs": len(rows)}
    data.memory_back_modes = [m for m in MODES if any(k[1] == m for k in runs)]


def complete(data):
    """Every activity x mode: glibc, libsta_malloc and every LD_PRELOAD peer not skipped."""
    problems = []
    for activity in ACTIVITIES:
        for mode in data.memory_back_modes:
            problems += missing_rows(
                f"memory given back, {activity} {mode} (memory_back.jsonl)",
                {a for act, m, a in data.memory_back if (act, m) == (activity, mode)},
                ["malloc"] + preloaded(data) + [STA_MALLOC_ROW])
    return problems


def measures(data, layout):
    """libsta_malloc.so is one build, the same in both layouts."""
    out = []
    for activity in ACTIVITIES:
        for mode in data.memory_back_modes:
            shares = {a: v["share"] for (act, m, a), v in data.memory_back.items()
                      if (act, m) == (activity, mode)}
            out.append(make_measure(
                f"memory_back/{activity}/{mode}",
                f"memory given back, {ACTIVITY_TEXT[activity]}, {mode}: share of the peak "
                "resident after the frees", "share", shares.get(STA_MALLOC_ROW), shares))
    return out


def cond(activity, mode):
    """libsta_malloc's share at or below the best general-purpose peer's (the lowest share
    among those present)."""
    return Cond(f"memory_back/{activity}/{mode}", "general", "share_at_most", 0.0, mode)


def targets(data):
    """One an activity, a condition a mode."""
    return [Target(f"memory_back_{activity}",
                   f"memory given back, {ACTIVITY_TEXT[activity]} (share of the peak still "
                   "resident)", why_memory_back,
                   [cond(activity, mode) for mode in data.memory_back_modes], ("spans",))
            for activity in ACTIVITIES]


def mib_text(v):
    return f"{fmt(v['after_mib'], 1)} of {fmt(v['peak_mib'], 1)} MiB"


def why_memory_back(data, v):
    activity = v.target.conds[0].measure.split("/")[1]
    parts = []
    for c in v.checks:
        if c.ok:
            continue
        mode = c.cond.measure.split("/")[2]
        ours = data.memory_back.get((activity, mode, STA_MALLOC_ROW))
        text = f"{mode}: libsta_malloc.so keeps {pct(c.value)} of its peak"
        if ours is not None:
            text += f" ({mib_text(ours)})"
        if c.figure.variant is None:
            parts.append(text + ", and no general-purpose peer was measured")
            continue
        theirs = data.memory_back[(activity, mode, c.figure.variant)]
        parts.append(text + f", the best peer {pretty(c.figure.variant)} "
                     f"{pct(c.figure.value)} ({mib_text(theirs)})")
    return "; ".join(parts) + " (RSS over the program's baseline; every allocator in the " \
        "memory-given-back table)."


def peers_text(data):
    """The general-purpose peers measured: Debian's and the extra ones, those not skipped."""
    return peer_list(preloaded(data))


def method(data):
    setup = data.memory_back_setup
    return [
        "- **memory given back** (`bench/programs/run_memory_back.sh`, issue 24): "
        f"`bench/programs/memory_back.cpp` allocates {setup['mib']} MiB in blocks of 16 B to "
        "4 KiB, writing each, frees them as its mode says, then keeps working for "
        f"{setup['activity_ms']} ms — *light*: {setup['blocks_per_ms'].get('light', 'n/a')} "
        f"blocks a millisecond, *busy*: {setup['blocks_per_ms'].get('busy', 'n/a')} — "
        "allocated, written and freed; one process per run under glibc, "
        f"{peer_list(preloaded(data) + ['libsta_malloc.so'])} (`LD_PRELOAD`), "
        "rounds interleaved. RSS = RssAnon over the program's baseline (the lowest of the "
        "allocators' RssAnon before the first block: what an allocator has resident by then "
        "is its own, not the program's). The "
        "target: libsta_malloc's share of the peak still resident at the end at or below "
        "the best general-purpose peer's in every mode. libsta_malloc.so is the span layout: "
        "judged there."]


def render(data):
    setup = data.memory_back_setup
    runs = sorted({v["runs"] for v in data.memory_back.values()})
    allocs = ["malloc"] + preloaded(data) + [STA_MALLOC_ROW]
    lines = [
        "## Memory given back after a big free (RSS)", "",
        "From `bench/programs/run_memory_back.sh` (issue 24): `bench/programs/memory_back.cpp`, "
        "a plain malloc/free program with nothing of sta-pool's, allocates "
        f"{setup['mib']} MiB in blocks of 16 B to 4 KiB (log-uniform sizes, every block "
        "written), frees as its mode says, then keeps working for "
        f"{setup['activity_ms']} ms, allocating, writing and freeing a few blocks every "
        "millisecond; each run a whole process under glibc (no preload), the peers and "
        "libsta_malloc.so through `LD_PRELOAD`, "
        f"{'/'.join(str(r) for r in runs)} runs per mode, activity and allocator, one of each "
        "allocator per round, the order rotated every round. RSS is RssAnon "
        "(/proc/self/status: the anonymous pages resident, the heap's) over the program's "
        "baseline: the lowest RssAnon before the first block among the allocators (*own "
        "baseline*: each allocator's; mimalloc 3.4.3 and tcmalloc have about 4 MiB of their "
        "own resident before the program's first block, which a baseline of their own would "
        "hide at the peak and credit to them once they purge it): *peak* after the last "
        "block (the tree: before it is "
        "destroyed), *after* at the end of the activity; *after / peak* = the share of the "
        "peak still resident then. Medians over the runs.", "",
        "Modes: " + "; ".join(f"*{m}* = {MODE_TEXT[m]}" for m in data.memory_back_modes) + ".",
        "",
        "*vs the best peer* (libsta_malloc's rows): the best general-purpose peer is the "
        f"lowest share among {peers_text(data)}; the target is libsta_malloc's share at or "
        "below it in every mode (glibc is shown, not judged).", ""]
    measures_ = {m.id: m for m in measures(data, "spans")}
    for activity in ACTIVITIES:
        blocks = setup["blocks_per_ms"].get(activity)
        rows = []
        for mode in data.memory_back_modes:
            c = check(measures_, cond(activity, mode))  # the target's check of this mode
            for a in allocs:
                v = data.memory_back.get((activity, mode, a))
                if v is None:
                    continue
                verdict = ""
                if a == STA_MALLOC_ROW:
                    verdict = "n/a" if c.figure.variant is None else (
                        f"{'met' if c.ok else '**missed**'}: {pct(c.figure.value)} "
                        f"({pretty(c.figure.variant)})")
                rows.append([mode, pretty(a), fmt(v["base_mib"], 1), fmt(v["peak_mib"], 1),
                             fmt(v["after_mib"], 1),
                             pct(v["share"]), verdict])
        lines += [f"### {ACTIVITY_TEXT[activity].capitalize()}: {blocks} blocks a millisecond "
                  "after the frees", "",
                  md_table(["mode", "allocator", "own baseline MiB", "peak MiB", "after MiB",
                            "after / peak",
                            "vs the best peer"], rows), ""]
    return lines

