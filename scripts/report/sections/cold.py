"""Cold start (bench/process_benchmark.cpp cold; cold.jsonl): 10^6 × 32 B allocated and
first-touched in a fresh process."""
import os

from ..core import (Cond, Target, dispatch_rows, fmt, fx, make_measure, md_table, median_by,
                    missing_rows, preloaded, pretty, ratio, read_lines)

MAIN = ["cold"]  # the main table's row


def load(data, results):
    """data.cold: allocator -> ns per block; data.cold_faults: allocator -> minor faults
    (medians over processes)."""
    path = os.path.join(results, "cold.jsonl")
    rows = read_lines(path)
    data.cold = median_by(rows, lambda r: r["allocator"], "ns_per_block", path)
    data.cold_faults = median_by(rows, lambda r: r["allocator"], "minor_faults", path)


def complete(data):
    return missing_rows("cold start (cold.jsonl)", set(data.cold),
                        dispatch_rows(data) + preloaded(data))


def measures(data, layout):
    return [make_measure("cold", "cold start, 10^6 × 32 B allocated + touched (ns per block)",
                         "ns", data.cold.get(data.row(layout)), data.cold)]


def targets(data):
    return [Target("cold", "cold start", why_cold, [Cond("cold", "all", "faster", 2.0)])]


def why_cold(data, v):
    peer = v.checks[0].figure
    if v.layout == "spans":
        pre = data.cold.get("sta-spans+prefault")
        return (f"page faults dominate: {fmt(data.cold_faults.get(v.row), 0)} minor faults for "
                f"{fmt(peer.ours)} ns per block, the same first-touch cost every peer pays. The "
                f"span layout with set_prefault(true) measured {fmt(pre)} ns per block "
                f"({fx(ratio(peer.value, pre))} vs {pretty(peer.variant)}): see the cold-start "
                "table.")
    pop = data.cold.get("sta+thp-populate-2M")
    return (f"page faults dominate: {fmt(data.cold_faults.get(v.row), 0)} minor faults "
            f"for {fmt(peer.ours)} ns per block with the default 1 MiB pages, the same "
            f"first-touch cost every peer pays. 2 MiB pages with MADV_HUGEPAGE + "
            f"MADV_POPULATE_WRITE measured {fmt(pop)} ns per block "
            f"({fx(ratio(peer.value, pop))} vs {pretty(peer.variant)}): see the cold-start "
            "table; this layout has no prefault option (the span layout has set_prefault).")


def method(data):
    return [
        "- **cold start** (`bench/process_benchmark.cpp cold`): a fresh process allocates and "
        "first-touches 1,000,000 × 32 B; median of 5 processes."]


def render(data):
    rows = [[pretty(a), fmt(v), fmt(data.cold_faults.get(a), 0)]
            for a, v in sorted(data.cold.items(), key=lambda kv: kv[1])]
    return ["## Cold start: 10^6 × 32 B in a fresh process (ns per block, median of 5)", "",
            "`sta+...` rows are the default pool with another page source swapped in (an "
            "experiment; the pool itself maps plain 1 MiB pages): `populate` = MAP_POPULATE, "
            "`thp-2M` = 2 MiB pages aligned to 2 MiB with madvise(MADV_HUGEPAGE), "
            "`thp-populate-2M` = the same plus madvise(MADV_POPULATE_WRITE).", "",
            md_table(["allocator", "ns per block", "minor faults"], rows), ""]
