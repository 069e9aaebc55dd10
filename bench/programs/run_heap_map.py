#!/usr/bin/env python3
"""The report's heap map (issue 42): bench/programs/lived_heap_map.c — a heap aged by 40
waves of mixed-size blocks, one in seven kept — run once under glibc, every peer
scripts/peer_library.sh finds and libsta_malloc.so (LD_PRELOAD). Writes OUT/heap_map.jsonl
(a line an allocator: resident memory at the snapshot and at the peak, what glibc's
mallinfo2 says) and OUT/heap_map_spans.json (libsta_malloc's statistics with the heap's
spans at the same moment, what scripts/heap_map.py draws).

    bench/programs/run_heap_map.py --lib build/bench/src/malloc/libsta_malloc.so --out DIR

The program is built here with the C compiler (cc) into DIR. Python 3's standard library
only.
"""
import argparse
import json
import os
import subprocess
import sys

from run_field_suite import allocators

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="libsta_malloc.so")
    ap.add_argument("--out", required=True, help="the results' folder")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    program = os.path.join(args.out, "lived_heap_map")
    subprocess.run(["cc", "-O2", "-fno-builtin", os.path.join(HERE, "lived_heap_map.c"), "-o",
                    program, "-ldl"], check=True)
    spans = os.path.join(args.out, "heap_map_spans.json")
    rows = []
    for name, lib in allocators(os.path.abspath(args.lib)):
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        if lib:
            env["LD_PRELOAD"] = lib
        run = subprocess.run([program, name, spans], env=env, capture_output=True, text=True,
                             timeout=600, check=False)
        if run.returncode != 0:
            print(f"run_heap_map: {name}: exit {run.returncode}: {run.stderr.strip()}",
                  file=sys.stderr)
            if name == "sta":
                return 1
            continue
        row = json.loads(run.stdout)
        if name == "sta" and not row.get("spans_file"):
            print("run_heap_map: libsta_malloc.so wrote no spans (not preloaded?)",
                  file=sys.stderr)
            return 1
        rows.append(row)
    with open(os.path.join(args.out, "heap_map.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
