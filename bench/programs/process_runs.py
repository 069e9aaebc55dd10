# What bench/programs/run_programs.sh (issue 16) and bench/programs/run_toolkit.sh (issue 38)
# share, imported by the Python each of them embeds (Python 3 standard library only):
#   - the allocators file their shell part writes, and the environment a program inherits;
#   - the rotation of the allocators from one round to the next;
#   - one whole process timed and measured (wall seconds, CPU seconds from wait4, peak RSS
#     from GNU time), optionally sampled by perf record;
#   - the exit line that shows libsta_malloc.so was loaded;
#   - which samples of a perf.data count as the allocator's (GLIBC_MALLOC, PEER_LIBRARIES)
#     and as the kernel's, and the shares the rows report;
#   - the JSONL file and the percent cells of the Markdown tables.
# What differs (the programs, the oracle, the rows and the tables) stays in each script.
import json
import os
import re
import statistics
import subprocess
import time

# The allocator's variables: only an allocator's row (or a script's check run) sets them.
ALLOCATOR_VARIABLES = ("LD_PRELOAD", "STA_MALLOC_STATS", "STA_MALLOC_CHECKS")


def inherited_env(also=(), prefixes=()):
    """This process's environment without ALLOCATOR_VARIABLES, the names in also and the
    names starting with one of prefixes: what every program run starts from."""
    return {k: v for k, v in os.environ.items()
            if k not in ALLOCATOR_VARIABLES + tuple(also) and not k.startswith(tuple(prefixes))}


def read_allocators(path):
    """The shell part's allocators, one a line: name=path to preload (empty: none), then
    optional K=V words for the program's environment after a "|".
    [(name, path to preload or "", [K=V words])]"""
    allocators = []
    for line in open(path).read().splitlines():
        alloc, rest = line.split("=", 1)
        preload, _, env = rest.partition("|")
        allocators.append((alloc, preload, env.split()))
    return allocators


def rotated(allocators, rep):
    """The order of round rep: rotated by one every round, so that drift on a shared machine
    falls on all of them alike."""
    shift = rep % len(allocators)
    return allocators[shift:] + allocators[:shift]


def spawn(work, base_env, preload, env, argv, stdin="/dev/null", sampled=None):
    """One process: (wall s, CPU s, peak RSS KiB, the path of its stdout, exit status,
    stderr). env: K=V words for the program alone; sampled: a perf.data path to record the
    program's samples in (perf runs under time)."""
    out, err, rss = (os.path.join(work, f) for f in ["out", "err", "rss"])
    # time -> [perf ->] env -> the program: env sets the variables for the program alone
    # (time itself runs on glibc), and the program's peak RSS is time's report of it.
    argv_all = ["/usr/bin/time", "-f", "%M", "-o", rss]
    if sampled:
        argv_all += ["perf", "record", "-q", "-e", "cpu-clock", "-F", "4999", "-o", sampled,
                     "--"]
    argv_all += ["/usr/bin/env"] + ([f"LD_PRELOAD={preload}"] if preload else [])
    argv_all += list(env) + list(argv)
    actions = [(os.POSIX_SPAWN_OPEN, 0, stdin, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
               (os.POSIX_SPAWN_OPEN, 2, err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
    start = time.perf_counter()
    pid = os.posix_spawn(argv_all[0], argv_all, base_env, file_actions=actions)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    with open(rss) as f:  # the last line; a failed program's status line comes before it
        maxrss = int(f.read().split()[-1])
    with open(err, errors="replace") as f:
        stderr = f.read()
    return (wall, usage.ru_utime + usage.ru_stime, maxrss, out,
            os.waitstatus_to_exitcode(status), stderr)


def sta_loaded(status, stderr):
    """Whether a run with STA_MALLOC_STATS=1 exited well with libsta_malloc's exit line."""
    return status == 0 and any(line.startswith("sta_malloc: ") and " pools made" in line
                               for line in stderr.splitlines())


# glibc's allocator in libc.so.6: the entry points and what they call.
GLIBC_MALLOC = re.compile(r"^(malloc|free|cfree|calloc|realloc|reallocarray|memalign|valloc|"
                          r"pvalloc|aligned_alloc|posix_memalign|malloc_usable_size|"
                          r"__libc_|__malloc|_int_|_mid_memalign|malloc_consolidate|"
                          r"unlink_chunk|sysmalloc|systrim|tcache|alloc_perturb|arena_|"
                          r"munmap_chunk|mremap_chunk|__posix_memalign)")
# Every function of these libraries is the allocator's.
PEER_LIBRARIES = ("libmimalloc", "libjemalloc", "libtcmalloc", "libsnmallocshim", "librpmalloc",
                  "libsta_malloc")
SAMPLE_LINE = re.compile(r"^\s*(\d+)\s+(\S+)\s+\[(.)\]\s+(.*?)\s*$")


def sample_counts(data):
    """(samples inside the allocator, samples in the kernel, all samples) of one perf.data.
    The kernel's samples ([k]: page faults, futexes, mmap) are never the allocator's."""
    report = subprocess.run(["perf", "report", "-i", data, "--stdio", "--sort", "dso,sym",
                             "-F", "sample,dso,sym"], capture_output=True, text=True,
                            check=True).stdout
    inside = kernel = total = 0
    for line in report.splitlines():
        m = SAMPLE_LINE.match(line)
        if not m or line.startswith("#"):
            continue
        count, dso, mode, symbol = int(m.group(1)), m.group(2), m.group(3), m.group(4)
        symbol = symbol.split("@")[0]
        total += count
        if mode == "k":
            kernel += count
        elif dso.startswith(PEER_LIBRARIES) or (
                dso.startswith("libc.so") and mode == "." and GLIBC_MALLOC.match(symbol)):
            inside += count
    return inside, kernel, total


def median_share(runs, index):
    """The median over sampled runs of r[index] / r[-1] (a count over all samples), rounded."""
    return round(statistics.median(r[index] / r[-1] for r in runs), 4)


def run_shares(runs, index):
    """Each sampled run's r[index] / r[-1], rounded."""
    return [round(r[index] / r[-1], 4) for r in runs]


def write_jsonl(path, rows):
    with open(path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


def pct(share):
    """A share as a table cell: "12.3 %", or "–" when it was not measured."""
    return "–" if share is None else f"{100 * share:.1f} %"
