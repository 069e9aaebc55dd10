// sta-pool: the hot allocation paths, the seed's sta_allocator_get_benchmark.
//
// Three patterns, per allocator and size class:
//   fresh     allocations only, free lists empty: the pool's bump path. Every run
//             takes new memory (the pool gets its own tagged instance and never
//             frees; peers keep every block and release it all after the run), with a
//             fixed number of iterations so the pool cannot run the machine dry. Every
//             allocator's memory is faulted in once before its run, untimed (the span
//             layout's blocks of a run allocated and freed: its spans are clean).
//   pure_get  allocations served from a warm free list: a batch is allocated (timed)
//             and given back (not timed), again and again.
//   balanced  free + allocate pairs over a ring of live blocks; one op = one pair.
// Sizes: `ct` — the size is a compile-time constant (the pool's alloc<N>()); `rt` —
// the size is opaque to the compiler on every call. General-purpose peers have no
// compile-time path and are measured with `rt` only.
//
// A compiler barrier (benchmark::ClobberMemory) follows every call, as the work
// between allocations does in a program; without it the compiler could fuse an
// inlined free and the following alloc and the figures would measure nothing. Each
// peer's address escapes once before its loop, so the barrier covers its state too.
//
// Time is the thread's CPU time (manual: CLOCK_THREAD_CPUTIME_ID around the measured
// phase, its own cost subtracted; balanced: Google Benchmark's CPU time): the machine
// is shared, and wall time would count the time other processes hold the core.
//
// The pool rows: sta-branch and sta-table (the seed's shared-cursor layout, both
// dispatch policies), sta-spans-branch and sta-spans-table (the span layout, in its
// default thread policy: threads::per_thread unless the library says otherwise — the
// context key "sta_spans_threads" names it), and sta-spans-seed: the span layout with
// the default dispatch in threads::one_owner, the seed's mode, at the peers' sizes only
// (the report compares it with the default; issue 14).
// Names: get/<allocator>/<pattern>/<ct|rt>/<bytes>; the counter `ops` is the number
// of operations per iteration, so ns per op = real_time / ops.
#include "harness.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <malloc.h>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

enum class pattern { fresh, pure_get, balanced };

template <pattern P, std::uint32_t Bytes, bool CT, class Family>
struct pool_tag {};

/// Blocks per batch / ring: about 1 MiB of blocks, between 32 and 1024.
constexpr std::size_t batch_of(std::size_t bytes) {
    const std::size_t n = (std::size_t{1} << 20) / bytes;
    return n < 32 ? 32 : n > 1024 ? 1024 : n;
}

/// Fresh operations per run: about 32 MiB of blocks, between 4096 and 1 Mi.
constexpr std::size_t fresh_ops_of(std::size_t bytes) {
    const std::size_t n = (std::size_t{32} << 20) / bytes;
    const std::size_t clamped = n < 4096 ? 4096 : n > (std::size_t{1} << 20) ? (1u << 20) : n;
    return clamped / batch_of(bytes) * batch_of(bytes);
}

template <class Peer, std::uint32_t Bytes, bool CT>
struct ops {
    STA_FORCE_INLINE static void* alloc(Peer& a, std::size_t& n) {
        if constexpr (CT) {
            return a.template alloc<Bytes>();
        } else {
            benchmark::DoNotOptimize(n); // the size is unknown at every call
            return a.alloc(n);
        }
    }
    STA_FORCE_INLINE static void free(Peer& a, void* p, std::size_t& n) {
        if constexpr (CT) {
            a.template free<Bytes>(p);
        } else {
            benchmark::DoNotOptimize(n);
            a.free(p, n);
        }
    }
};

/// The thread's CPU clock: on a shared machine, time spent descheduled is not ours.
/// Reading it is a system call; its cost, measured once, is subtracted.
struct cpu_clock {
    static double now() { return bench::thread_cpu_seconds(); }
    static double overhead() {
        static const double seconds = [] {
            std::vector<double> d(201);
            for (double& x : d) {
                const double a = now();
                x = now() - a;
            }
            std::nth_element(d.begin(), d.begin() + 100, d.end());
            return d[100];
        }();
        return seconds;
    }
    static double elapsed(double t0, double t1) {
        const double s = t1 - t0 - overhead();
        return s > 1e-9 ? s : 1e-9;
    }
};

template <class Peer, std::uint32_t Bytes, bool CT>
void run_fresh(benchmark::State& state) {
    using op = ops<Peer, Bytes, CT>;
    constexpr std::size_t batch = batch_of(Bytes);
    std::size_t n = Bytes;
    std::vector<void*> ptrs(batch);
    std::vector<void*> kept; // peers give their blocks back after the run
    constexpr bool keep = !Peer::compile_time && Peer::reuses; // not the pool: it never frees
    if constexpr (keep) {
        kept.reserve(fresh_ops_of(Bytes) + batch);
        // Fault the peer's memory in once, untimed, and give it back: fresh measures the
        // allocator's work, not first-touch page faults (the cold-start run does that).
        // The pool's is warmed below, on its own tagged instance.
        {
            Peer warm(Bytes); // its own instance: `a` starts with empty free lists
            for (std::size_t i = 0; i < fresh_ops_of(Bytes); ++i)
                kept.push_back(warm.alloc(n));
            for (void* p : kept)
                warm.free(p, Bytes);
            warm.release_all();
        }
        kept.clear();
    }
    Peer a(Bytes);
    if constexpr (Peer::compile_time && requires { Peer::pool::trim(); }) { // the span layout
        // The span layout's fresh path starts spans that are clean: like the peers', the
        // run's memory is faulted in once, untimed (the bookkeeping of each span, and under
        // huge pages each segment whole), and its blocks freed without a size (their bits
        // at once, no cache): the run's blocks come from clean spans through the cursor.
        std::vector<void*> warm(fresh_ops_of(Bytes));
        for (void*& p : warm)
            p = op::alloc(a, n);
        for (void* p : warm)
            Peer::pool::engine::core::release_unsized(p);
    }
    bench::escape(a);
    for (auto _ : state) {
        const double t0 = cpu_clock::now();
        for (std::size_t i = 0; i < batch; ++i) {
            ptrs[i] = op::alloc(a, n);
            benchmark::ClobberMemory();
        }
        const double t1 = cpu_clock::now();
        state.SetIterationTime(cpu_clock::elapsed(t0, t1));
        if (ptrs[0] == nullptr)
            state.SkipWithError("out of memory");
        if constexpr (keep)
            kept.insert(kept.end(), ptrs.begin(), ptrs.end());
    }
    for (void* p : kept)
        a.free(p, Bytes);
    a.release_all();
    state.counters["ops"] = static_cast<double>(batch);
}

template <class Peer, std::uint32_t Bytes, bool CT>
void run_pure_get(benchmark::State& state) {
    using op = ops<Peer, Bytes, CT>;
    constexpr std::size_t batch = batch_of(Bytes);
    std::size_t n = Bytes;
    Peer a(Bytes);
    bench::escape(a);
    std::vector<void*> ptrs(batch);
    auto give_back = [&] {
        for (std::size_t i = batch; i-- > 0;) {
            op::free(a, ptrs[i], n);
            benchmark::ClobberMemory();
        }
    };
    for (std::size_t i = 0; i < batch; ++i) // warm the free list
        ptrs[i] = op::alloc(a, n);
    give_back();
    for (auto _ : state) {
        const double t0 = cpu_clock::now();
        for (std::size_t i = 0; i < batch; ++i) {
            ptrs[i] = op::alloc(a, n);
            benchmark::ClobberMemory();
        }
        const double t1 = cpu_clock::now();
        state.SetIterationTime(cpu_clock::elapsed(t0, t1));
        give_back();
    }
    a.release_all();
    state.counters["ops"] = static_cast<double>(batch);
}

template <class Peer, std::uint32_t Bytes, bool CT>
void run_balanced(benchmark::State& state) {
    using op = ops<Peer, Bytes, CT>;
    constexpr std::size_t ring_size = batch_of(Bytes);
    std::size_t n = Bytes;
    Peer a(Bytes);
    bench::escape(a);
    std::vector<void*> ring(ring_size);
    for (std::size_t i = 0; i < ring_size; ++i)
        ring[i] = op::alloc(a, n);
    for (auto _ : state) {
        for (std::size_t i = 0; i < ring_size; ++i) {
            op::free(a, ring[i], n);
            benchmark::ClobberMemory();
            ring[i] = op::alloc(a, n);
            benchmark::ClobberMemory();
        }
    }
    for (void* p : ring)
        op::free(a, p, n);
    a.release_all();
    state.counters["ops"] = static_cast<double>(ring_size);
}

template <class Peer, std::uint32_t Bytes, bool CT>
void add() {
    if (!Peer::available())
        return;
    const std::string allocator = Peer::name;
    const std::string tail = std::string(CT ? "/ct/" : "/rt/") + std::to_string(Bytes);
    benchmark::RegisterBenchmark(("get/" + allocator + "/fresh" + tail).c_str(),
                                 &run_fresh<Peer, Bytes, CT>)
        ->Iterations(static_cast<benchmark::IterationCount>(fresh_ops_of(Bytes) / batch_of(Bytes)))
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
    if constexpr (Peer::reuses) {
        benchmark::RegisterBenchmark(("get/" + allocator + "/pure_get" + tail).c_str(),
                                     &run_pure_get<Peer, Bytes, CT>)
            ->UseManualTime()
            ->Unit(benchmark::kNanosecond);
        benchmark::RegisterBenchmark(("get/" + allocator + "/balanced" + tail).c_str(),
                                     &run_balanced<Peer, Bytes, CT>)
            ->Unit(benchmark::kNanosecond);
    }
}

/// A pool family's rows: one tagged pool per (pattern, size, ct/rt, family), so that each
/// fresh run starts with empty lists.
template <pattern P, class Family, std::uint32_t Bytes, bool CT>
void add_pool_pattern() {
    using peer = bench::pool_peer<Family, pool_tag<P, Bytes, CT, Family>>;
    const std::string name = std::string("get/") + Family::name +
                             (P == pattern::fresh      ? "/fresh"
                              : P == pattern::pure_get ? "/pure_get"
                                                       : "/balanced") +
                             (CT ? "/ct/" : "/rt/") + std::to_string(Bytes);
    if constexpr (P == pattern::fresh)
        benchmark::RegisterBenchmark(name.c_str(), &run_fresh<peer, Bytes, CT>)
            ->Iterations(
                static_cast<benchmark::IterationCount>(fresh_ops_of(Bytes) / batch_of(Bytes)))
            ->UseManualTime()
            ->Unit(benchmark::kNanosecond);
    else if constexpr (P == pattern::pure_get)
        benchmark::RegisterBenchmark(name.c_str(), &run_pure_get<peer, Bytes, CT>)
            ->UseManualTime()
            ->Unit(benchmark::kNanosecond);
    else
        benchmark::RegisterBenchmark(name.c_str(), &run_balanced<peer, Bytes, CT>)
            ->Unit(benchmark::kNanosecond);
}

template <class Family, std::uint32_t Bytes>
void add_pool() {
    add_pool_pattern<pattern::fresh, Family, Bytes, true>();
    add_pool_pattern<pattern::pure_get, Family, Bytes, true>();
    add_pool_pattern<pattern::balanced, Family, Bytes, true>();
    add_pool_pattern<pattern::fresh, Family, Bytes, false>();
    add_pool_pattern<pattern::pure_get, Family, Bytes, false>();
    add_pool_pattern<pattern::balanced, Family, Bytes, false>();
}

constexpr bool peer_class(std::uint32_t bytes) {
    return bytes == 8 || bytes == 32 || bytes == 256 || bytes == 4096 || bytes == 32768;
}

template <std::uint32_t Bytes>
void add_class() {
    add_pool<bench::pools::sta_table, Bytes>();
    add_pool<bench::pools::sta_branch, Bytes>();
    add_pool<bench::pools::sta_spans_table, Bytes>();
    add_pool<bench::pools::sta_spans_branch, Bytes>();
    if constexpr (peer_class(Bytes)) {
        add_pool<bench::pools::sta_spans_seed, Bytes>();
        add<bench::malloc_peer, Bytes, false>();
        add<bench::new_delete_peer, Bytes, false>();
        add<bench::mimalloc_dl_peer, Bytes, false>();
        add<bench::pmr_pool_peer, Bytes, false>();
        add<bench::pmr_monotonic_peer, Bytes, false>();
#if STA_BENCH_HAVE_FOONATHAN
        add<bench::foonathan_pool_peer, Bytes, false>();
        add<bench::foonathan_stack_peer, Bytes, false>();
#endif
#if STA_BENCH_HAVE_BOOST
        add<bench::boost_pool_peer, Bytes, false>();
        add<bench::boost_fast_peer<Bytes>, Bytes, false>();
#endif
    }
}

template <std::size_t... Shift>
void add_all(std::index_sequence<Shift...>) {
    (add_class<(std::uint32_t{8} << Shift)>(), ...);
}

/// The default dispatch this program was built with, as scripts/report.py reads it from
/// the JSON context (key "sta_default_policy").
constexpr const char* default_policy_name() {
    using policy = sta::dispatch::default_policy;
    constexpr bool branch = std::is_same_v<policy, sta::dispatch::inline_branch>;
    constexpr bool table = std::is_same_v<policy, sta::dispatch::self_rewriting_table>;
    static_assert(branch || table, "a new default policy: name it here and in scripts/report.py");
    return branch ? "inline_branch" : "self_rewriting_table";
}

/// The default layout (STA_POOL_SPANS), context key "sta_default_layout".
constexpr const char* default_layout_name() {
    return sta::layout::default_layout::name;
}

/// The thread policy of the sta-spans-* rows, context key "sta_spans_threads".
constexpr const char* spans_threads_name() {
    using threads = sta::threads::default_for<sta::layout::spans>;
    constexpr bool per_thread = std::is_same_v<threads, sta::threads::per_thread>;
    constexpr bool one_owner = std::is_same_v<threads, sta::threads::one_owner>;
    static_assert(per_thread || one_owner, "a new thread policy: name it here and in report.py");
    return per_thread ? "per_thread" : "one_owner";
}

} // namespace

int main(int argc, char** argv) {
    // glibc: keep freed memory mapped (no trimming, no mmap for big blocks), so that a
    // peer's fresh run measures its allocation work, not page faults on memory glibc
    // gave back to the OS between runs. First-touch costs are the cold-start run's.
    ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
    ::mallopt(M_MMAP_THRESHOLD, 1 << 30);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::AddCustomContext("seed_32B_ns",
                                "pure get 2.30, balanced 2.45, fresh 1.95 (the seed, Windows)");
    benchmark::AddCustomContext("sta_default_policy", default_policy_name());
    benchmark::AddCustomContext("sta_default_layout", default_layout_name());
    benchmark::AddCustomContext("sta_spans_threads", spans_threads_name());
    add_all(std::make_index_sequence<13>{}); // 8 B .. 32 KiB
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
