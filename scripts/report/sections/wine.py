"""Under wine (issues 7, 15, 28): the Windows benchmarks, cross-built with mingw-w64 g++
and with clang. wine.jsonl: the per-thread pool against the seed's mode and the Windows
heaps, for each compiler — the get paths at 32 B and the scenarios
(bench/windows/paths_benchmark.cpp) and the boxed values (bench/com_box_benchmark.cpp),
one line per row and repetition, several processes per compiler interleaved; wine.md and
com.md: the tiers and COM creation tables as the g++ programs print them; wine.version.
Judged on the span layout only: the per-thread pool is the span layout's."""
import os
import statistics

from ..core import (SEED_ROW, Cond, Measure, ReportError, Target, checks_text, fmt, fx,
                    md_table, pretty, read_lines, read_text, skipped_note, slug)

SKIP = "wine"  # the --skip key: mingw-w64 or wine is not installed

# The compiler whose build every Windows user of the project has (and the tiers and COM
# creation tables come from); the others are reported when present.
MAIN_COMPILER_PREFIX = "g++"
POOL = "sta-spans"  # the span layout in threads::per_thread: sta::memory_pool
PATTERNS = ["fresh", "pure_get", "balanced"]
MODES = ["ct", "rt"]
SCENARIOS = ["tree", "gui"]
PEERS = ["malloc", "HeapAlloc"]  # the Windows heaps of the get paths (malloc: msvcrt's)
BOXES = ["box/bool", "box/int32"]
BOX_ROWS = {"box/bool": ["pointer", "static-box", POOL, SEED_ROW, "heap-box"],
            "box/int32": ["pointer", POOL, "heap-box"]}
# The peers' names in the report's measures: distinct from Linux's glibc rows.
PEER_NAME = {"malloc": "msvcrt malloc", "HeapAlloc": "HeapAlloc", "heap-box": "heap box"}
ROW_TEXT = {POOL: "per-thread pool (`sta::memory_pool`)",
            SEED_ROW: "seed mode (`threads::one_owner`)",
            "malloc": "malloc (msvcrt)", "HeapAlloc": "HeapAlloc (process heap)",
            "pointer": "a pointer the caller holds (no boxing)",
            "static-box": "`sta::com::box(bool)`: a static box",
            "heap-box": "heap box, interlocked count (`box_value`'s shape)"}
WITHIN_SEED = 1.15
HEAP_BOX_FASTER = 10.0


def load(data, results):
    """data.wine: {"version", "tiers", "com", "figures": (compiler, measure, allocator) ->
    {"median", "min", "max", "n", "unit"}} over every repetition of every process; None
    when skipped."""
    if SKIP in data.skips:
        data.wine = None
        return

    def path(name):
        return os.path.join(results, name)

    values = {}
    jsonl = path("wine.jsonl")
    for r in read_lines(jsonl):
        try:
            key = (r["compiler"], r["measure"], r["allocator"])
            value, unit = float(r["value"]), r["unit"]
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{jsonl}: a malformed wine line: {r}") from None
        if r.get("kind") != "wine" or value <= 0:
            raise ReportError(f"{jsonl}: not a wine result: {r}")
        values.setdefault(key, ([], unit))[0].append(value)
    data.wine = {
        "version": read_text(path("wine.version")).strip(),
        "tiers": read_text(path("wine.md")), "com": read_text(path("com.md")),
        "figures": {k: {"median": statistics.median(v), "min": min(v), "max": max(v),
                        "n": len(v), "unit": unit} for k, (v, unit) in values.items()}}


def compilers(data):
    """The compilers of wine.jsonl, g++ first."""
    found = sorted({c for c, _, _ in data.wine["figures"]})
    return sorted(found, key=lambda c: not c.startswith(MAIN_COMPILER_PREFIX))


def expected_rows():
    """(measure, allocator) that every compiler's results hold."""
    rows = []
    for p in PATTERNS:
        for m in MODES:
            rows += [(f"get/{p}/{m}/32", a) for a in [POOL, SEED_ROW]]
        rows += [(f"get/{p}/rt/32", a) for a in PEERS]
    rows += [(f"scenario/{s}", a) for s in SCENARIOS for a in [POOL, SEED_ROW, "malloc"]]
    rows += [(b, a) for b in BOXES for a in BOX_ROWS[b]]
    return rows


def complete(data):
    if data.wine is None:
        return []
    found = compilers(data)
    if not any(c.startswith(MAIN_COMPILER_PREFIX) for c in found):
        return [f"wine (wine.jsonl): no results of {MAIN_COMPILER_PREFIX}"]
    problems = []
    for c in found:
        missing = [f"{a} {m}" for m, a in expected_rows()
                   if (c, m, a) not in data.wine["figures"]]
        if missing:
            problems.append(f"wine, {c} (wine.jsonl): no rows of {', '.join(missing)}")
    return problems


def measure_text(measure):
    """"get/pure_get/rt/32" -> "32 B pure_get rt"; "scenario/tree" -> "scenario tree"."""
    parts = measure.split("/")
    if parts[0] == "get":
        return f"{parts[3]} B {parts[1]} {parts[2]}"
    if parts[0] == "box":
        return f"{parts[1]} pool box"
    return " ".join(parts)


def measures(data, layout):
    """wine/<compiler>/<measure>: ours = the per-thread pool's median, the others the seed
    mode's (SEED_ROW, the group "seed mode") and the Windows heaps' (PEER_NAME)."""
    if data.wine is None:
        return []
    figures = data.wine["figures"]
    out = []
    for c in compilers(data):
        for m in sorted({m for c_, m, _ in figures if c_ == c}):
            ours = figures.get((c, m, POOL))
            if ours is None:
                continue
            others = {SEED_ROW if a == SEED_ROW else PEER_NAME.get(a, a): f["median"]
                      for (c_, m_, a), f in figures.items()
                      if c_ == c and m_ == m and a not in (POOL, "pointer", "static-box")}
            out.append(Measure(f"wine/{slug(c)}/{m}", f"wine, {c}: {measure_text(m)}",
                               ours["unit"], ours["median"] if layout == "spans" else None,
                               others))
    return out


def targets(data):
    if data.wine is None:
        return []
    out = []
    for c in compilers(data):
        s = slug(c)
        out += [
            Target(f"wine_{s}_get", f"wine, {c}: per-thread vs seed mode, 32 B get paths",
                   why_seed, [Cond(f"wine/{s}/get/{p}/{m}/32", "seed mode", "within",
                                   WITHIN_SEED, f"{p} {m}")
                              for p in PATTERNS for m in MODES], ("spans",)),
            Target(f"wine_{s}_scenario", f"wine, {c}: per-thread vs seed mode, scenarios",
                   why_seed, [Cond(f"wine/{s}/scenario/{x}", "seed mode", "within",
                                   WITHIN_SEED, x) for x in SCENARIOS], ("spans",)),
            Target(f"wine_{s}_box", f"wine, {c}: pool box, per-thread vs seed mode", why_seed,
                   [Cond(f"wine/{s}/box/bool", "seed mode", "within", WITHIN_SEED)],
                   ("spans",)),
            Target(f"wine_{s}_heap_box", f"wine, {c}: pool box vs the interlocked heap box",
                   why_heap_box, [Cond(f"wine/{s}/{b}", "heap box", "faster", HEAP_BOX_FASTER,
                                       b.split("/")[1]) for b in BOXES], ("spans",))]
    return out


def why_seed(data, v):
    return (checks_text(v) + ". The per-thread pool reads its thread's slot on every call "
            "(os/thread_slot.hpp: with g++ a TLS index read from the TEB, with clang native "
            "TLS) where the seed's mode has a constant address; the wine tables give each "
            "figure's min–max over the repetitions.")


def why_heap_box(data, v):
    return (checks_text(v) + ". Both boxes include the COM call that reads the value (the "
            "pointer row of the boxed-values table); the heap box's extra cost is the heap "
            "and its interlocked count.")


def spread(f):
    return f"{fmt(f['median'])} ({fmt(f['min'])}–{fmt(f['max'])})"


def compiler_table(data, c):
    """The get paths and the scenarios of compiler `c`: every row, median (min–max)."""
    figures = data.wine["figures"]
    measures_of_c = ([f"get/{p}/{mode}/32" for p in PATTERNS for mode in MODES] +
                     [f"scenario/{s}" for s in SCENARIOS])
    columns = [POOL, SEED_ROW] + PEERS
    rows = []
    for m in measures_of_c:
        ours, seed = figures.get((c, m, POOL)), figures.get((c, m, SEED_ROW))
        cells = [spread(figures[(c, m, a)]) if (c, m, a) in figures else "—" for a in columns]
        rows.append([measure_text(m), ours["unit"] if ours else ""] + cells +
                    [fx(seed and ours and ours["median"] / seed["median"])])
    return md_table(["measure", "unit"] + [ROW_TEXT[a] for a in columns] +
                    ["per-thread / seed"], rows)


def box_table(data, c):
    figures = data.wine["figures"]
    rows = []
    for b in BOXES:
        base = figures[(c, b, "pointer")]["median"]
        for a in BOX_ROWS[b]:
            f = figures[(c, b, a)]
            rows.append([b.split("/")[1], ROW_TEXT[a], spread(f), fx(f["median"] / base)])
    return md_table(["argument", "box", "ns per call: median (min–max)",
                     "ratio to passing a pointer"], rows)


def render(data):
    lines = ["## Under wine: the per-thread pool, the tiers and COM", ""]
    if data.wine is None:
        return lines + skipped_note(data, SKIP)
    w = data.wine
    runs = {c: w["figures"][(c, "scenario/tree", POOL)]["n"] for c in compilers(data)}
    lines += [
        f"Cross-built for Windows x64 and run under {w['version']}: with mingw-w64 g++ (no native TLS: the per-thread pool reads its "
        "thread's slot from the TEB, os/thread_slot.hpp) and with clang against the same "
        "headers and libraries (native TLS), Release. Wine's heap is not Microsoft's: these "
        "figures say how the pool fares on wine, not on Windows (docs/windows.md).", "",
        "### The per-thread pool against the seed's mode and the Windows heaps", "",
        "From `bench/windows/paths_benchmark.cpp`: every allocation and free of the get paths "
        "is a call to a function the compiler does not inline, so no loop reads the thread's "
        "slot once for many calls; the scenarios are bench/scenarios.hpp's tree and GUI scene. "
        "Figures: median (min–max) over every repetition of every process (the processes of "
        "the compilers interleaved; repetitions: " +
        ", ".join(f"{c} {n}" for c, n in runs.items()) + "). The targets allow "
        f"{WITHIN_SEED:g}× the seed's mode.", ""]
    for c in compilers(data):
        lines += [f"#### {c}", "", compiler_table(data, c), ""]
    lines += [
        "### Boxed values: the static `true` / `false` and pool boxes against the heap box", "",
        "From `bench/com_box_benchmark.cpp` (method and limits in [com_box.md](com_box.md)): "
        "a COM method that reads an `IReference<T>*` argument, the box made per call and "
        "released after it, against passing a pointer the caller already holds. The pool box "
        "of `bool` comes from `sta::memory_pool` (per thread) and from a seed-mode pool; the "
        f"target asks the pool box ≥ {HEAP_BOX_FASTER:g}× faster than the heap box.", ""]
    for c in compilers(data):
        lines += [f"#### {c}", "", box_table(data, c), ""]
    return lines + [
        "### The tiers against the Windows heaps (g++)", "",
        "From `bench/windows/tiers_benchmark.cpp`.", "", w["tiers"].rstrip(), "",
        "### COM object creation: the activation slot against CoCreateInstance (g++)", "",
        "From `bench/com_benchmark.cpp` (method in [lazy_slot.md](lazy_slot.md)).", "",
        w["com"].rstrip(), ""]


def method(data):
    if data.wine is None:
        return []
    return ["- Under wine: the Windows programs are self-timed (QueryPerformanceCounter, "
            "rows interleaved in every repetition); each compiler's programs run in several "
            "processes, alternating with the other compiler's, and a figure is the median "
            "of all their repetitions, shown with its min–max."]
