"""The get paths (bench/get_benchmark.cpp; get.json, and get-PEER.json under LD_PRELOAD):
every class, both dispatch variants in both layouts, the in-process peers. Its context
names the pool's build; its figures at 32 B are the chart (docs/benchmarks.svg)."""
import html

from ..core import (EXTRA_PEERS, LAYOUTS, POLICIES, PRELOAD_PEERS, SEED_ROW, Cond, Target,
                    dispatch_rows, extra_peers, fmt, is_pool, load_context, make_measure,
                    md_table, medians, missing_rows, peer_list, pool_rows, preload_files,
                    preloaded, pretty, read_json, to_ns)

# The thread policies of the sta-spans-* rows, as get_benchmark's context key
# "sta_spans_threads" names them.
SPANS_THREADS = ["per_thread", "one_owner"]
PATTERNS = ["fresh", "pure_get", "balanced"]
SEED = {"pure_get": 2.30, "balanced": 2.45, "fresh": 1.95}  # ns, 32 B, Windows
# The main table's rows.
MAIN = ([f"get/{p}/{m}/32" for m in ["ct", "rt"] for p in PATTERNS]
        + [f"get/{p}/rt/{s}" for s in [8, 256, 4096, 32768] for p in PATTERNS])


def load(data, results):
    """data.policy, data.layout, data.spans_threads (get.json's context) and data.get:
    (allocator, pattern, mode, bytes) -> ns per op."""
    table = {}
    for preload, path in preload_files(results, "get", data.skips):
        doc = read_json(path)
        if not preload:
            data.policy = POLICIES[load_context(doc, path, "sta_default_policy", POLICIES)]
            data.layout = load_context(doc, path, "sta_default_layout", LAYOUTS)
            data.spans_threads = load_context(doc, path, "sta_spans_threads", SPANS_THREADS)
        for run_name, b in medians(doc, path).items():
            parts = run_name.split("/")
            if len(parts) < 5 or parts[0] != "get":
                continue
            alloc, pattern, mode, size = parts[1], parts[2], parts[3], int(parts[4])
            if preload:
                if alloc == "malloc":
                    alloc = preload
                elif alloc == "std::allocator":
                    alloc = preload + " (new)"
                else:
                    continue
            ops = b.get("ops", 1.0) or 1.0
            field_name = "real_time" if "manual_time" in run_name else "cpu_time"
            table[(alloc, pattern, mode, size)] = to_ns(b, field_name) / ops
    data.get = table


def complete(data):
    return missing_rows("get (get.json, get-PEER.json)", {k[0] for k in data.get},
                        dispatch_rows(data) + [SEED_ROW] + preloaded(data))


def measures(data, layout):
    sta = data.row(layout)
    out = []
    get_allocs = {k[0] for k in data.get}
    for size in sorted({k[3] for k in data.get}):
        for mode in ["ct", "rt"]:
            size_text = "compile-time" if mode == "ct" else "run-time"
            for p in PATTERNS:
                # peers have no compile-time path: their run-time figure serves both
                out.append(make_measure(
                    f"get/{p}/{mode}/{size}",
                    f"{size} B {p}, {size_text} size", "ns", data.get.get((sta, p, mode, size)),
                    {a: data.get.get((a, p, "rt", size)) for a in get_allocs}))
    return out


def targets(data):
    return (
        [Target(f"ct32_{p}", f"32 B ct {p}", why_ct32,
                [Cond(f"get/{p}/ct/32", "general", "faster", 3.0),
                 Cond(f"get/{p}/ct/32", "glibc", "faster", 5.0),
                 Cond(f"get/{p}/ct/32", "boost::pool", "within", 1.2)]) for p in PATTERNS]
        + [Target(f"rt32_{p}", f"32 B rt {p}", why_rt32,
                  [Cond(f"get/{p}/rt/32", "general", "faster", 2.5)]) for p in PATTERNS]
        + [Target(f"ct32_mi_{p}", f"32 B ct {p} vs mimalloc", why_ct32_mi,
                  [Cond(f"get/{p}/ct/32", "mimalloc", "faster", t)])
           for p, t in [("fresh", 4.0), ("pure_get", 1.0), ("balanced", 2.5)]])


def why_ct32(data, v):
    pattern = v.target.conds[0].measure.split("/")[1]
    boost = next(c.figure for c in v.checks if c.cond.group == "boost::pool")
    text = (f"{pretty(v.row)} {fmt(boost.ours)} ns vs boost::pool {fmt(boost.value)} ns; "
            f"instructions per op {fmt(data.ir.get((v.row, pattern, 'ct', 32)), 1)} vs "
            f"{fmt(data.ir.get(('boost-pool', pattern, 'rt', 32)), 1)}.")
    if pattern == "pure_get":
        return text + (
            " Every peer's state is escaped before its loop (issue 12). The pool reaches its "
            "state through a base register (`through_register`), which on this machine's core "
            "makes a store-then-reload of the head as cheap as boost::pool's stack slot; the "
            "`rt` path still indexes the heads (`[base+index]`, about 1.9x per reload in "
            "`bench/store_forwarding_probe.cpp`). What remains is noise and code placement. "
            "Details: "
            "[dispatch.md](dispatch.md), \"The free-list floor (pure get)\".")
    if v.layout == "spans" and pattern == "balanced":
        text += (" The span layout's free compares the block with its class's current span "
                 "before it pushes it (see the instruction counts below, both layouts).")
    return text + (
        " Where the instruction counts are equal or lower, the gap is timing noise and code "
        "placement on a shared 2-core machine (the seed says the same of its leading "
        "variants); where they are higher, the pool pays for serving 13 classes from one "
        "state (a class index, a bump test) where boost::pool serves one size.")


def why_rt32(data, v):
    return ("a run-time size costs the class computation (lzcnt, a range check) on alloc and "
            "on free; see the rt vs ct instruction counts below.")


def why_ct32_mi(data, v):
    c = v.checks[0]
    pattern = c.cond.measure.split("/")[1]
    return (f"{pretty(v.row)} {fmt(c.figure.ours)} ns vs {pretty(c.figure.variant)} "
            f"{fmt(c.figure.value)} ns; instructions per op "
            f"{fmt(data.ir.get((v.row, pattern, 'ct', 32)), 1)} vs mimalloc's "
            f"{fmt(data.ir.get(('mimalloc-dlopen', pattern, 'rt', 32)), 1)} (dlopen) — see the "
            "instruction counts below.")


def method(data):
    line = ("- jemalloc, tcmalloc and mimalloc are measured by running the `malloc` rows of the "
            "same binary under `LD_PRELOAD`; mimalloc is also measured in-process through "
            "`dlopen` (each call through a function pointer).")
    skipped = [f"{p} ({data.skips['preload:' + p]})" for p in PRELOAD_PEERS
               if "preload:" + p in data.skips and p not in EXTRA_PEERS]
    if skipped:
        line += " Skipped under LD_PRELOAD: " + "; ".join(skipped) + "."
    present = extra_peers(data)
    absent = [p for p in EXTRA_PEERS if p not in present]
    extra = ("- **the newest releases** of the peers, built apart as `LD_PRELOAD` libraries "
             f"({peer_list(EXTRA_PEERS)}: `scripts/peer_library.sh`, from the folder "
             "`STA_EXTRA_PEERS_DIR`, by default `../shared/peers` beside the repository, "
             "whose README.md says how they were built; Debian 12 packages mimalloc 2.0.9), "
             "run wherever Debian's peers run under "
             "`LD_PRELOAD` and count among the general-purpose peers.")
    if present:
        extra += f" Measured in this run: {peer_list(present)}."
    if absent:
        extra += (f" Not present here, so not measured: {peer_list(absent)} ("
                  + "; ".join(data.skips["preload:" + p] for p in absent) + ").")
    return [
        "- **get** (`bench/get_benchmark.cpp`): *fresh* = allocations only, free lists empty (the "
        "pool's bump path; every run takes new memory: the pool has its own tagged instance; every "
        "allocator is warmed once so no page faults are timed, the span layout by allocating and "
        "freeing the run's blocks, which leaves its spans clean); *pure get* = allocations from a warm free "
        "list (a batch of up to 1024 blocks allocated, timed, then given back, untimed); "
        "*balanced* = free + allocate pairs over a ring of live blocks (one op = one pair). Times "
        "are the thread's CPU time (the machine is shared). A compiler barrier follows each call, "
        "as the work between allocations does in a program. *ct* = size known at compile time "
        "(`alloc<N>()`), *rt* = size opaque at every call. General-purpose peers have no "
        "compile-time path; their figure is used for both.",
        line, extra]


def render(data):
    sta = data.default_row
    get, ir = data.get, data.ir
    pools = pool_rows(data)
    lines = ["## The seed's table beside ours (32 B, compile-time size)", "",
             md_table(["pattern", "seed (Windows)"] + [pretty(a) for a in pools] +
                      [f"instructions {pretty(a)}" for a in pools],
                      [[p, f"{SEED[p]:.2f} ns"] + [f"{fmt(get.get((a, p, 'ct', 32)))} ns"
                                                   for a in pools] +
                       [fmt(ir.get((a, p, "ct", 32)), 1) for a in pools] for p in PATTERNS]), ""]
    rows = [[f"{size} B"] + [fmt(get.get((sta, p, mode, size))) for p in PATTERNS
                             for mode in ["ct", "rt"]]
            for size in sorted({k[3] for k in get if k[0] == sta})]
    lines += [f"## {pretty(sta)}: every class (ns per op)", "",
              md_table(["class"] + [f"{p} {m}" for p in PATTERNS for m in ["ct", "rt"]], rows),
              ""]
    allocs = pools + sorted({k[0] for k in get if not is_pool(k[0])})
    for size in [8, 32, 256, 4096, 32768]:
        rows = []
        for a in allocs:
            for mode in ["ct", "rt"] if is_pool(a) else ["rt"]:
                vals = [get.get((a, p, mode, size)) for p in PATTERNS]
                if any(v is not None for v in vals):
                    rows.append([f"{pretty(a)} [{mode}]"] + [fmt(v) for v in vals])
        if rows:
            lines += [f"### get, {size} B (ns per op)", "",
                      md_table(["allocator", "fresh", "pure get", "balanced"], rows), ""]
    return lines


def svg_chart(data):
    """Grouped horizontal bars: ns/op at 32 B per pattern and allocator."""
    sta, other, spans, other_spans = pool_rows(data)
    allocs = [(sta, "ct"), (sta, "rt"), (other, "ct"), (spans, "ct"), (other_spans, "ct"),
              ("malloc", "rt"),
              ("jemalloc", "rt"), ("tcmalloc", "rt"), ("mimalloc", "rt"), ("mimalloc-dlopen", "rt"),
              ("mimalloc3", "rt"), ("snmalloc", "rt"), ("rpmalloc", "rt"),
              ("pmr-unsync-pool", "rt"), ("foonathan-pool", "rt"), ("boost-pool", "rt"),
              ("boost-fast-pool", "rt")]
    rows = []
    for pattern in PATTERNS:
        group = []
        for alloc, mode in allocs:
            v = data.get.get((alloc, pattern, mode, 32))
            if v is not None:
                group.append((f"{pretty(alloc)} [{mode}]", v, is_pool(alloc)))
        rows.append((pattern, group))
    vmax = max([v for _, g in rows for _, v, _ in g] + [1.0])
    label_w, bar_w, bar_h, gap = 290, 420, 16, 4
    height = 50 + sum(28 + len(g) * (bar_h + gap) for _, g in rows)
    width = label_w + bar_w + 80
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           '<text x="10" y="22" font-size="15" font-weight="bold">sta-pool vs peers: ns per '
           'operation, 32 B blocks (median, lower is better)</text>']
    y = 44
    for pattern, group in rows:
        out.append(f'<text x="10" y="{y + 14}" font-weight="bold">{pattern}</text>')
        y += 22
        for label, v, ours in group:
            w = max(1.0, bar_w * v / vmax)
            color = "#2b7bba" if ours else "#b0b0b0"
            out.append(f'<text x="{label_w - 6}" y="{y + 12}" text-anchor="end">'
                       f'{html.escape(label)}</text>')
            out.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" '
                       f'fill="{color}"/>')
            out.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 12}">{v:.2f}</text>')
            y += bar_h + gap
        y += 6
    out.append("</svg>")
    return "\n".join(out) + "\n"
