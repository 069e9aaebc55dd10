"""The scenarios (bench/scenario_benchmark.cpp; scenario.json, and scenario-PEER.json under
LD_PRELOAD): a nested-container tree and a GUI scene, CPU time per round. Their table
shows each scenario's peak RSS (sections/memory.py) beside."""
from ..core import (SEED_ROW, Cond, Target, dispatch_rows, fmt, is_pool, make_measure,
                    md_table, medians, missing_rows, preload_files, preloaded, pretty,
                    read_json, to_ns, checks_text)

SCENARIOS = ["tree", "gui"]
MAIN = [f"scenario/{s}" for s in SCENARIOS]  # the main table's rows


def load(data, results):
    """data.scenarios: (allocator, scenario) -> µs per round (CPU time)."""
    data.scenarios = {}
    for preload, path in preload_files(results, "scenario", data.skips):
        for run_name, b in medians(read_json(path), path).items():
            parts = run_name.split("/")
            if len(parts) < 3 or parts[0] != "scenario":
                continue
            alloc, scenario = parts[1], parts[2]
            if preload:
                if alloc != "std::allocator":
                    continue
                alloc = preload
            data.scenarios[(alloc, scenario)] = to_ns(b, "cpu_time") / 1e3


def complete(data):
    return missing_rows("scenarios (scenario.json, scenario-PEER.json)",
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
        "std::function handlers and child vectors, built then discarded. CPU time per round."]


def render(data):
    rows = []
    for a in sorted({k[0] for k in data.scenarios}, key=lambda a: (not is_pool(a), a)):
        rt_, rg = data.rss_net.get((a, "tree")), data.rss_net.get((a, "gui"))
        rows.append([pretty(a), fmt(data.scenarios.get((a, "tree"))),
                     fmt(data.scenarios.get((a, "gui"))), fmt(rt_, 0), fmt(rg, 0)])
    return ["## Scenarios (µs per round, CPU time; peak RSS over baseline, KiB)", "",
            md_table(["allocator", "tree", "gui", "tree RSS KiB", "gui RSS KiB"], rows), ""]
