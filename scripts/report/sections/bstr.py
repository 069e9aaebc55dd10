"""BSTR append (bench/bstr_benchmark.cpp, an extra program: extra-bstr_benchmark.json): the
pool's BSTR in each layout against the original CComBSTR. A target only: the program's
table is among the other programs' (sections/extras.py)."""
import os

from ..core import (Cond, ReportError, Target, checks_text, make_measure, medians, read_json,
                    to_ns)

BSTR_APPENDS = 10000  # the BSTR target's size (docs/bstr.md)
WAYS = {"shared_cursor": "pool-cursor", "spans": "pool-spans"}  # the pool's, by layout


def load(data, results):
    """data.bstr: (way, appends) -> ns per run."""
    path = os.path.join(results, "extra-bstr_benchmark.json")
    data.bstr = {}
    for run_name, b in medians(read_json(path), path).items():
        parts = run_name.split("/")
        if len(parts) == 3 and parts[0] == "bstr":
            data.bstr[(parts[1], int(parts[2]))] = to_ns(b, "real_time")
    for way in ["original"] + list(WAYS.values()):
        if (way, BSTR_APPENDS) not in data.bstr:
            raise ReportError(f"{path}: no bstr/{way}/{BSTR_APPENDS}")


def measures(data, layout):
    return [make_measure(f"bstr/{BSTR_APPENDS}", f"BSTR, {BSTR_APPENDS} appends", "ns",
                         data.bstr.get((WAYS[layout], BSTR_APPENDS)),
                         {"bstr-original": data.bstr.get(("original", BSTR_APPENDS))})]


def targets(data):
    return [Target("bstr", f"BSTR append, {BSTR_APPENDS} appends", why_bstr,
                   [Cond(f"bstr/{BSTR_APPENDS}", "original CComBSTR", "faster", 38.0)])]


def why_bstr(data, v):
    return checks_text(v) + "."
