"""Unchanged programs on libsta_malloc.so (bench/programs/run_programs.sh, issue 16;
programs.jsonl): Debian's binaries as whole processes under glibc, the peers and
libsta_malloc.so (LD_PRELOAD), and libsta_malloc.so with its release checks off against
it (issue 27). libsta_malloc.so is the span layout: judged there only."""
import math
import os
import statistics

from ..core import (DEBIAN_PEERS, GROUPS, PRELOAD_PEERS, STA_MALLOC_HARDENED_ROW,
                    STA_MALLOC_ROW, STA_MALLOC_UNCHECKED_ROW, Cond, Measure, ReportError, Target, best,
                    checks_text, extra_peers, fmt, fx, is_pool, make_measure, md_table,
                    missing_rows, peer_list, preloaded, pretty, ratio, read_lines,
                    skipped_note, slug)

SKIP = "programs"  # the --skip key: a program is not installed
# A program counts as allocator-bound when glibc's median takes at least ALLOC_BOUND times
# the best general-purpose peer's: then the allocator visibly decides its time.
ALLOC_BOUND = 1.15
# Release checks within the noise (issue 27): libsta_malloc.so with its checks off takes
# at least CHECKS_NOISE times the wall time of the checks-on run of the same round, in the
# median round (the bound the programs that are not allocator-bound take as the noise).
CHECKS_NOISE = 0.97
# The hardened library (issue 41): at least HARDENED_SPEED times the default library's
# speed (its wall time / the hardened one's), the geometric mean over the programs of
# each program's median round.
HARDENED_SPEED = 0.91  # at most 10 % slower: 1 / 1.1, rounded up
# A small program (issue 38; the runner's name ends with SMALL): its peak RSS at most
# mimalloc 3.4.3's and at most glibc's + SMALL_OVER_GLIBC KiB; its time is not judged.
SMALL = " (small)"
SMALL_OVER_GLIBC = 2048
# A program's start-up (bench/programs/start_up.cpp, issue 38): the allocator-bound
# programs' targets, with at least START_UP_SPEED times the best peer's speed.
START_UP = "start_up "
START_UP_SPEED = 1.3
# The program runner's allocator names -> the report's ("sta-unchecked": the same
# libsta_malloc.so with STA_MALLOC_CHECKS=0).
PROGRAM_NAMES = dict({"glibc": "malloc", "sta": STA_MALLOC_ROW,
                      "sta-unchecked": STA_MALLOC_UNCHECKED_ROW,
                      "sta-hardened": STA_MALLOC_HARDENED_ROW},
                     **{p: p for p in PRELOAD_PEERS})


def load(data, results):
    """data.programs: (allocator, program) -> {"seconds", "min", "max", "cpu_seconds",
    "maxrss_kib", "runs", "walls", "alloc_share", "alloc_shares"}: medians over runs (wall
    seconds, min and max of them; CPU seconds; peak RSS), every run's wall seconds, round by
    round, and the share of perf samples inside the allocator (None: not sampled);
    data.program_list in the runner's order; data.program_threads, the multi-threaded ones."""
    data.programs, data.program_list, data.program_threads = {}, [], set()
    if SKIP in data.skips:
        return
    path = os.path.join(results, "programs.jsonl")
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
        if (alloc, program) in data.programs:
            raise ReportError(f"{path}: {program} on {r['allocator']} twice")
        data.programs[(alloc, program)] = row
        if program not in data.program_list:
            data.program_list.append(program)
        if threaded:
            data.program_threads.add(program)


def complete(data):
    """glibc, libsta_malloc.so and every LD_PRELOAD peer not skipped. The checks-off rows
    are not required: a programs.jsonl from before issue 27 has none, and then the section
    says so and the release checks' target is missed for want of them."""
    return [p for program in data.program_list
            for p in missing_rows(f"program {program} (programs.jsonl)",
                                  {a for a, p_ in data.programs if p_ == program},
                                  [STA_MALLOC_ROW, "malloc"] + preloaded(data))]


def measures(data, layout):
    """libsta_malloc.so is one build, the same in both layouts."""
    out = []
    for p in data.program_list:
        seconds = {a: v["seconds"] for (a, p_), v in data.programs.items() if p_ == p}
        rss = {a: v["maxrss_kib"] for (a, p_), v in data.programs.items() if p_ == p}
        out.append(make_measure(f"program/{p}", f"program {p} (wall s)", "s",
                                seconds.get(STA_MALLOC_ROW), seconds))
        out.append(make_measure(f"program_rss/{p}", f"program {p} peak RSS", "KiB",
                                rss.get(STA_MALLOC_ROW), rss))
        # The checks' cost: each round's checks-on wall time is the unit (ours = 1), the
        # checks-off row's figure its wall time in that unit, the median over rounds; so
        # the "faster" bound takes checks off / on, round by round. (Built here, not by
        # make_measure, which leaves the pool's own rows out of the others.)
        rounds = per_round(data, p, STA_MALLOC_UNCHECKED_ROW)
        out.append(Measure(f"checks/{p}", f"program {p}: checks off / on, round by round", "×",
                           1.0 if rounds else None,
                           {STA_MALLOC_UNCHECKED_ROW: rounds[0]} if rounds else {}))
    out.append(Measure("hardened/programs", "the hardened library's speed / the default's "
                       "(geometric mean of the programs, round by round)", "×",
                       hardened_speed(data), {}))
    return out


def hardened_speed(data):
    """The geometric mean over the programs of the default library's wall time / the
    hardened one's, each program's median round (None when a program has no hardened row)."""
    rounds = [per_round(data, p, STA_MALLOC_HARDENED_ROW) for p in timed(data)]
    if not rounds or None in rounds:
        return None
    return geomean([1 / r[0] for r in rounds])


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


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
    slow spell of the machine hits both): the median, min and max, or None. `peer` may be
    STA_MALLOC_UNCHECKED_ROW: then checks off / on."""
    ours, theirs = data.programs.get((STA_MALLOC_ROW, program)), data.programs.get((peer, program))
    if ours is None or theirs is None or len(ours["walls"]) != len(theirs["walls"]):
        return None
    ratios = [t / o for t, o in zip(theirs["walls"], ours["walls"]) if o > 0]
    return (statistics.median(ratios), min(ratios), max(ratios)) if ratios else None


def allocator_bound(data, program):
    spread = program_spread(data, program)
    return spread is not None and spread >= ALLOC_BOUND


def is_small(program):
    """A small program (" (small)" in the runner's name): its peak RSS is what is judged."""
    return program.endswith(SMALL)


def timed(data):
    """The programs whose time is judged: every one but the small ones."""
    return [p for p in data.program_list if not is_small(p)]


def program_target(data, program):
    """The multi-threaded one: >= 1.0x the best peer (whatever its spread); the other
    allocator-bound ones: >= 1.05x the best peer (the start-up program: START_UP_SPEED)
    and >= 1.3x glibc; the rest >= 0.97x the best peer (no loss beyond the noise); every
    one: peak RSS <= 1.2x mimalloc's. A small
    one (issue 38): its peak RSS at most mimalloc 3.4.3's and at most glibc's + SMALL_OVER_GLIBC
    KiB, its time not judged (a few milliseconds)."""
    time_id, rss_id = f"program/{program}", f"program_rss/{program}"
    if is_small(program):
        return Target(f"program_{slug(program)}", f"program {program}", why_small,
                      [Cond(rss_id, "mimalloc3", "within", 1.0, "peak RSS"),
                       Cond(rss_id, "glibc", "kib_over_at_most", SMALL_OVER_GLIBC, "peak RSS")],
                      ("spans",))
    if program in data.program_threads:
        kind = "multi-threaded"
        conds = [Cond(time_id, "all", "faster", 1.0, "time")]
    elif allocator_bound(data, program):
        kind = "allocator-bound"
        conds = [Cond(time_id, "all", "faster",
                      START_UP_SPEED if program.startswith(START_UP) else 1.05, "time"),
                 Cond(time_id, "glibc", "faster", 1.3, "time")]
    else:
        kind = "not allocator-bound"
        conds = [Cond(time_id, "all", "faster", 0.97, "time")]
    return Target(f"program_{slug(program)}", f"program {program} ({kind})", why_program,
                  conds + [Cond(rss_id, "mimalloc", "within", 1.2, "peak RSS")], ("spans",))


def checks_target(data):
    """Release checks within the noise (issue 27): for every program, the checks-off run's
    wall time / the checks-on run's, round by round, median >= CHECKS_NOISE."""
    return Target("release_checks", "release checks within the noise (issue 27; "
                  "libsta_malloc.so's wall time with its checks off / on, in each round, the "
                  "median of the rounds)",
                  why_checks, [Cond(f"checks/{p}", "checks off", "faster", CHECKS_NOISE, p)
                               for p in timed(data)], ("spans",))


def hardened_target(data):
    """The hardened library at least HARDENED_SPEED times the default's speed (issue 41)."""
    return Target("hardened_programs", "the hardened library on the unchanged programs "
                  "(issue 41; libsta_malloc-hardened.so's speed / libsta_malloc.so's, the "
                  "geometric mean of each program's median round)", why_hardened,
                  [Cond("hardened/programs", "default", "at_least", HARDENED_SPEED,
                        "geometric mean")], ("spans",))


def why_hardened(data, v):
    per = []
    for p in timed(data):
        r = per_round(data, p, STA_MALLOC_HARDENED_ROW)
        per.append(f"{p} {fx(r[0]) if r else 'n/a'}")
    return ("hardened / default time, each program's median round: " + ", ".join(per) +
            f" (their geometric mean at most {1 / HARDENED_SPEED:.2f}× asked)")


def targets(data):
    """One a program, the release checks' and the hardened library's (none when there are
    no programs: skipped)."""
    if not data.program_list:
        return []
    return [program_target(data, p) for p in data.program_list] + [checks_target(data),
                                                                    hardened_target(data)]


def runs_text(data, alloc, program):
    v = data.programs.get((alloc, program))
    if v is None:
        return f"{pretty(alloc)}: n/a"
    return f"{pretty(alloc)} {v['seconds']:.3f} s ({v['min']:.3f}–{v['max']:.3f})"


def why_program(data, v):
    program = v.target.conds[0].measure.split("/", 1)[1]
    text = checks_text(v)
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


def why_small(data, v):
    """A small program's peak RSS beside mimalloc 3.4.3's and glibc's."""
    program = v.target.conds[0].measure.split("/", 1)[1]
    rss = [f"{pretty(a)} {fmt(data.programs[(a, program)]['maxrss_kib'] / 1024, 2)} MiB"
           for a in [STA_MALLOC_ROW, "mimalloc3", "malloc"] if (a, program) in data.programs]
    return checks_text(v) + "; peak RSS: " + ", ".join(rss) + "."


def why_checks(data, v):
    """The programs whose checks-off / checks-on ratio is below the bound, or not measured."""
    out = []
    for c in v.checks:
        if c.ok:
            continue
        p = c.cond.name
        if (STA_MALLOC_UNCHECKED_ROW, p) not in data.programs:
            out.append(f"{p}: not measured (programs.jsonl has no sta-unchecked row)")
            continue
        rounds = per_round(data, p, STA_MALLOC_UNCHECKED_ROW)
        text = (f"{p}: {runs_text(data, STA_MALLOC_ROW, p)}, "
                f"{runs_text(data, STA_MALLOC_UNCHECKED_ROW, p)}")
        out.append(text + (f"; round by round checks off / on = {fx(rounds[0])} "
                           f"({rounds[1]:.2f}–{rounds[2]:.2f})" if rounds else
                           "; not as many rounds of the two"))
    return "; ".join(out) + "."


def share_text(v):
    """A program row's share of samples in the allocator: '12.3 %' (or '–')."""
    return "–" if v is None or v["alloc_share"] is None else f"{100 * v['alloc_share']:.1f} %"


def peers_text(data):
    """The general-purpose peers of this run, named: Debian's, then the extra ones present."""
    return peer_list(DEBIAN_PEERS + extra_peers(data))


def method(data):
    return [
        "- **unchanged programs** (`bench/programs/run_programs.sh`, issue 16): Debian's lua5.4, "
        "xmllint, python3, sqlite3 and pigz as whole processes under glibc, "
        f"{peer_list(DEBIAN_PEERS + extra_peers(data) + ['libsta_malloc.so'])} (`LD_PRELOAD`), "
        "and libsta_malloc.so with `STA_MALLOC_CHECKS=0` (its release checks off, issue 27; "
        "compared with the checks on, never a peer), "
        "rounds interleaved, output oracle; wall "
        "time and peak RSS; three small programs (python3 -c pass, lua -e, one sqlite3 "
        "query) judged by their peak RSS alone (issue 38). libsta_malloc.so is the span "
        "layout: its targets are judged there."]


def render(data):
    lines = ["## Unchanged programs on libsta_malloc.so (LD_PRELOAD)", ""]
    if SKIP in data.skips:
        return lines + skipped_note(data, SKIP)
    measures_ = {m.id: m for m in measures(data, "spans")}
    runs = sorted({v["runs"] for v in data.programs.values()})
    lines += [
        "From `bench/programs/run_programs.sh` (issue 16; method in [malloc.md](malloc.md), "
        "\"Measured\"): Debian's own binaries, unchanged, and two small programs of the "
        "project's that free and grow big buffers (`bench/programs/big_buffers.cpp`, plain "
        "malloc / realloc / free), each run a whole process under "
        "glibc (no preload), the peers and libsta_malloc.so through `LD_PRELOAD` (and "
        "libsta_malloc.so with its release checks off: below, \"Release checks on and off\"); "
        f"{'/'.join(str(r) for r in runs)} timed runs per program and allocator, one of each "
        "allocator per round, the order rotated every round; every run's output is "
        "byte-identical to the glibc run's. Time: wall seconds of the process, the median of "
        "its runs (min–max beside it); peak RSS: ru_maxrss, the median. *× vs glibc* and *× vs "
        "the best peer* = their median / libsta_malloc's (above 1: libsta_malloc is faster); "
        f"the best peer is the fastest of glibc, {peers_text(data)}. *Round by "
        "round*: the best peer's time / libsta_malloc's within each round (the two ran "
        "moments apart, so a slow spell of the machine hits both): the median over rounds "
        "and its range, a steadier comparison than two medians on a noisy machine; the "
        "targets take the medians.", "",
        f"**Allocator-bound** (from this run): a program whose time on glibc is at least "
        f"{ALLOC_BOUND:.2f}× the best general-purpose peer's ({peers_text(data)}): "
        "there the allocator visibly decides the time, and the targets ask ≥ 1.05× the best "
        f"peer (the start-up program, issue 38: ≥ {START_UP_SPEED}×) and ≥ 1.3× glibc. Below "
        "that spread the program spends little of its time in malloc, and the target is no "
        "loss beyond the noise (≥ 0.97× the best peer). The multi-threaded program's target "
        "is ≥ 1.0× the best peer, whatever its spread. Peak RSS ≤ 1.2× mimalloc's for every program. A *small* program (issue 38: python3 -c "
        "pass, lua -e, one sqlite3 query; \"(small)\" in its name) is judged by its peak RSS "
        f"alone: at most mimalloc 3.4.3's and at most glibc's + {SMALL_OVER_GLIBC // 1024} MiB "
        "(its few milliseconds are not judged, nor counted in the release checks' and the "
        "hardened library's targets).", ""]
    spread_rows, verdict = [], []
    for p in data.program_list:
        spread = program_spread(data, p)
        general = best(measures_[f"program/{p}"], "general")
        bound = allocator_bound(data, p)
        verdict.append(f"- *{p}*: glibc / {pretty(general.variant) if general.variant else 'n/a'}"
                       f" = {fx(spread)} → " +
                       ("small: its peak RSS is judged" if is_small(p) else
                        f"{'allocator-bound' if bound else 'not allocator-bound'}"
                        f"{' (multi-threaded)' if p in data.program_threads else ''}"))
        t = measures_[f"program/{p}"]
        every = best(t, "all")
        glibc = best(t, "glibc")
        rss = best(measures_[f"program_rss/{p}"], "mimalloc")
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
         "RSS / mimalloc"], spread_rows), ""] + render_checks(data) + [
        "### Every allocator (wall seconds: median, min–max; CPU seconds; peak RSS)", "",
        "CPU seconds (user + system, every thread; the median) count no time spent waiting "
        "for a core, so they move less than wall time when another process runs.", ""]
    allocs = ["malloc"] + DEBIAN_PEERS + extra_peers(data) + [
        STA_MALLOC_ROW, STA_MALLOC_UNCHECKED_ROW, STA_MALLOC_HARDENED_ROW]
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


def render_checks(data):
    """libsta_malloc.so with its release checks on against the same library with them off."""
    lines = ["### Release checks on and off (issue 27)", ""]
    missing = [p for p in timed(data) if (STA_MALLOC_UNCHECKED_ROW, p) not in data.programs]
    if missing == timed(data):
        return lines + [
            "**Not measured**: programs.jsonl has no `sta-unchecked` rows (libsta_malloc.so "
            "with `STA_MALLOC_CHECKS=0`; bench/programs/run_programs.sh runs them since issue "
            "27), so the target *release checks within the noise* is missed for want of them.",
            ""]
    lines += [
        "libsta_malloc.so with its release checks on (the default; the rows above) against "
        "the same library with `STA_MALLOC_CHECKS=0` (the runner's `sta-unchecked`: one more "
        "allocator in the same rounds, timed, checked against the oracle and sampled like "
        "the others, never a peer). *Off / on, round by round*: the checks-off run's wall time "
        "/ the checks-on run's within each round, the median over rounds and its range "
        "(below 1: the checks cost time). Target *release checks within the noise*: that "
        f"median ≥ {CHECKS_NOISE:g} for every program (checks on at most "
        f"{1 / CHECKS_NOISE:.2f}× the checks-off time in the median round).", ""]
    if missing:
        lines += [f"No checks-off rows for {', '.join(missing)}: not measured there, and the "
                  "target is missed for want of them.", ""]
    rows = []
    for p in timed(data):
        on = data.programs.get((STA_MALLOC_ROW, p))
        off = data.programs.get((STA_MALLOC_UNCHECKED_ROW, p))
        rounds = per_round(data, p, STA_MALLOC_UNCHECKED_ROW)
        times = [f"{v['seconds']:.3f} ({v['min']:.3f}–{v['max']:.3f})" if v else "n/a"
                 for v in [on, off]]
        rows.append([p] + times + [
            f"{fx(rounds[0])} ({rounds[1]:.2f}–{rounds[2]:.2f})" if rounds else "n/a",
            f"{share_text(on)} / {share_text(off)}",
            "n/a" if rounds is None else "met" if rounds[0] >= CHECKS_NOISE else "**missed**"])
    return lines + [md_table(
        ["program", "checks on s (min–max)", "checks off s (min–max)",
         "off / on, round by round (median, min–max)", "in allocator, on / off",
         f"≥ {CHECKS_NOISE:g}"], rows), ""]


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
        f"glibc, {peers_text(data)}; *sta / lowest* below 1: libsta_malloc spends "
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
            if not is_pool(a):
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
