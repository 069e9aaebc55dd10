"""A real GUI toolkit's scene on libsta_malloc.so (bench/programs/run_toolkit.sh, issue 38;
toolkit.jsonl): bench/programs/qt_scene.cpp, a plain Qt 6 Widgets program (Debian's Qt, the
offscreen platform), builds, updates and deletes a window of about 19,000 widgets several
times a process; whole processes under glibc, the LD_PRELOAD peers and libsta_malloc.so.
The measure is the CPU time of a process (user + system); the perf shares inside the
allocator and inside the kernel are shown beside it. libsta_malloc.so is the span layout:
judged there only."""
import os
import statistics

from ..core import (PRELOAD_PEERS, STA_MALLOC_ROW, Cond, ReportError, Target, best,
                    checks_text, fmt, fx, make_measure, md_table, missing_rows, pct, peer_list,
                    preloaded, pretty, ratio, read_lines, skipped_note)

SKIP = "toolkit"  # the --skip key: Qt 6 Widgets (qt6-base-dev) or GNU time is not installed
# The target: libsta_malloc's median CPU seconds a process at least TARGET times faster
# than the best peer's (the lowest median among glibc and the LD_PRELOAD peers).
TARGET = 1.03
# The runner's allocator names -> the report's.
NAMES = dict({"glibc": "malloc", "sta": STA_MALLOC_ROW}, **{p: p for p in PRELOAD_PEERS})
# qt_scene's phases, as its JSON line names them.
PHASES = ["startup", "build", "update", "teardown"]
SETUP = ["command", "groups", "scene_rounds", "widgets"]


def share(r, key):
    """A share of perf samples and its runs' (None, None: not sampled), checked."""
    value, runs = r.get(key), r.get(key + "s")
    if value is None:
        return None, None
    value, runs = float(value), [float(x) for x in runs]
    if not (runs and 0 <= min(runs) <= value <= max(runs) <= 1):
        raise ValueError(key)
    return value, runs


def load(data, results):
    """data.toolkit: allocator -> {"cpu", "cpu_min", "cpu_max", "cpus", "seconds", "walls",
    "phases": {phase: s}, "maxrss_kib", "runs", "alloc_share", "alloc_shares",
    "kernel_share", "kernel_shares"}: medians over the runs of the CPU seconds of a process
    (their min and max, and every run's, round by round), of the wall seconds, of
    qt_scene's own CPU seconds per phase and of the peak RSS, and the shares of perf
    samples inside the allocator and the kernel (None: not sampled);
    data.toolkit_setup: {"command", "groups", "scene_rounds", "widgets"} (one each in a file)."""
    data.toolkit, data.toolkit_setup = {}, {}
    if SKIP in data.skips:
        return
    path = os.path.join(results, "toolkit.jsonl")
    setups = set()
    for r in read_lines(path):
        try:
            alloc = NAMES[r["allocator"]]
            row = {f: float(r[f]) for f in ["cpu_seconds", "cpu_min", "cpu_max", "seconds",
                                            "maxrss_kib"]}
            row["runs"] = int(r["runs"])
            row["cpus"] = [float(c) for c in r["cpus"]]
            row["walls"] = [float(w) for w in r["walls"]]
            row["phases"] = {p: float(r["phases"][p]) for p in PHASES}
            row["alloc_share"], row["alloc_shares"] = share(r, "alloc_share")
            row["kernel_share"], row["kernel_shares"] = share(r, "kernel_share")
            setup = (str(r["command"]), int(r["groups"]), int(r["scene_rounds"]),
                     int(r["widgets"]))
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: a malformed toolkit line: {r}") from None
        if (r.get("kind") != "toolkit" or row["runs"] < 1
                or not 0 < row["cpu_min"] <= row["cpu_seconds"] <= row["cpu_max"]
                or len(row["cpus"]) != row["runs"] or len(row["walls"]) != row["runs"]):
            raise ReportError(f"{path}: not a toolkit result (kind, runs, min <= median <= "
                              f"max): {r}")
        if alloc in data.toolkit:
            raise ReportError(f"{path}: {r['allocator']} twice")
        data.toolkit[alloc] = row
        setups.add(setup)
    if len(setups) != 1:
        raise ReportError(f"{path}: several scenes in one run: {sorted(setups)}")
    data.toolkit_setup = dict(zip(SETUP, setups.pop()))


def complete(data):
    """glibc, libsta_malloc.so and every LD_PRELOAD peer not skipped."""
    if SKIP in data.skips:
        return []
    return missing_rows("toolkit scene (toolkit.jsonl)", set(data.toolkit),
                        [STA_MALLOC_ROW, "malloc"] + preloaded(data))


def measures(data, layout):
    """libsta_malloc.so is one build, the same in both layouts."""
    if not data.toolkit:
        return []
    cpu = {a: v["cpu_seconds"] for a, v in data.toolkit.items()}
    return [make_measure("toolkit/cpu", "toolkit scene, Qt 6 Widgets (CPU s per process)", "s",
                         cpu.get(STA_MALLOC_ROW), cpu)]


def targets(data):
    """One, when the section ran (none when it is skipped)."""
    if not data.toolkit:
        return []
    return [Target("toolkit_scene", "the real toolkit's scene (Qt 6 Widgets; CPU time per "
                   "process)", why_toolkit, [Cond("toolkit/cpu", "all", "faster", TARGET,
                                                   "CPU time")], ("spans",))]


def per_round(data, peer):
    """`peer`'s CPU seconds / libsta_malloc's in each round (the two ran seconds apart):
    (median, min, max), or None."""
    ours, theirs = data.toolkit.get(STA_MALLOC_ROW), data.toolkit.get(peer)
    if ours is None or theirs is None or len(ours["cpus"]) != len(theirs["cpus"]):
        return None
    ratios = [t / o for t, o in zip(theirs["cpus"], ours["cpus"]) if o > 0]
    return (statistics.median(ratios), min(ratios), max(ratios)) if ratios else None


def runs_text(data, alloc):
    v = data.toolkit.get(alloc)
    if v is None:
        return f"{pretty(alloc)}: n/a"
    return f"{pretty(alloc)} {v['cpu_seconds']:.3f} s ({v['cpu_min']:.3f}–{v['cpu_max']:.3f})"


def share_range(v, key):
    """'12.3 % (11.9–12.8)' of a row's share, or '–' (not sampled)."""
    if v is None or v[key] is None:
        return "–"
    runs = v[key + "s"]
    text = pct(v[key])
    return text if len(runs) == 1 else \
        f"{text} ({100 * min(runs):.1f}–{100 * max(runs):.1f})"


def why_toolkit(data, v):
    text = checks_text(v)
    best_peer = v.checks[0].figure.variant
    if best_peer is None:
        return text + "."
    ours, theirs = data.toolkit.get(STA_MALLOC_ROW), data.toolkit[best_peer]
    text += f"; the runs' CPU s: {runs_text(data, STA_MALLOC_ROW)}, {runs_text(data, best_peer)}"
    if ours is not None and ours["cpu_min"] <= theirs["cpu_max"] and \
            theirs["cpu_min"] <= ours["cpu_max"]:
        text += " — the two ranges overlap: within this run's noise"
    rounds = per_round(data, best_peer)
    if rounds is not None:
        text += (f"; round by round {pretty(best_peer)} / libsta_malloc = {fx(rounds[0])} "
                 f"({rounds[1]:.2f}–{rounds[2]:.2f})")
    if ours is not None:
        slower = [p for p in PHASES if ours["phases"][p] > theirs["phases"][p]]
        if slower:
            text += "; libsta_malloc's slower phases: " + ", ".join(
                f"{p} {ours['phases'][p]:.3f} s against {theirs['phases'][p]:.3f}"
                for p in slower)
        if ours["alloc_share"] is not None and theirs["alloc_share"] is not None:
            text += (f"; inside the allocator: {pct(ours['alloc_share'])} of libsta_malloc's "
                     f"CPU samples, {pct(theirs['alloc_share'])} of {pretty(best_peer)}'s; in "
                     f"the kernel: {pct(ours['kernel_share'])} and "
                     f"{pct(theirs['kernel_share'])}")
    return text + " (the toolkit table has every allocator's runs)."


def scene_text(data):
    setup = data.toolkit_setup
    rounds = setup["scene_rounds"]
    return (f"{rounds} scene round{'s' if rounds != 1 else ''} a process of "
            f"{setup['groups']} group boxes, {setup['widgets'] // rounds:,} widgets a round")


def method(data):
    if not data.toolkit:
        return []
    return [
        "- **a real toolkit** (`bench/programs/run_toolkit.sh`, issue 38): "
        "`bench/programs/qt_scene.cpp`, a plain Qt 6 Widgets program (Debian's Qt 6, "
        f"`QT_QPA_PLATFORM=offscreen`; {scene_text(data)}) as whole processes under glibc, "
        f"{peer_list(preloaded(data) + ['libsta_malloc.so'])} (`LD_PRELOAD`), rounds "
        "interleaved, output oracle; CPU time per process (user + system), qt_scene's own "
        "CPU time per phase, peak RSS, and perf's shares of the samples inside the allocator "
        "and in the kernel. The target: libsta_malloc's CPU time ≥ "
        f"{TARGET:g}× the best peer's (glibc among them). libsta_malloc.so is the span "
        "layout: judged there."]


def render(data):
    lines = ["## A real toolkit: a Qt 6 Widgets scene on libsta_malloc.so (LD_PRELOAD)", ""]
    if SKIP in data.skips:
        return lines + skipped_note(data, SKIP)
    setup = data.toolkit_setup
    runs = sorted({v["runs"] for v in data.toolkit.values()})
    measure = measures(data, "spans")[0]
    every = best(measure, "all")
    glibc = best(measure, "glibc")
    ours = data.toolkit.get(STA_MALLOC_ROW)
    lines += [
        "From `bench/programs/run_toolkit.sh` (issue 38): `bench/programs/qt_scene.cpp`, a "
        "plain Qt 6 Widgets program with nothing of sta-pool's, on Debian's Qt 6 with the "
        "offscreen platform (no X server: the rendering goes to memory). Each scene round "
        "builds a window — a QScrollArea of group boxes in a grid, each holding a QGridLayout "
        "of 14 rows (QLabel, QLineEdit, QCheckBox, QPushButton) and three QFrames of six "
        "QLabels — shows it, lets Qt lay it out and polish it and renders four stretches of "
        "it into a QPixmap; updates it (every label and line edit a new text, every check "
        "box toggled, every 16th button and every 32nd group box a style sheet of its own, "
        "laid out and rendered again); then deletes it: "
        f"`{setup['command']}`, {scene_text(data)}, all on the main thread (Qt's own thread "
        "pool takes a part of the rendering). Each run is a whole process under glibc (no "
        "preload), the peers and libsta_malloc.so through `LD_PRELOAD`; "
        f"{'/'.join(str(r) for r in runs)} timed runs per allocator, one of each allocator "
        "per round, the order rotated every round; every run's scene (widgets made, the "
        "characters of the labels' texts, check boxes checked, laid-out sizes, pixels "
        "rendered) equals the glibc run's.", "",
        "*CPU s*: user + system seconds of the process, every thread (wait4), the median of "
        "its runs (min–max beside it): the measure judged; CPU time counts no time spent "
        "waiting for a core, so it moves less than wall time when another process runs. "
        "*build / update / teardown / startup*: qt_scene's own CPU seconds in each phase "
        "(its scene rounds summed; startup = the dynamic loader, QApplication and the fonts, "
        "before the first round), medians. *× vs glibc* and *best peer / this*: their "
        "median CPU s / this row's (above 1: this row is faster); the best peer is the "
        f"fastest of glibc and {peer_list(preloaded(data))}. *In allocator*: the share of "
        "perf's CPU samples (cpu-clock, every thread) inside the allocator — any function of "
        "the peer's library or of libsta_malloc, glibc's malloc functions in libc.so; *in "
        "kernel*: the share in the kernel (page faults, Qt's event-loop wake-ups, futexes, "
        "mmap); each the median of the sampled runs (their range beside it).", ""]
    if every.variant is None or ours is None:
        verdict = "n/a (no rows of libsta_malloc or of the peers)"
    else:
        ok = every.speedup is not None and every.speedup >= TARGET
        rounds = per_round(data, every.variant)
        verdict = (f"{'met' if ok else '**missed**'}: {runs_text(data, STA_MALLOC_ROW)} "
                   f"against the best peer, {runs_text(data, every.variant)}: "
                   f"{fx(every.speedup)}")
        if rounds is not None:
            verdict += (f"; round by round {fx(rounds[0])} "
                        f"({rounds[1]:.2f}–{rounds[2]:.2f})")
        verdict += f"; {fx(glibc.speedup)} vs glibc"
    lines += [f"Target *the real toolkit's scene ≥ {TARGET:g}× the best peer (CPU time per "
              f"process)*: {verdict}.", ""]
    allocs = ["malloc"] + preloaded(data) + [STA_MALLOC_ROW]
    rows = []
    for a in allocs:
        v = data.toolkit.get(a)
        if v is None:
            continue
        ph = v["phases"]
        rows.append([pretty(a), f"{v['cpu_seconds']:.3f}",
                     f"{v['cpu_min']:.3f}–{v['cpu_max']:.3f}", int(v["runs"]),
                     fx(ratio(glibc.value, v["cpu_seconds"])),
                     fx(ratio(every.value, v["cpu_seconds"])),
                     f"{ph['build']:.3f}", f"{ph['update']:.3f}", f"{ph['teardown']:.3f}",
                     f"{ph['startup']:.3f}", f"{v['seconds']:.3f}",
                     fmt(v["maxrss_kib"] / 1024, 1),
                     share_range(v, "alloc_share"), share_range(v, "kernel_share")])
    lines += [md_table(["allocator", "CPU s", "min–max s", "runs", "× vs glibc",
                        "best peer / this", "build s", "update s", "teardown s", "startup s",
                        "wall s", "peak RSS MiB", "in allocator", "in kernel"], rows), ""]
    if not any(v["alloc_share"] is not None for v in data.toolkit.values()):
        lines += ["The shares of samples were not measured in this run (`PERF_RUNS=0`, or "
                  "`perf record` was not permitted: see the report's log).", ""]
    return lines
