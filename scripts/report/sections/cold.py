"""Cold start (bench/process_benchmark.cpp cold; cold.jsonl): 10^6 × 32 B allocated and
first-touched in a fresh process; and 32 MiB in 4 KiB and in 32 KiB blocks (issue
38: a big class's fresh block and its first write), for the pool's rows and the
general-purpose allocators."""
import os

from ..core import (Cond, Target, checks_text, dispatch_rows, fmt, fx, make_measure, md_table,
                    median_by, missing_rows, preloaded, pretty, ratio, read_lines)

BIG = [4096, 32768]  # the block sizes of the big cold starts
MAIN = ["cold"] + [f"cold/{b}" for b in BIG]  # the main table's rows


def load(data, results):
    """data.cold: allocator -> ns per block at 32 B; data.cold_faults: allocator -> minor
    faults; data.cold_big, data.cold_big_faults: the same keyed (allocator, bytes) for the
    big blocks (medians over processes). A line without "bytes" is of 32 B blocks."""
    path = os.path.join(results, "cold.jsonl")
    rows = read_lines(path)
    small = [r for r in rows if r.get("bytes", 32) == 32]
    big = [r for r in rows if r.get("bytes", 32) != 32]
    data.cold = median_by(small, lambda r: r["allocator"], "ns_per_block", path)
    data.cold_faults = median_by(small, lambda r: r["allocator"], "minor_faults", path)
    data.cold_big = median_by(big, lambda r: (r["allocator"], r["bytes"]), "ns_per_block", path)
    data.cold_big_faults = median_by(big, lambda r: (r["allocator"], r["bytes"]),
                                     "minor_faults", path)


def complete(data):
    missing = missing_rows("cold start (cold.jsonl)", set(data.cold),
                           dispatch_rows(data) + preloaded(data))
    for b in BIG:
        missing += missing_rows(f"cold start of {b} B blocks (cold.jsonl)",
                                {a for (a, b_) in data.cold_big if b_ == b},
                                dispatch_rows(data) + preloaded(data))
    return missing


def measures(data, layout):
    row = data.row(layout)
    return [make_measure("cold", "cold start, 10^6 × 32 B allocated + touched (ns per block)",
                         "ns", data.cold.get(row), data.cold)] + [
        make_measure(f"cold/{b}", f"cold start, 32 MiB in {b} B blocks allocated + touched "
                     "(ns per block)", "ns", data.cold_big.get((row, b)),
                     {a: v for (a, b_), v in data.cold_big.items() if b_ == b}) for b in BIG]


def targets(data):
    return [Target("cold", "cold start", why_cold, [Cond("cold", "all", "faster", 2.0)]),
            Target("cold_big", "cold start of big blocks (issue 38: fresh + first write)",
                   why_cold_big, [Cond(f"cold/{b}", "all", "faster", 1.0, f"{b} B")
                                  for b in BIG])]


def why_cold_big(data, v):
    row = v.row
    faults = ", ".join(f"{b} B {fmt(data.cold_big_faults.get((row, b)), 0)}" for b in BIG)
    return (f"{checks_text(v)}; minor faults of the pool's row: {faults} (each touched "
            "page is a fault for every allocator that maps plain pages).")


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
        "first-touches 1,000,000 × 32 B; median of 5 processes. 32 MiB in 4 KiB and in 32 KiB "
        "blocks (8,192 and 1,024 blocks, one word written in each) for the pool's rows "
        "and the general-purpose allocators."]


def render(data):
    rows = [[pretty(a), fmt(v), fmt(data.cold_faults.get(a), 0)]
            for a, v in sorted(data.cold.items(), key=lambda kv: kv[1])]
    return ["## Cold start: 10^6 × 32 B in a fresh process (ns per block, median of 5)", "",
            "`sta+...` rows are the default pool with another page source swapped in (an "
            "experiment; the pool itself maps plain 1 MiB pages): `populate` = MAP_POPULATE, "
            "`thp-2M` = 2 MiB pages aligned to 2 MiB with madvise(MADV_HUGEPAGE), "
            "`thp-populate-2M` = the same plus madvise(MADV_POPULATE_WRITE).", "",
            md_table(["allocator", "ns per block", "minor faults"], rows), "",
            "### 32 MiB in big blocks (ns per block, median of 5; minor faults)", "",
            md_table(["allocator"] + [f"{b} B" for b in BIG] + [f"faults {b} B" for b in BIG],
                     [[pretty(a)] + [fmt(data.cold_big.get((a, b))) for b in BIG] +
                      [fmt(data.cold_big_faults.get((a, b)), 0) for b in BIG]
                      for a in sorted({a for (a, _) in data.cold_big},
                                      key=lambda a: data.cold_big.get((a, BIG[0]), 0))]), ""]
