"""The threads (bench/threads_benchmark.cpp, issue 14; threads.jsonl): per-thread pools
against the peers, churn and producer/consumer at 1 and 2 threads. Judged on the span
layout only: the shared cursor has one owner."""
import os
import statistics

from ..core import (LAYOUT_ROWS, SEED_ROW, Cond, ReportError, Target, best, checks_text, fmt,
                    fx, is_pool, make_measure, md_table, missing_rows, preloaded, pretty,
                    read_lines)

# The workloads and thread counts (prodcons at N: N producers + N consumers).
THREAD_WORKLOADS = ["churn32", "churn_mixed", "prodcons"]
THREAD_COUNTS = [1, 2]
THREAD_WORKLOAD_TEXT = {"churn32": "churn 32 B", "churn_mixed": "churn mixed sizes",
                        "prodcons": "producer/consumer"}


def thread_text(workload, n):
    """How the report names a thread count: "1 thread", "2 threads", "1+1 threads"."""
    if workload == "prodcons":
        return f"{n}+{n} threads"
    return f"{n} thread" + ("s" if n > 1 else "")


def load(data, results):
    """data.threads: (allocator, workload, threads) -> {"ns_per_op", "cpu_ns_per_op",
    "net_peak_kib", "processes"}: medians over processes of each process's median."""
    path = os.path.join(results, "threads.jsonl")
    groups = {}
    data.threads_rounds = {}  # (allocator, workload, threads) -> ns_per_op of each process, in order
    for r in read_lines(path):
        try:
            key = (r["allocator"], r["workload"], int(r["threads"]))
            row = {f: float(r[f]) for f in ["ns_per_op", "cpu_ns_per_op", "net_peak_kib"]}
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: a malformed threads line: {r}") from None
        if r.get("kind") != "threads" or key[1] not in THREAD_WORKLOADS or row["ns_per_op"] <= 0:
            raise ReportError(f"{path}: not a threads result: {r}")
        groups.setdefault(key, []).append(row)
        data.threads_rounds.setdefault(key, []).append(row["ns_per_op"])
    data.threads = {k: dict({f: statistics.median(x[f] for x in rows) for f in rows[0]},
                            processes=len(rows)) for k, rows in groups.items()}


def complete(data):
    """The span rows, the seed's mode where it runs (churn at 1 thread), glibc, the peers."""
    problems = []
    for w in THREAD_WORKLOADS:
        for n in THREAD_COUNTS:
            seed = [SEED_ROW] if w != "prodcons" and n == 1 else []
            problems += missing_rows(f"threads {w} at {n} (threads.jsonl)",
                                     {a for a, w_, n_ in data.threads if (w_, n_) == (w, n)},
                                     [LAYOUT_ROWS["spans"]] + seed + ["malloc"] + preloaded(data))
    return problems


def measures(data, layout):
    mine = LAYOUT_ROWS[layout]
    out = []
    for w in THREAD_WORKLOADS:
        for n in THREAD_COUNTS:
            rows = {a: v for (a, w_, n_), v in data.threads.items() if (w_, n_) == (w, n)}
            speed = {a: v["ns_per_op"] for a, v in rows.items()}
            rss = {a: v["net_peak_kib"] for a, v in rows.items()}
            text = f"{THREAD_WORKLOAD_TEXT[w]}, {thread_text(w, n)}"
            out.append(make_measure(f"threads/{w}/{n}", f"{text} (ns per op per thread)", "ns",
                                    speed.get(mine), speed))
            out.append(make_measure(f"threads_rss/{w}/{n}", f"{text}: peak RSS over baseline",
                                    "KiB", rss.get(mine), rss))
    return out


def targets(data):
    return (
        [Target(f"threads_{w}", f"threads: {THREAD_WORKLOAD_TEXT[w]}, per thread", why_threads,
                [Cond(f"threads/{w}/{n}", "all", "faster", t, thread_text(w, n))
                 for n in THREAD_COUNTS], ("spans",))
         for w, t in [("churn32", 1.5), ("churn_mixed", 1.5), ("prodcons", 1.0)]]
        + [Target("threads_rss", "threads: producer/consumer peak RSS over baseline",
                  why_threads_rss,
                  [Cond(f"threads_rss/prodcons/{n}", "mimalloc", "within", 1.2,
                        thread_text("prodcons", n)) for n in THREAD_COUNTS], ("spans",))])


def round_by_round(data, mine, w, n):
    """The best peer's ns / the pool's within each round (the k-th process of every
    allocator ran moments apart, rounds interleaved): (median, min, max), or None."""
    ours = data.threads_rounds.get((mine, w, n), [])
    peers = [v for (a, w_, n_), v in data.threads_rounds.items()
             if (w_, n_) == (w, n) and not is_pool(a)]
    ratios = []
    for i, t in enumerate(ours):
        in_round = [v[i] for v in peers if i < len(v)]
        if in_round and t > 0:
            ratios.append(min(in_round) / t)
    if not ratios:
        return None
    return statistics.median(ratios), min(ratios), max(ratios)


def why_threads(data, v):
    workload = v.target.conds[0].measure.split("/")[1]
    text = checks_text(v) + " (ns per op per thread; every allocator in the threads table)."
    if workload == "prodcons":
        return text + (
            " Every block is freed by another thread than the one that allocated it: the pool "
            "holds it in the freeing thread's outbox and sends it to its owner's inbox in a "
            "batch of 32 with one compare-and-swap; the owner takes the inbox back at its next "
            "refill. The blocks themselves cross cores, for every allocator alike.")
    return text + (
        " The churn frees blocks at random over the ring, across spans: a sized free goes on "
        "its class's cache (LIFO) and every 1024th flushes the caches to the spans; mixed "
        "sizes touch 44 classes, and with two threads their working sets share the "
        "machine's caches (docs/dispatch.md, \"Class caches\"). The round-by-round row of "
        "the threads table compares each round's processes, which ran moments apart.")


def why_threads_rss(data, v):
    return (checks_text(v) +
            " (peak RSS of the process over its baseline). Blocks freed by the consumers wait "
            "in their outboxes and their owner's inbox until its next refill.")


def method(data):
    return [
        "- **threads** (`bench/threads_benchmark.cpp`, issue 14): one process per run, allocators "
        "interleaved. *churn* = each thread frees the block of a pseudo-random slot of its own "
        "ring of live blocks and allocates its replacement (32 B: 4,096 slots; mixed: 1,024 slots, "
        "80% 8–256 B, 17% to 4 KiB, 3% to 32 KiB), the same work per thread at 1 and 2 threads; "
        "*producer/consumer* = N producers allocate blocks of 16–1024 B, write a header and hand "
        "them in batches of 256 through one bounded queue to N consumers that check and free them "
        "(at 2: 2 + 2 threads on this 2-core machine). Sizes are opaque to the compiler; the pool "
        "frees with the size, the malloc rows with free(p). Wall time per op per thread: the "
        "median of the repetitions after a warm-up in each process, then the median over "
        "processes. Peak RSS = ru_maxrss over the baseline before the first block. The pool row "
        "is the span layout in threads::per_thread; *seed mode* rows are the span layout in "
        "threads::one_owner (get, scenarios, churn at 1 thread)."]


def render(data):
    measures_ = {m.id: m for m in measures(data, "spans")}
    cols = [(w, n) for w in THREAD_WORKLOADS for n in THREAD_COUNTS]
    allocs = sorted({k[0] for k in data.threads}, key=lambda a: (not is_pool(a), a))
    processes = sorted({v["processes"] for v in data.threads.values()})
    rss_cols = [f"producer/consumer peak RSS, {thread_text('prodcons', n)} (KiB)"
                for n in THREAD_COUNTS]
    header = ["allocator"] + [f"{THREAD_WORKLOAD_TEXT[w]}, {thread_text(w, n)}"
                              for w, n in cols] + rss_cols

    def cell(a, w, n, f, digits=2):
        return fmt(data.threads.get((a, w, n), {}).get(f), digits)

    def table(f):
        return [[pretty(a)] + [cell(a, w, n, f) for w, n in cols] +
                [cell(a, "prodcons", n, "net_peak_kib", 0) for n in THREAD_COUNTS]
                for a in allocs]

    ours = LAYOUT_ROWS["spans"]
    vs = [f"**{pretty(ours)}: × vs the best peer**"]
    for w, n in cols:
        f = best(measures_[f"threads/{w}/{n}"], "all")
        vs.append(f"{fx(f.speedup)} ({pretty(f.variant)})" if f.variant else "n/a")
    for n in THREAD_COUNTS:
        f = best(measures_[f"threads_rss/prodcons/{n}"], "mimalloc")
        vs.append(f"{fx(f.share)} of {pretty(f.variant)}" if f.variant else "n/a")
    rounds = [f"**{pretty(ours)}: the same, round by round (median, min–max)**"]
    for w, n in cols:
        r = round_by_round(data, ours, w, n)
        rounds.append(f"{fx(r[0])} ({fx(r[1])}–{fx(r[2])})" if r else "n/a")
    rounds += ["" for _ in THREAD_COUNTS]
    return ["## Threads: per-thread pools", "",
            "From `bench/threads_benchmark.cpp` (method above): wall ns per op per thread — "
            "the time of a repetition / the ops of one thread (of one producer) — so a flat "
            "figure from 1 to 2 threads means the work scales; the median over "
            f"{'/'.join(str(p) for p in processes)} processes. *× vs the best peer* = the "
            "fastest peer's figure / the pool's (the targets take it); *round by round* = "
            "within each round, the fastest peer's process / the pool's, which ran moments "
            "apart, so a slow spell of the machine hits both: the median over rounds and its "
            "range. Peak RSS is over the process's baseline, against mimalloc's lowest "
            "variant.", "",
            md_table(header, table("ns_per_op") + [vs, rounds]), "",
            "### CPU ns per op (all worker threads' CPU time / all ops)", "",
            "Steadier than wall time when another process takes a core; waiting counts "
            "(spinning and yields of the producer/consumer queue).", "",
            md_table(header[:1 + len(cols)],
                     [r[:1 + len(cols)] for r in table("cpu_ns_per_op")]), ""]
