"""The scenarios (bench/scenario_benchmark.cpp; scenario.rN.json, and scenario-PEER.rN.json
under LD_PRELOAD, for each round N of report.sh, whose processes run in turn): a
nested-container tree and a GUI scene, CPU time per round of the scene. Their table shows
each scenario's peak RSS (sections/memory.py) beside."""
import statistics

from ..core import (SEED_ROW, Cond, Target, dispatch_rows, fmt, is_pool, make_measure,
                    md_table, medians, missing_rows, preload_files, preloaded, pretty,
                    read_json, round_files, to_ns, checks_text)

SCENARIOS = ["tree", "gui"]
MAIN = [f"scenario/{s}" for s in SCENARIOS]  # the main table's rows


def load(data, results):
    """data.scenarios: (allocator, scenario) -> µs per round of the scene (CPU time), the
    median over report.sh's rounds of each round's median; data.scenario_runs: the same key
    -> every round's figure."""
    runs = {}
    for preload, path in preload_files(results, "scenario", data.skips):
        for round_path in round_files(path):
            for run_name, b in medians(read_json(round_path), round_path).items():
                parts = run_name.split("/")
                if len(parts) < 3 or parts[0] != "scenario":
                    continue
                alloc, scenario = parts[1], parts[2]
                if preload:
                    if alloc != "std::allocator":
                        continue
                    alloc = preload
                runs.setdefault((alloc, scenario), []).append(to_ns(b, "cpu_time") / 1e3)
    data.scenario_runs = runs
    data.scenarios = {key: statistics.median(v) for key, v in runs.items()}


def complete(data):
    return missing_rows("scenarios (scenario.rN.json, scenario-PEER.rN.json)",
                        {k[0] for k in data.scenarios},
                        dispatch_rows(data) + [SEED_ROW] + preloaded(data))


def per_scenario(data, layout, kind, label, unit, table):
    """A measure a scenario, "KIND/SCENARIO", from `table`: (allocator, scenario) -> figure;
    `label` has "{}" where the scenario's name goes."""
    sta = data.row(layout)
    return [make_measure(f"{kind}/{s}", label.format(s), unit, table.get((sta, s)),
                         {a: v for (a, s_), v in table.items() if s_ == s}) for s in SCENARIOS]


def measures(data, layout):
    return per_scenario(data, layout, "scenario", "scenario {} (µs per round)", "µs",
                        data.scenarios)


def targets(data):
    return [Target(f"scenario_{s}", f"scenario {s}", why_scenario,
                   [Cond(f"scenario/{s}", "glibc", "faster", 1.6),
                    Cond(f"scenario/{s}", "general", "faster", 1.15),
                    Cond(f"scenario/{s}", "bump", "within", 1.15)]) for s in SCENARIOS]


def why_scenario(data, v):
    return (checks_text(v) + ". A whole workload "
            "spends most of its time outside the allocator (string formatting, map compares, "
            "std::function), which caps any allocator's gain; mimalloc's per-size free lists "
            "are as short a path as the pool's on these sizes.")


def method(data):
    return [
        "- **scenario** (`bench/scenario_benchmark.cpp`): *tree* = map<string, vector<node>>, "
        "node = {string, vector<uint32_t>, map<int, string>}, the allocator at every level: "
        "built (4,096 nodes), shaken (a quarter of the keys erased and re-inserted, a quarter of "
        "the vectors regrown) and destroyed; *gui* = 4,000 elements with a name, a property map, "
        "std::function handlers and child vectors, built then discarded. CPU time per round of "
        "the scene: the median of each process's repetitions, then the median over the "
        "report's rounds, in each of which the in-process rows' process and each LD_PRELOAD "
        "peer's run in turn (the table gives the rounds' min–max)."]


def render(data):
    def timed(a, s):
        """'1234 (1200–1300)': the median and the rounds' range, or 'n/a'."""
        runs = data.scenario_runs.get((a, s))
        if not runs:
            return fmt(None)
        if len(runs) == 1:
            return fmt(data.scenarios[(a, s)])
        return f"{fmt(data.scenarios[(a, s)])} ({fmt(min(runs))}–{fmt(max(runs))})"

    rows = []
    for a in sorted({k[0] for k in data.scenarios}, key=lambda a: (not is_pool(a), a)):
        rt_, rg = data.rss_net.get((a, "tree")), data.rss_net.get((a, "gui"))
        rows.append([pretty(a), timed(a, "tree"), timed(a, "gui"), fmt(rt_, 0), fmt(rg, 0)])
    return ["## Scenarios (µs per round, CPU time: median (min–max) over the report's "
            "rounds; peak RSS over baseline, KiB)", "",
            md_table(["allocator", "tree", "gui", "tree RSS KiB", "gui RSS KiB"], rows), ""]
