"""The field's allocator benchmarks (bench/programs/run_field_suite.py, issue 39;
field_suite.jsonl): mimalloc-bench's programs from ../shared/field-suite, unchanged, with
their upstream arguments, as whole processes under glibc, the LD_PRELOAD peers and
libsta_malloc.so. A program's measure is its own figure where it reports one (throughput
of the fixed-time runs, alloc-test's milliseconds), else its wall seconds; peak RSS beside
it. libsta_malloc.so is the span layout: judged there only."""
import math
import os

from ..core import (PRELOAD_PEERS, STA_MALLOC_HARDENED_ROW, STA_MALLOC_ROW, Cond, ReportError, Target, check, fmt,
                    fx, make_measure, md_table, missing_rows, peer_list, preloaded, pretty,
                    read_lines, skipped_note)

SKIP = "field_suite"  # the --skip key: ../shared/field-suite is not beside the project
# The targets: the geometric mean over the single-threaded programs (ST and 1T) of the
# best peer's figure / libsta_malloc's, the best peer taken program by program, at least
# ST_TARGET; every multi-threaded program at least MT_TARGET against its best peer.
ST_TARGET = 1.1
MT_TARGET = 1.0
# The hardened library (issue 41): at least HARDENED_SPEED times the default library's
# speed (its cost / the hardened one's), the geometric mean over every program.
HARDENED_SPEED = 0.91  # at most 10 % slower: 1 / 1.1, rounded up
# The runner's allocator names -> the report's.
NAMES = dict({"glibc": "malloc", "sta": STA_MALLOC_ROW, "sta-hardened": STA_MALLOC_HARDENED_ROW},
             **{p: p for p in PRELOAD_PEERS})


def load(data, results):
    """data.field: program -> {"thr", "unit", "higher", "rows": {allocator: {"median",
    "min", "max", "values", "rss_kib", "exits"}}}, in the runner's order of programs; a
    peer's failed runs (a crash, a timeout) are its exits, and a peer whose every run
    failed has None for median, min, max and rss_kib."""
    data.field = {}
    if SKIP in data.skips:
        return
    path = os.path.join(results, "field_suite.jsonl")
    for r in read_lines(path):
        try:
            alloc, program = NAMES[r["allocator"]], str(r["program"])
            row = {"values": [float(v) for v in r["values"]],
                   "exits": [int(e) for e in r.get("exits", [])]}
            row.update({f: float(r[f]) if row["values"] else None
                        for f in ["median", "min", "max", "rss_kib"]})
            shape = (str(r["thr"]), str(r["measure"]), bool(r["higher_is_better"]))
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: a malformed field_suite line: {r}") from None
        if (r.get("kind") != "field_suite"
                or (not row["values"] and (not row["exits"] or alloc == STA_MALLOC_ROW))
                or (row["values"] and not 0 < row["min"] <= row["median"] <= row["max"])):
            raise ReportError(f"{path}: not a field_suite result (kind, runs, min <= median "
                              f"<= max > 0; libsta_malloc's runs never fail): {r}")
        entry = data.field.setdefault(program, {"thr": shape[0], "unit": shape[1],
                                                "higher": shape[2], "rows": {}})
        if (entry["thr"], entry["unit"], entry["higher"]) != shape:
            raise ReportError(f"{path}: {program} measured two ways: {r}")
        if alloc in entry["rows"]:
            raise ReportError(f"{path}: {program} on {r['allocator']} twice")
        entry["rows"][alloc] = row


def complete(data):
    """Every program: glibc, libsta_malloc.so and every LD_PRELOAD peer not skipped."""
    if SKIP in data.skips:
        return []
    if not data.field:
        return ["field suite (field_suite.jsonl): no programs"]
    return [p for program, entry in data.field.items() for p in missing_rows(
        f"field suite, {program} (field_suite.jsonl)", set(entry["rows"]),
        ["malloc"] + preloaded(data) + [STA_MALLOC_ROW])]


def cost(entry, alloc):
    """The program's figure on `alloc` as a cost (lower is better): a throughput inverted."""
    row = entry["rows"].get(alloc)
    if row is None or row["median"] is None:
        return None
    return 1 / row["median"] if entry["higher"] else row["median"]


def best_peer(data, entry):
    """(the general-purpose peer with the lowest cost, its cost), or (None, None)."""
    costs = [(cost(entry, p), p) for p in preloaded(data) if cost(entry, p) is not None]
    if not costs:
        return None, None
    value, peer = min(costs)
    return peer, value


def speedup(data, entry):
    """The best peer's cost / libsta_malloc's (> 1: libsta_malloc ahead), or None."""
    _, peer_cost = best_peer(data, entry)
    ours = cost(entry, STA_MALLOC_ROW)
    return None if peer_cost is None or not ours else peer_cost / ours


def single_threaded(entry):
    return entry["thr"] != "MT"


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def st_geomean(data):
    """The geometric mean of speedup() over the single-threaded programs, or None."""
    ratios = [speedup(data, e) for e in data.field.values() if single_threaded(e)]
    return None if not ratios or None in ratios else geomean(ratios)


def hardened_speed(data):
    """The geometric mean over every program of libsta_malloc's cost / the hardened
    library's (None when a program has no hardened figure)."""
    ratios = []
    for entry in data.field.values():
        ours, hardened = cost(entry, STA_MALLOC_ROW), cost(entry, STA_MALLOC_HARDENED_ROW)
        if not ours or not hardened:
            return None
        ratios.append(ours / hardened)
    return geomean(ratios)


def measures(data, layout):
    """libsta_malloc.so is one build, the same in both layouts. field/<program>: the costs;
    field/st_geomean: st_geomean() as ours."""
    if not data.field:
        return []
    out = [make_measure(f"field/{program}", f"field suite, {program} ({entry['unit']})",
                        entry["unit"], cost(entry, STA_MALLOC_ROW),
                        {a: cost(entry, a) for a in entry["rows"]})
           for program, entry in data.field.items()]
    out.append(make_measure("field/st_geomean", "field suite, single-threaded geometric mean "
                            "of best peer / libsta_malloc", "×", st_geomean(data), {}))
    out.append(make_measure("field/hardened", "field suite, libsta_malloc-hardened's speed / "
                            "libsta_malloc's (geometric mean)", "×", hardened_speed(data), {}))
    return out


def targets(data):
    """Two, when the section ran: the single-threaded mean, and each multi-threaded program."""
    if not data.field:
        return []
    mt = [p for p, e in data.field.items() if not single_threaded(e)]
    return [
        Target("field_suite_st", "the field suite, single-threaded programs (geometric mean of "
               "the best peer's figure / libsta_malloc's, program by program)", why_field,
               [Cond("field/st_geomean", None, "at_least", ST_TARGET, "geometric mean")],
               ("spans",)),
        Target("field_suite_mt", "the field suite, each multi-threaded program", why_field,
               [Cond(f"field/{p}", "general", "faster", MT_TARGET, p) for p in mt],
               ("spans",)),
        Target("field_suite_hardened", "the hardened library on the field suite (issue 41; "
               "libsta_malloc-hardened.so's speed / libsta_malloc.so's, the geometric mean of "
               "every program)", why_hardened,
               [Cond("field/hardened", "default", "at_least", HARDENED_SPEED, "geometric mean")],
               ("spans",))]


def why_hardened(data, v):
    per = [f"{program} {fx(cost(e, STA_MALLOC_HARDENED_ROW) / cost(e, STA_MALLOC_ROW))}"
           for program, e in data.field.items()
           if cost(e, STA_MALLOC_HARDENED_ROW) and cost(e, STA_MALLOC_ROW)]
    return ("hardened / default cost: " + ", ".join(per) +
            f" (their geometric mean at most {1 / HARDENED_SPEED:.2f}× asked)")


def why_field(data, v):
    behind = []
    for program, entry in data.field.items():
        ratio = speedup(data, entry)
        if ratio is not None and ratio < 1 and (single_threaded(entry) ==
                                                (v.target.id == "field_suite_st")):
            peer, _ = best_peer(data, entry)
            behind.append(f"{program} {fx(ratio)} of {pretty(peer)}")
    return ("behind: " + ", ".join(behind) if behind else "no program behind its best peer") + \
        " (the field-suite table has every allocator's figures)."


def figure_text(row, unit_higher):
    """'median (min–max)', ↑ for a throughput, and the failed runs' exit statuses."""
    text = "" if row["median"] is None else \
        f"{fmt(row['median'])} ({fmt(row['min'])}–{fmt(row['max'])})" + \
        (" ↑" if unit_higher else "")
    if row["exits"]:
        text += f"{'; ' if text else ''}failed {len(row['exits'])}× (exit " + \
            ", ".join(str(e) for e in row["exits"]) + ")"
    return text


def method(data):
    if not data.field:
        return []
    return [
        "- **the field suite** (`bench/programs/run_field_suite.py`, issue 39): "
        "mimalloc-bench's programs from `../shared/field-suite`, unchanged, with its "
        "`run.sh`'s upstream arguments, as whole processes under glibc, "
        f"{peer_list(preloaded(data) + ['libsta_malloc.so'])} (`LD_PRELOAD`), the order "
        "rotated every round; each program's own figure where it reports one, else its wall "
        "seconds; peak RSS beside it. The targets: the geometric mean over the "
        f"single-threaded programs of the best peer's figure / libsta_malloc's ≥ "
        f"{ST_TARGET:g}×, the best general-purpose peer taken program by program, and each "
        f"multi-threaded program ≥ {MT_TARGET:g}× its best peer. libsta_malloc.so is the "
        "span layout: judged there."]


def render(data):
    lines = ["## The field suite: mimalloc-bench's programs on libsta_malloc.so (LD_PRELOAD)",
             ""]
    if SKIP in data.skips:
        return lines + skipped_note(data, SKIP)
    rounds = sorted({len(r["values"]) for e in data.field.values() for r in e["rows"].values()})
    allocs = ["malloc"] + preloaded(data) + [STA_MALLOC_ROW, STA_MALLOC_HARDENED_ROW]
    geo = st_geomean(data)
    measures_ = {m.id: m for m in measures(data, "spans")}
    st_target, mt_target, _ = targets(data)  # the verdicts the targets table gives
    st_ok = all(check(measures_, c).ok for c in st_target.conds)
    mt_ok = all(check(measures_, c).ok for c in mt_target.conds)
    mt = {p: speedup(data, e) for p, e in data.field.items() if not single_threaded(e)}
    lines += [
        "From `bench/programs/run_field_suite.py` (issue 39): the programs of "
        "mimalloc-bench (`../shared/field-suite`, its README names the upstream commit), "
        "built once by its `build.sh` and run by its `run.sh` with their upstream arguments "
        "(scaled where the suite says), each run a whole process under glibc (no preload), "
        "the peers and libsta_malloc.so through `LD_PRELOAD` (its release checks on), "
        f"{'/'.join(str(r) for r in rounds)} rounds, one run of each allocator and program a "
        "round, the order rotated every round. *thr*: ST a single-threaded process, 1T one "
        "allocating thread in a threaded process, MT threads at once (one a core). The "
        "figure: the program's own where it prints one (↑: a throughput, higher is better: "
        "larson's operations a second, xmalloc-test's frees a second, rptest's operations a "
        "CPU second, glibc-thread's iterations; alloc-test's own milliseconds), else wall "
        "seconds; the median of the rounds (min–max); a peer's run that failed (a crash, "
        "a timeout) is counted beside its figure, which is the median of its other runs. "
        "*best peer / sta*: the best "
        f"general-purpose peer's figure over libsta_malloc's ({peer_list(preloaded(data))}; "
        "above 1: libsta_malloc ahead; glibc is shown, not judged).", "",
        f"Target *single-threaded geometric mean ≥ {ST_TARGET:g}× the best peer*: "
        f"{'met' if st_ok else '**missed**'}: {fx(geo)}. Target *each multi-threaded "
        f"program ≥ {MT_TARGET:g}× its best peer*: {'met' if mt_ok else '**missed**'}: "
        + ", ".join(f"{p} {fx(r)}" for p, r in mt.items()) + ".", ""]
    header = ["program", "thr", "figure"] + [pretty(a).replace(" (LD_PRELOAD)", "")
                                             for a in allocs] + ["best peer", "best peer / sta",
                                                                 "sta peak RSS MiB",
                                                                 "best peer's MiB"]
    rows = []
    for program, entry in data.field.items():
        peer, _ = best_peer(data, entry)
        sta = entry["rows"].get(STA_MALLOC_ROW)
        peer_row = entry["rows"].get(peer) if peer else None
        rows.append([program, entry["thr"], entry["unit"]] + [
            figure_text(entry["rows"][a], entry["higher"]) if a in entry["rows"] else "n/a"
            for a in allocs] + [
            pretty(peer).replace(" (LD_PRELOAD)", "") if peer else "n/a",
            fx(speedup(data, entry)),
            fmt(sta["rss_kib"] / 1024, 1) if sta else "n/a",
            fmt(peer_row["rss_kib"] / 1024, 1) if peer_row else "n/a"])
    lines += [md_table(header, rows), ""]
    st = [speedup(data, e) for e in data.field.values() if single_threaded(e)]
    lines += [f"Single-threaded programs: {len(st)}, geometric mean of best peer / sta "
              f"{fx(geo)}; the median peak RSS of every run is in `field_suite.jsonl`.", ""]
    return lines
