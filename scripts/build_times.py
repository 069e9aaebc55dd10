#!/usr/bin/env python3
"""Where a build's time goes: each translation unit of a configured build compiled alone,
timed (CPU seconds of the compiler, which another load on the machine changes far less
than it changes wall time), the slowest listed first.

    scripts/build_times.py [BUILD_DIR] [--top N] [--match TEXT] [--jobs J]

BUILD_DIR is a configured CMake build with compile_commands.json (every preset of
CMakePresets.json writes one; default build/release). Each unit is compiled again
with its outputs under a temporary directory, so the build itself is
left as it is. Two jobs at a time by default (this machine's cores); --jobs 1 gives the
steadiest figures. The total is the sum of the units' CPU times: what one core would take.
"""
import argparse
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys
import tempfile


def unit_time(index, entry, scratch):
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    for flag, suffix in (("-o", ".o"), ("-MF", ".d")):  # outputs go to scratch paths
        if flag in args:
            args[args.index(flag) + 1] = os.path.join(scratch, f"{index}{suffix}")
    with tempfile.TemporaryFile(mode="w+") as err:
        child = subprocess.Popen(args, cwd=entry["directory"], stdout=subprocess.DEVNULL,
                                 stderr=err, text=True)
        _, status, usage = os.wait4(child.pid, 0)  # the compiler's own CPU time
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return usage.ru_utime + usage.ru_stime, child.returncode, entry["file"], err.read()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build_dir", nargs="?", default="build/release")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--match", default="")
    parser.add_argument("--jobs", type=int, default=2)
    opts = parser.parse_args()
    path = os.path.join(opts.build_dir, "compile_commands.json")
    if not os.path.exists(path):
        sys.exit(f"build_times: no {path}: configure the preset first (cmake --preset ...)")
    with open(path) as f:
        entries = [e for e in json.load(f) if opts.match in e["file"]]
    seen, units = set(), []
    for e in entries:  # a file compiled by two targets counts twice: it is built twice
        key = (e["file"], e.get("output", e.get("command", "")))
        if key not in seen:
            seen.add(key)
            units.append(e)
    with tempfile.TemporaryDirectory() as scratch, \
            concurrent.futures.ThreadPoolExecutor(opts.jobs) as pool:
        results = list(pool.map(lambda ie: unit_time(*ie, scratch), enumerate(units)))
    failed = [r for r in results if r[1] != 0]
    for seconds, _, name, err in failed:
        print(f"build_times: {name} failed to compile:\n{err}", file=sys.stderr)
    results.sort(reverse=True)
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    print(f"{len(results)} units in {opts.build_dir}, {opts.jobs} at a time; CPU seconds, slowest first")
    for seconds, _, name, _ in results[:opts.top]:
        print(f"{seconds:7.1f} s  {os.path.relpath(name, root)}")
    print(f"{sum(r[0] for r in results):7.1f} s  total CPU (one core)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
