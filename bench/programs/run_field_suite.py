#!/usr/bin/env python3
"""The field's allocator benchmarks (mimalloc-bench's programs, issue 39) on glibc, the
peers and libsta_malloc.so, program by program, the allocators' order rotated each round.

    bench/programs/run_field_suite.py [--lib path/to/libsta_malloc.so] [--rounds N]
                                      [--only "cfrac espresso"] [--jsonl FILE]

The programs and their upstream arguments come from ../shared/field-suite (beside the
project; STA_FIELD_SUITE names another folder): its build.sh builds them once into
build/field-suite (FIELD_SUITE_BIN names another folder), its run.sh runs one program
(ONLY=name) under one allocator (LD_PRELOAD of that program alone) and prints
`benchmark thr wall_s peak_rss_KiB exit own-metric`. A run of libsta_malloc.so that exits
non-zero fails the script: no program is left out quietly. A peer's run that fails (a crash,
a timeout) is counted and said, in the table and on stderr; the peer's figure is the median
of its other runs, and a peer whose every run failed has none for that program.

Allocators: glibc (no preload), every peer scripts/peer_library.sh finds (Debian's
mimalloc, jemalloc, tcmalloc; mimalloc3, snmalloc, rpmalloc from STA_EXTRA_PEERS_DIR,
default ../shared/peers; a peer that is not there is named on stderr and left out), and
sta (the library given, its release checks on) and sta-hardened (libsta_malloc-hardened.so
beside it, issue 41; like sta, a failed run of it fails the script).

The measure of a program: its own throughput where it runs for a fixed time (larson,
xmalloc-test, glibc-thread: higher is better) or reports its own figure (rptest's ops a
CPU second, higher; alloc-test's milliseconds, lower), else its wall seconds (lower). Per
program and allocator: the median of the rounds with min-max, and the median peak RSS.
Output (stdout): a Markdown table with each program's best peer (of the peers; glibc is
not one) and the ratio best peer /
sta in sta's favour (> 1: sta ahead), then the geometric means of the single-threaded
(ST, 1T) and multi-threaded (MT) ratios. --jsonl: one JSON line per program and
allocator ({"kind": "field_suite", "program", "thr", "allocator", "measure", "unit",
"higher_is_better", "values", "median", "min", "max", "rss_kib", "failed_runs", "exits"};
median, min, max and rss_kib are null when every run failed).
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The programs run.sh knows, in its order (barnes is not in the suite's copy).
PROGRAMS = ["cfrac", "espresso", "larsonN", "larsonN-sized", "alloc-test1", "alloc-testN",
            "xmalloc-testN", "cache-thrash1", "cache-thrashN", "cache-scratch1",
            "cache-scratchN", "malloc-large", "mstressN", "mleak100", "rptestN",
            "glibc-simple", "glibc-threadN"]

# own-metric patterns: (regex on run.sh's last column, unit, higher is better)
OWN = [(re.compile(r"^(\d+) ops/s"), "ops/s", True),
       (re.compile(r"^([\d.]+) M frees/s"), "M frees/s", True),
       (re.compile(r"^(\d+) ops/CPU-s"), "ops/CPU-s", True),
       (re.compile(r"^(\d+) iterations in 2 s"), "iterations in 2 s", True),
       (re.compile(r"^(\d+) ms \(own timer\)"), "ms (own timer)", False)]


def note(*words):
    print("run_field_suite:", *words, file=sys.stderr)


def die(*words):
    note(*words)
    sys.exit(1)


def allocators(lib):
    """[(name, preload path or "")]: glibc, the peers found, sta."""
    env = dict(os.environ)
    env.setdefault("STA_EXTRA_PEERS_DIR", os.path.join(os.path.dirname(ROOT), "shared", "peers"))
    peer_script = os.path.join(ROOT, "scripts", "peer_library.sh")
    names = subprocess.run([peer_script, "--list"], env=env, check=True, capture_output=True,
                           text=True).stdout.split()
    out = [("glibc", "")]
    for name in names:
        found = subprocess.run([peer_script, name], env=env, capture_output=True, text=True)
        if found.returncode != 0:
            note(f"{name} left out:", found.stderr.strip())
            continue
        out.append((name, found.stdout.strip()))
    out.append(("sta", lib))
    hardened = os.path.join(os.path.dirname(lib), "libsta_malloc-hardened.so")
    if not os.path.isfile(hardened):
        die(f"no hardened library at {hardened} (build it: cmake --build <dir> --target "
            "sta_malloc_hardened)")
    out.append(("sta-hardened", hardened))
    return out


def fmt(x):
    """A figure as the table shows it: thousands grouped, else three significant digits."""
    return f"{x:,.0f}" if x >= 1000 else f"{x:.3g}"


def measure(fields):
    """(value, unit, higher_is_better) of one run.sh line's fields."""
    own = " ".join(fields[5:])
    for pattern, unit, higher in OWN:
        m = pattern.match(own)
        if m:
            return float(m.group(1)), unit, higher
    return float(fields[2]), "s (wall)", False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default=os.path.join(ROOT, "build/bench/src/malloc/libsta_malloc.so"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--allocators", default="",
                    help="only the allocators named (a quick comparison; the report runs all)")
    ap.add_argument("--jsonl", default="")
    args = ap.parse_args()

    suite = os.environ.get("STA_FIELD_SUITE", os.path.join(os.path.dirname(ROOT), "shared",
                                                           "field-suite"))
    if not os.path.isfile(os.path.join(suite, "run.sh")):
        die(f"no field suite at {suite} (../shared/field-suite beside the project, or "
            "STA_FIELD_SUITE)")
    if not os.path.isfile(args.lib):
        die(f"no library at {args.lib} (build it: cmake --build build/bench --target sta_malloc)")
    bin_dir = os.environ.get("FIELD_SUITE_BIN", os.path.join(ROOT, "build", "field-suite"))
    if not os.path.isfile(os.path.join(bin_dir, "glibc-simple")):
        note(f"building the field suite into {bin_dir}")
        os.makedirs(bin_dir, exist_ok=True)
        built = subprocess.run([os.path.join(suite, "build.sh")], env={**os.environ, "BIN": bin_dir},
                               stdout=sys.stderr)
        if built.returncode != 0:
            die("the field suite's build.sh failed")
    programs = args.only.split() if args.only else PROGRAMS
    allocs = allocators(os.path.abspath(args.lib))
    if args.allocators:
        allocs = [a for a in allocs if a[0] in args.allocators.split()]
        if not allocs:
            die(f"--allocators {args.allocators!r} names no allocator of this run")
    runs = {}  # (program, allocator) -> [(value, rss)]
    failed = {}  # (program, allocator) -> [exit status of each failed run]
    shape = {}  # program -> (thr, unit, higher)
    with tempfile.TemporaryDirectory() as logs:
        for r in range(args.rounds):
            for program in programs:
                order = allocs[r % len(allocs):] + allocs[:r % len(allocs)]
                for name, lib in order:
                    cmd = [os.path.join(suite, "run.sh")] + ([lib] if lib else [])
                    env = {**os.environ, "BIN": bin_dir, "ONLY": program,
                           "LOGDIR": os.path.join(logs, name)}
                    env.pop("LD_PRELOAD", None)
                    env.pop("STA_MALLOC_CHECKS", None)
                    out = subprocess.run(cmd, env=env, capture_output=True, text=True).stdout
                    lines = [ln.split() for ln in out.splitlines()
                             if ln.split() and ln.split()[0] == program]
                    if len(lines) != 1 or len(lines[0]) < 5 or lines[0][4] != "0":
                        if name.startswith("sta") or len(lines) != 1 or len(lines[0]) < 5:
                            die(f"{program} on {name} failed: {out.strip()[-400:]}")
                        note(f"{program} on {name} failed (exit {lines[0][4]}): counted")
                        failed.setdefault((program, name), []).append(int(lines[0][4]))
                        runs.setdefault((program, name), [])
                        continue
                    value, unit, higher = measure(lines[0])
                    shape[program] = (lines[0][1], unit, higher)
                    runs.setdefault((program, name), []).append((value, int(lines[0][3])))
            note(f"round {r + 1} of {args.rounds} done")

    jsonl = open(args.jsonl, "w") if args.jsonl else None
    print("| program | thr | measure | sta | best peer | best peer / sta (> 1: sta ahead) "
          "| sta peak RSS KiB | best peer's |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    ratios = {"ST": [], "MT": []}
    hardened = []  # libsta_malloc-hardened / libsta_malloc, each program's cost
    for program in programs:
        thr, unit, higher = shape[program]
        summary = {}
        for name, _ in allocs:
            values = [v for v, _ in runs[(program, name)]]
            exits = failed.get((program, name), [])
            summary[name] = None
            if values:
                rss = statistics.median(m for _, m in runs[(program, name)])
                summary[name] = (statistics.median(values), min(values), max(values), rss)
            if jsonl:
                jsonl.write(json.dumps({"kind": "field_suite", "program": program, "thr": thr,
                                        "allocator": name, "measure": unit,
                                        "higher_is_better": higher, "values": values,
                                        "median": summary[name] and summary[name][0],
                                        "min": summary[name] and summary[name][1],
                                        "max": summary[name] and summary[name][2],
                                        "rss_kib": summary[name] and summary[name][3],
                                        "failed_runs": len(exits), "exits": exits}) + "\n")
        # The best peer: the general-purpose peers' best, glibc shown, not judged (the
        # report's rule, scripts/report/sections/field_suite.py)
        peers = [n for n, _ in allocs
                 if not n.startswith("sta") and n != "glibc" and summary[n] is not None]
        crashed = [f"{n} failed {len(failed[(program, n)])}×" for n, _ in allocs
                   if (program, n) in failed]
        sta = summary.get("sta")
        if sta is None:
            continue
        if summary.get("sta-hardened") is not None: # the hardened library's cost, issue 41
            h = summary["sta-hardened"][0]
            hardened.append(h / sta[0] if not higher else sta[0] / h)
        if not peers:
            print(f"| {program} | {thr} | {unit} | {fmt(sta[0])} | no peer ran | n/a | "
                  f"{sta[3]:.0f} | – |")
            continue
        best = (max if higher else min)(peers, key=lambda n: summary[n][0])
        peer = summary[best]
        ratio = sta[0] / peer[0] if higher else peer[0] / sta[0]
        ratios["MT" if thr == "MT" else "ST"].append(ratio)
        print(f"| {program} | {thr} | {unit}{' (higher is better)' if higher else ''} "
              f"| {fmt(sta[0])} ({fmt(sta[1])}–{fmt(sta[2])}) | {best} {fmt(peer[0])} "
              f"({fmt(peer[1])}–{fmt(peer[2])}){'; ' + ', '.join(crashed) if crashed else ''} "
              f"| {ratio:.2f}× | {sta[3]:.0f} | {peer[3]:.0f} |")
    if hardened:
        geo = math.exp(sum(math.log(x) for x in hardened) / len(hardened))
        print(f"\nGeometric mean of libsta_malloc-hardened / libsta_malloc (cost, every "
              f"program): **{geo:.3f}×** ({len(hardened)} programs, {args.rounds} rounds)")
    for kind, label in (("ST", "single-threaded (ST, 1T)"), ("MT", "multi-threaded (MT)")):
        if ratios[kind]:
            geo = math.exp(sum(math.log(x) for x in ratios[kind]) / len(ratios[kind]))
            print(f"\nGeometric mean of best peer / sta, {label}: **{geo:.2f}×** "
                  f"({len(ratios[kind])} programs, {args.rounds} rounds)")
    if jsonl:
        jsonl.close()


if __name__ == "__main__":
    main()
