"""Real programs on the pool (bench/clients/run_clients.sh, issue 8; clients.jsonl and its
Markdown, clients.md): Lua, SQLite and libxml2 built against the pool."""
import os

from ..core import (LAYOUT_ROWS, Cond, ReportError, Target, checks_text, make_measure,
                    read_lines, read_text, skipped_note, slug)

SKIP = "clients"  # the --skip key: the client programs were not built
# The client runner's allocator names -> the report's (the pool's by layout, the peers').
CLIENT_NAMES = {"cursor": "sta-cursor", "spans": "sta-spans", "glibc": "malloc",
                "mimalloc": "mimalloc"}


def load(data, results):
    """data.clients: (allocator, workload) -> {"seconds", "maxrss_kib"}; data.client_workloads
    in the runner's order; data.clients_md, the runner's tables (None when skipped)."""
    data.clients, data.client_workloads, data.clients_md = {}, [], None
    if SKIP in data.skips:
        return
    path = os.path.join(results, "clients.jsonl")
    for r in read_lines(path):
        try:
            alloc, workload = CLIENT_NAMES[r["allocator"]], r["workload"]
            data.clients[(alloc, workload)] = {"seconds": float(r["seconds"]),
                                               "maxrss_kib": float(r["maxrss_kib"])}
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: a malformed client line: {r}") from None
        if workload not in data.client_workloads:
            data.client_workloads.append(workload)
    data.clients_md = read_text(os.path.join(results, "clients.md"))


def measures(data, layout):
    out = []
    for w in data.client_workloads:
        seconds = {a: v["seconds"] for (a, w_), v in data.clients.items() if w_ == w}
        rss = {a: v["maxrss_kib"] for (a, w_), v in data.clients.items() if w_ == w}
        mine = LAYOUT_ROWS[layout]
        out.append(make_measure(f"client/{w}", f"client {w} (s)", "s", seconds.get(mine), seconds))
        out.append(make_measure(f"client_rss/{w}", f"client {w} peak RSS", "KiB", rss.get(mine),
                                rss))
    return out


def targets(data):
    """One a workload."""
    return [Target(f"client_{slug(w)}", f"client {w}", why_client,
                   [Cond(f"client/{w}", "mimalloc", "faster", 1.0, "time"),
                    Cond(f"client/{w}", "glibc", "faster", 1.2, "time"),
                    Cond(f"client_rss/{w}", "glibc", "within", 1.15, "peak RSS")])
            for w in data.client_workloads]


def why_client(data, v):
    return checks_text(v) + " (the client table below has every run's median)."


def render(data):
    lines = ["## Real programs on the pool: Lua, SQLite, libxml2", ""]
    if data.clients_md is None:
        return lines + skipped_note(data, SKIP)
    return lines + ["From `bench/clients/run_clients.sh` (interleaved runs; method and analysis "
                    "in [clients.md](clients.md)); every run's output equals the glibc run's.",
                    "", data.clients_md.rstrip(), ""]
