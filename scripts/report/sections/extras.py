"""Other benchmark programs (extra-PROGRAM.json): the programs added to
bench/CMakeLists.txt that the report does not know, their Google Benchmark output as is."""
import glob
import os

from ..core import md_table, medians, read_json

# The keys of a benchmark entry that are not its counters.
COUNTER_SKIP = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
                "repetitions", "repetition_index", "threads", "aggregate_name", "aggregate_unit",
                "iterations", "real_time", "cpu_time", "time_unit", "error_occurred",
                "error_message", "label"}


def load(data, results):
    """data.extras: [(program, [benchmark entries])], by program name."""
    data.extras = [(os.path.basename(p)[6:-5], list(medians(read_json(p), p).values()))
                   for p in sorted(glob.glob(os.path.join(results, "extra-*.json")))]


def render(data):
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
