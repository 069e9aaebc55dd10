"""The heap map (issue 42; bench/programs/run_heap_map.py, heap_map.jsonl and
heap_map_spans.json): bench/programs/lived_heap_map.c ages a heap in 40 waves of
mixed-size blocks, keeps one in seven, and — with the survivors live — says what is
resident, what glibc's mallinfo2 reports, and under libsta_malloc.so writes its
statistics with the heap's spans. The section draws those spans (docs/heap_map.svg,
scripts/report/heap_map_svg.py) beside every allocator's resident memory for the same
program. A picture and figures, no target."""
import json
import os

from ..core import (PRELOAD_PEERS, STA_MALLOC_HARDENED_ROW, STA_MALLOC_ROW, ReportError, fmt,
                    md_table, missing_rows, preloaded, pretty, read_lines, skipped_note)
from ..heap_map_svg import HeapMapError, segments_of
from ..heap_map_svg import render as render_svg

SKIP = "heap_map"
# The runner's allocator names -> the report's.
NAMES = dict({"glibc": "malloc", "sta": STA_MALLOC_ROW, "sta-hardened": STA_MALLOC_HARDENED_ROW},
             **{p: p for p in PRELOAD_PEERS})
SVG_NAME = "heap_map.svg"


def load(data, results):
    """data.heap_map: {allocator: {"rss_kib", "peak_kib", "mallinfo2", "survivor_bytes"}};
    data.heap_map_spans: libsta_malloc's statistics with its spans (a parsed JSON object)."""
    data.heap_map, data.heap_map_spans = {}, None
    if SKIP in data.skips:
        return
    path = os.path.join(results, "heap_map.jsonl")
    for r in read_lines(path):
        try:
            name = NAMES[r["allocator"]]
            row = {"rss_kib": int(r["rss_kib"]), "peak_kib": int(r["peak_kib"]),
                   "survivor_bytes": int(r["survivor_bytes"]),
                   "mallinfo2": {k: int(r["mallinfo2"][k])
                                 for k in ("arena", "uordblks", "fordblks")}}
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: a malformed heap map line: {r}") from None
        if r.get("kind") != "heap_map" or row["rss_kib"] <= 0:
            raise ReportError(f"{path}: not a heap map result: {r}")
        data.heap_map[name] = row
    spans = os.path.join(results, "heap_map_spans.json")
    try:
        with open(spans, encoding="utf-8") as f:
            data.heap_map_spans = json.load(f)
        segments_of(data.heap_map_spans)
    except (OSError, ValueError, HeapMapError) as e:
        raise ReportError(f"{spans}: {e}") from None


def complete(data):
    """glibc, libsta_malloc and every LD_PRELOAD peer not skipped."""
    if SKIP in data.skips:
        return []
    return missing_rows("the heap map (heap_map.jsonl)", set(data.heap_map),
                        ["malloc"] + preloaded(data) + [STA_MALLOC_ROW])


def svg(data):
    """docs/heap_map.svg: libsta_malloc's spans after the waves; None when skipped."""
    if data.heap_map_spans is None:
        return None
    return render_svg(data.heap_map_spans, "libsta_malloc.so after the waves of "
                      "bench/programs/lived_heap_map.c")


def render(data):
    lines = ["## Heap map: a heap that has lived, drawn", ""]
    if SKIP in data.skips:
        return lines + skipped_note(data, SKIP)
    mib = 1 << 20
    rows = []
    survivors = data.heap_map[STA_MALLOC_ROW]["survivor_bytes"] / mib
    shown = [n for n in ["malloc"] + preloaded(data) + [STA_MALLOC_ROW, STA_MALLOC_HARDENED_ROW]
             if n in data.heap_map]
    best = min(data.heap_map[n]["rss_kib"] for n in shown)
    for name in shown:
        v = data.heap_map[name]
        m = data.heap_map[name]["mallinfo2"]
        own = name in ("malloc", STA_MALLOC_ROW, STA_MALLOC_HARDENED_ROW)  # others: glibc's unused
        rows.append([pretty(name), fmt(v["rss_kib"] / 1024, 1), fmt(v["peak_kib"] / 1024, 1),
                     fmt(v["rss_kib"] / best, 2) + "×",
                     fmt(m["uordblks"] / mib, 1) if own else "—",
                     fmt(m["fordblks"] / mib, 1) if own else "—",
                     fmt(m["arena"] / mib, 1) if own else "—"])
    b = data.heap_map_spans.get("bytes", {})
    spans = data.heap_map_spans.get("spans", {})
    return lines + [
        f"40 waves of 20,000 blocks of 16 B to 2 KiB, one in seven kept ({survivors:.1f} MiB "
        "of survivors asked), then a burst of 200,000 small blocks built and dropped; the "
        "figures are taken with the survivors live, one process an allocator. The picture is "
        "libsta_malloc.so's heap at that moment: a row a 2 MiB segment, a cell a 64 KiB span, "
        "coloured by class and shaded by how full it is; grey spans are clean (kept for the "
        "purge delay), white ones purged.",
        "",
        f"![libsta_malloc's heap after the waves]({SVG_NAME})",
        "",
        f"libsta_malloc's own figures: {b.get('in_use', 0) / mib:.1f} MiB in use, "
        f"{b.get('free_in_spans', 0) / mib:.1f} MiB free in spans serving a class, "
        f"{b.get('clean', 0) / mib:.1f} MiB in clean spans, {b.get('held', 0) / mib:.1f} MiB "
        f"held; spans {spans.get('in_use', 0)} in use, {spans.get('clean', 0)} clean, "
        f"{spans.get('purged', 0)} purged.",
        "",
        md_table(["allocator", "resident (MiB)", "peak (MiB)", "resident / least",
                  "mallinfo2 uordblks (MiB)", "fordblks", "arena"], rows),
        "",
        "mallinfo2 is glibc's own under glibc and libsta_malloc's under libsta_malloc.so "
        "(docs/malloc.md, \"Statistics\"); the peers do not answer it.",
    ]

