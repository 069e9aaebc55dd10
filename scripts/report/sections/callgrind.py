"""Instructions per operation at 32 B (scripts/callgrind_counts.sh: callgrind.csv): the get
paths' patterns under valgrind's callgrind, net of the loop."""
import csv
import os

from ..core import (ReportError, dispatch_rows, fmt, is_pool, md_table, missing_rows,
                    pool_rows, preloaded, pretty, read_text, skipped_note)
from .get_paths import PATTERNS

SKIP = "callgrind"  # the --skip key: valgrind is not installed


def load(data, results):
    """data.ir: (allocator, pattern, mode, bytes) -> instructions per op ({} when skipped)."""
    data.ir = {}
    if SKIP in data.skips:
        return
    path = os.path.join(results, "callgrind.csv")
    text = read_text(path)
    for r in csv.DictReader(text.splitlines()):
        try:
            key = (r["allocator"], r["pattern"], r["mode"], int(r["bytes"]))
            data.ir[key] = float(r["instructions_per_op"])
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: malformed row {r}") from None
    if not data.ir:
        raise ReportError(f"{path}: no counts")


def complete(data):
    if not data.ir:
        return []
    return missing_rows("instruction counts (callgrind.csv)", {k[0] for k in data.ir},
                        dispatch_rows(data) + preloaded(data))


def render(data):
    lines = ["## Instructions per operation at 32 B (callgrind, net of the loop)", ""]
    if SKIP in data.skips:
        return lines + skipped_note(data, SKIP)
    ir = data.ir
    rows = []
    for a in sorted({k[0] for k in ir}, key=lambda a: (not is_pool(a), a)):
        for mode in ["ct", "rt"]:
            vals = [ir.get((a, p, mode, 32)) for p in PATTERNS]
            if any(v is not None for v in vals):
                rows.append([f"{pretty(a)} [{mode}]"] + [fmt(v, 1) for v in vals])
    lines += ["From `scripts/callgrind_counts.sh`; balanced counts one free + one alloc.",
              "", md_table(["allocator", "fresh", "pure get", "balanced"], rows), ""]
    sizes = sorted({k[3] for k in ir if is_pool(k[0])})
    rows = [[f"{pretty(a)} [{mode}]"] + [" / ".join(fmt(ir.get((a, p, mode, size)), 1)
                                                    for p in PATTERNS) for size in sizes]
            for a in pool_rows(data) for mode in ["ct", "rt"]
            if any((a, p, mode, size) in ir for p in PATTERNS for size in sizes)]
    return lines + ["### The pool, every dispatch × layout: fresh / pure get / balanced", "",
                    md_table(["pool"] + [f"{size} B" for size in sizes], rows), ""]
