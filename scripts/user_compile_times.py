#!/usr/bin/env python3
"""What a user's translation unit pays to include the library: small files compiled with
g++ -O2 -std=c++20, the compiler's CPU seconds (wait4), median of several runs, each
case interleaved with the others so that a load on the machine touches them alike.

    scripts/user_compile_times.py [--runs N] [--cxx g++]

Every case but the last is compiled as a unit of a program that links sta::pool
(find_package or add_subdirectory), which defines STA_POOL_COMPILED=1: the pool's
code that every pool shares is declared there and compiled once in sta::pool_compiled.

The cases (issue 40's targets):
  containers     #include <sta/containers.hpp> and one sta::vector<int>
  containers-std the same file with the std headers containers.hpp includes instead,
                 and one std::vector<int>: the baseline the first is measured against
  memory_pool    #include <sta/memory_pool.hpp> and one allocation and free
  vector-std     <vector> alone and one std::vector<int>, for scale
  memory_pool-header-only  memory_pool without STA_POOL_COMPILED: a unit built
                 without CMake, where every body is inline (for scale)
Prints a table with median and min-max and the ratio containers / containers-std.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CONTAINERS_STD = """#include <deque>
#include <functional>
#include <list>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>
"""

CASES = {
    "containers": "#include <sta/containers.hpp>\n"
                  "int main() { sta::vector<int> v; v.push_back(1); return v[0] - 1; }\n",
    "containers-std": CONTAINERS_STD +
                      "int main() { std::vector<int> v; v.push_back(1); return v[0] - 1; }\n",
    "memory_pool": "#include <sta/memory_pool.hpp>\n"
                   "int main() {\n"
                   "    void* p = sta::memory_pool::alloc(32);\n"
                   "    sta::memory_pool::free(p, 32);\n"
                   "    return p == nullptr;\n"
                   "}\n",
    "vector-std": "#include <vector>\n"
                  "int main() { std::vector<int> v; v.push_back(1); return v[0] - 1; }\n",
}
CASES["memory_pool-header-only"] = CASES["memory_pool"]

# What a unit of a program linking sta::pool is compiled with (CMakeLists.txt).
LINKED_FLAGS = ["-DSTA_POOL_COMPILED=1"]


def compile_seconds(cxx, source, flags, scratch):
    args = [cxx, "-std=c++20", "-O2", "-DNDEBUG", *flags, "-I", os.path.join(ROOT, "include"),
            "-c", source, "-o", os.path.join(scratch, "out.o")]
    with tempfile.TemporaryFile(mode="w+") as err:
        child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err, text=True)
        _, status, usage = os.wait4(child.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            sys.exit(f"user_compile_times: {source} did not compile:\n{err.read()}")
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cxx", default="g++")
    opts = parser.parse_args()
    times = {name: [] for name in CASES}
    with tempfile.TemporaryDirectory() as scratch:
        sources = {}
        for name, text in CASES.items():
            sources[name] = os.path.join(scratch, f"{name}.cpp")
            with open(sources[name], "w") as f:
                f.write(text)
        for _ in range(opts.runs):
            for name in CASES:
                flags = [] if name.endswith("header-only") else LINKED_FLAGS
                times[name].append(compile_seconds(opts.cxx, sources[name], flags, scratch))
    print(f"{opts.cxx} -O2, CPU seconds, median (min-max) of {opts.runs}")
    for name, t in times.items():
        print(f"  {name:23} {statistics.median(t):6.3f} s  ({min(t):.3f}-{max(t):.3f})")
    ratio = statistics.median(times["containers"]) / statistics.median(times["containers-std"])
    print(f"  containers / containers-std: {ratio:.2f}x (target <= 1.3x)")
    print(f"  memory_pool: {statistics.median(times['memory_pool']):.3f} s (target <= 0.5 s)")


if __name__ == "__main__":
    main()
