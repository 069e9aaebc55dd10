// sta-pool: per-thread pools against the general-purpose allocators, with threads
// (issue 14). One process per run, so that the LD_PRELOAD peers run the same code.
//
//   threads_benchmark --alloc=<A> --workload=<W> --threads=<N> [--reps=R] [--ops=K]
//
// Allocators (A):
//   sta-spans        the span layout in its default thread policy, threads::per_thread
//                    (default dispatch); sized free, pool::free(p, n)
//   sta-spans-seed   the span layout in threads::one_owner, the seed's mode: churn at
//                    --threads=1 only (one pool for the program, one thread may call)
//   malloc           glibc, or jemalloc / tcmalloc / mimalloc under LD_PRELOAD; free(p)
//   mimalloc-dlopen  mimalloc in this process through dlopen(RTLD_LOCAL) (bench/peers.hpp)
//
// Workloads (W), N = --threads:
//   churn32      N threads, each on its own ring of 4096 live 32 B blocks: one op = free
//                the block of a pseudo-random slot (allocated some time ago, not only the
//                last one) and allocate its replacement, which gets one word written
//   churn_mixed  the same over a ring of 1024 slots with sizes from a fixed seeded
//                distribution: 80% 8..256 B, 17% 257..4096 B, 3% 4097..32768 B
//   prodcons     N producers + N consumers (--threads=1: 1 + 1 threads, 2: 2 + 2, so 4
//                threads on this 2-core machine): producers allocate blocks of 16..1024 B
//                (70% <= 128 B, 25% <= 512 B), write a two-word header, and hand them in
//                batches of 256 pointers through one bounded queue (16 batches, a mutex
//                held for a 2 KiB copy; waiting spins, then yields) to the consumers,
//                which check the header and free the block with the size it names: every
//                block is freed by another thread than the one that allocated it.
//                One op = one block allocated, handed over and freed.
// Sizes are read from a table on every op, opaque to the compiler (the pool's run-time
// size path), for every allocator alike. The same work per thread at 1 and 2 threads.
//
// Each run: the worker threads start once; a warm-up repetition (not timed), then R
// timed repetitions of K ops per thread (per producer), threads released together by a
// barrier. Prints one JSON result line (bench::print_result):
//   {"kind": "threads", "allocator", "workload", "threads", "workers", "reps",
//    "ops_per_thread", "ns_per_op", "ns_per_op_min", "cpu_ns_per_op", "baseline_kib",
//    "peak_rss_kib", "net_peak_kib"}
// ns_per_op = the median over repetitions of the wall time of a repetition / K (per
// thread: perfect scaling keeps it flat from 1 to 2 threads), ns_per_op_min,
// cpu_ns_per_op = the median of the worker threads' CPU time / all ops, and peak RSS
// (getrusage ru_maxrss) with its baseline taken before the first block is allocated:
// net_peak_kib = peak - baseline.
//
// Deterministic work (fixed seeds); the results are checked, and a failed check exits 1
// naming it: every header read back as written, no two live blocks overlap (churn, after
// the last repetition), as many blocks and bytes consumed as produced (prodcons).
#include "harness.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

enum class workload { churn32, churn_mixed, prodcons };

struct options {
    std::string alloc;
    workload work = workload::churn32;
    std::string work_name;
    int threads = 1;
    int reps = 5;
    std::size_t ops = 0; // 0: the workload's default
};

// ---------------------------------------------------------------------------------
// Seeded tables: sizes and ring slots, shared read-only by every thread.
// ---------------------------------------------------------------------------------

constexpr std::size_t table_size = std::size_t{1} << 16;
constexpr std::size_t table_mask = table_size - 1;

struct splitmix64 {
    std::uint64_t s;
    std::uint64_t next() noexcept {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    std::uint32_t in(std::uint32_t lo, std::uint32_t hi) noexcept { // [lo, hi]
        return lo + static_cast<std::uint32_t>(next() % (hi - lo + 1));
    }
};

struct tables {
    std::vector<std::uint32_t> size;
    std::vector<std::uint32_t> slot;
    std::uint32_t ring = 0;
};

tables make_tables(workload w) {
    tables t;
    t.size.resize(table_size);
    t.slot.resize(table_size);
    splitmix64 rng{w == workload::churn32 ? 32u : w == workload::churn_mixed ? 0x5eedu : 0xc0deu};
    t.ring = w == workload::churn32 ? 4096 : 1024;
    for (std::size_t i = 0; i < table_size; ++i) {
        const std::uint32_t pick = rng.in(0, 99);
        switch (w) {
        case workload::churn32:
            t.size[i] = 32;
            break;
        case workload::churn_mixed:
            t.size[i] = pick < 80   ? rng.in(8, 256)
                        : pick < 97 ? rng.in(257, 4096)
                                    : rng.in(4097, 32768);
            break;
        case workload::prodcons:
            t.size[i] = pick < 70   ? rng.in(16, 128)
                        : pick < 95 ? rng.in(129, 512)
                                    : rng.in(513, 1024);
            break;
        }
        t.slot[i] = rng.in(0, t.ring - 1);
    }
    return t;
}

/// Where thread `t` starts in the tables: the threads do not run the same sequence.
constexpr std::size_t table_offset(int t) {
    return static_cast<std::size_t>(t) * 40503u;
}

// ---------------------------------------------------------------------------------
// Measurement helpers.
// ---------------------------------------------------------------------------------

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "threads_benchmark: check failed: %s\n", what);
    std::fflush(stderr);
    std::_Exit(1);
}

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/// Waiting for the other side: spin a little, then give the core away (prodcons at 2
/// runs 4 threads on 2 cores).
inline void backoff(unsigned& spins) noexcept {
    if (spins++ < 64)
        cpu_relax();
    else
        std::this_thread::yield();
}

/// The word written into each block: its address, its size and the writer's salt.
inline std::uint64_t tag_of(const void* p, std::uint64_t bytes, std::uint64_t salt) noexcept {
    return (reinterpret_cast<std::uintptr_t>(p) ^ (bytes << 40) ^ salt) * 0x9e3779b97f4a7c15ull;
}

/// What each repetition hands back: the wall time (the main thread) and every worker's
/// CPU time.
struct rep_times {
    std::vector<double> wall_ns;
    std::vector<double> cpu_ns; // sum over the workers, per repetition
};

/// Phases run by every worker between two barrier crossings. The main thread takes the
/// wall time of a phase from just before it releases the workers to the moment the last
/// one arrives at the end.
class phases {
  public:
    explicit phases(int workers)
        : start_(workers + 1), done_(workers + 1), cpu_(static_cast<std::size_t>(workers)) {}
    /// Worker side: wait for the start, run `f`, record its CPU time, arrive at the end.
    template <class F>
    void worker(int index, F&& f) {
        start_.arrive_and_wait();
        const double c0 = bench::thread_cpu_seconds();
        f();
        cpu_[static_cast<std::size_t>(index)] = bench::thread_cpu_seconds() - c0;
        done_.arrive_and_wait();
    }
    /// Main side: release the workers, wait for them; (wall ns, CPU ns of all workers).
    std::pair<double, double> run() {
        const auto t0 = clock_type::now();
        start_.arrive_and_wait();
        done_.arrive_and_wait();
        const auto t1 = clock_type::now();
        double cpu = 0;
        for (double c : cpu_)
            cpu += c;
        return {std::chrono::duration<double, std::nano>(t1 - t0).count(), cpu * 1e9};
    }

  private:
    std::barrier<> start_;
    std::barrier<> done_;
    std::vector<double> cpu_; // written by its worker before `done`, read after it
};

// ---------------------------------------------------------------------------------
// churn: each thread allocates and frees its own blocks.
// ---------------------------------------------------------------------------------

struct ring {
    std::vector<void*> ptr;
    std::vector<std::uint32_t> size;
};

template <class Peer>
struct churn_thread {
    Peer a{0};
    const tables& tb;
    ring& r;
    std::uint64_t salt;
    std::size_t next = 0; // the next op's index into the tables
    std::size_t bad = 0;

    churn_thread(const tables& t, ring& rr, int index)
        : tb(t), r(rr), salt(0x1234567ull * static_cast<std::uint64_t>(index + 1)),
          next(table_offset(index)) {}

    void fill() {
        bench::escape(a);
        for (std::uint32_t k = 0; k < tb.ring; ++k) {
            const std::uint32_t n = tb.size[(next + k * 7u) & table_mask];
            void* p = a.alloc(n);
            if (p == nullptr)
                fail("out of memory");
            *static_cast<std::uint64_t*>(p) = tag_of(p, n, salt);
            r.ptr[k] = p;
            r.size[k] = n;
        }
    }
    void churn(std::size_t ops) {
        const std::uint32_t* const sizes = tb.size.data();
        const std::uint32_t* const slots = tb.slot.data();
        void** const ptr = r.ptr.data();
        std::uint32_t* const size = r.size.data();
        std::size_t i = next;
        for (const std::size_t end = next + ops; i != end; ++i) {
            const std::uint32_t k = slots[i & table_mask];
            void* const old = ptr[k];
            const std::uint32_t old_n = size[k];
            bad += *static_cast<const std::uint64_t*>(old) != tag_of(old, old_n, salt);
            a.free(old, old_n);
            const std::uint32_t n = sizes[i & table_mask];
            void* const p = a.alloc(n);
            if (p == nullptr) [[unlikely]]
                fail("out of memory");
            *static_cast<std::uint64_t*>(p) = tag_of(p, n, salt);
            ptr[k] = p;
            size[k] = n;
        }
        next = i;
    }
    void release() {
        for (std::uint32_t k = 0; k < tb.ring; ++k)
            a.free(r.ptr[k], r.size[k]);
    }
};

/// No two live blocks of any thread overlap (their requested sizes).
void check_disjoint(const std::vector<ring>& rings) {
    std::vector<std::pair<std::uintptr_t, std::uint32_t>> all;
    for (const ring& r : rings)
        for (std::size_t k = 0; k < r.ptr.size(); ++k)
            all.emplace_back(reinterpret_cast<std::uintptr_t>(r.ptr[k]), r.size[k]);
    std::sort(all.begin(), all.end());
    for (std::size_t i = 1; i < all.size(); ++i)
        if (all[i - 1].first + all[i - 1].second > all[i].first)
            fail("two live blocks overlap (a block handed out twice)");
}

struct run_result {
    rep_times times;
    std::size_t ops_per_thread = 0;
    std::size_t total_ops = 0;
    bench::rss_baseline baseline; // once the threads exist, before the first block
};

template <class Peer>
run_result run_churn(const options& o, const tables& tb) {
    const int n = o.threads;
    const std::size_t ops = o.ops;
    std::vector<ring> rings(static_cast<std::size_t>(n));
    for (ring& r : rings) {
        r.ptr.assign(tb.ring, nullptr);
        r.size.assign(tb.ring, 0);
    }
    phases ph(n);
    std::vector<std::size_t> bad(static_cast<std::size_t>(n), 0);
    std::vector<std::thread> workers;
    for (int t = 0; t < n; ++t)
        workers.emplace_back([&, t] {
            churn_thread<Peer> c(tb, rings[static_cast<std::size_t>(t)], t);
            ph.worker(t, [&] { c.fill(); });
            for (int rep = 0; rep <= o.reps; ++rep) // the first: warm-up
                ph.worker(t, [&] { c.churn(ops); });
            ph.worker(t, [] {}); // the main thread checks the rings meanwhile
            ph.worker(t, [&] { c.release(); });
            bad[static_cast<std::size_t>(t)] = c.bad;
        });
    run_result out;
    out.baseline = bench::rss_baseline::take();
    ph.run(); // fill
    ph.run(); // warm-up
    for (int rep = 0; rep < o.reps; ++rep) {
        const auto [wall, cpu] = ph.run();
        out.times.wall_ns.push_back(wall);
        out.times.cpu_ns.push_back(cpu);
    }
    ph.run(); // the workers wait at the barrier: their rings hold still
    check_disjoint(rings);
    ph.run(); // release
    for (std::thread& w : workers)
        w.join();
    for (std::size_t b : bad)
        if (b != 0)
            fail("a block's word changed while it was live");
    out.ops_per_thread = ops;
    out.total_ops = ops * static_cast<std::size_t>(n);
    return out;
}

// ---------------------------------------------------------------------------------
// prodcons: blocks allocated on one thread, freed on another.
// ---------------------------------------------------------------------------------

constexpr std::size_t batch_blocks = 256;
constexpr std::size_t queue_batches = 16;
constexpr std::uint64_t header_key = 0x5bd1e9955bd1e995ull;

struct batch {
    std::uint32_t count = 0; // 0: the producer's end-of-repetition marker
    std::array<void*, batch_blocks> blocks{};
};

/// A bounded FIFO of batches under a mutex held for one copy. Waiting is outside it: a
/// waiter watches the count (no lock taken) and locks only when it may proceed.
class batch_queue {
  public:
    void push(const batch& b) {
        for (unsigned spins = 0;; backoff(spins)) {
            if (size_.load(std::memory_order_relaxed) == queue_batches)
                continue;
            const std::lock_guard<std::mutex> lock(m_);
            const std::size_t n = size_.load(std::memory_order_relaxed);
            if (n < queue_batches) {
                copy(slots_[(head_ + n) % queue_batches], b);
                size_.store(n + 1, std::memory_order_relaxed);
                return;
            }
        }
    }
    void pop(batch& b) {
        for (unsigned spins = 0;; backoff(spins)) {
            if (size_.load(std::memory_order_relaxed) == 0)
                continue;
            const std::lock_guard<std::mutex> lock(m_);
            const std::size_t n = size_.load(std::memory_order_relaxed);
            if (n > 0) {
                copy(b, slots_[head_]);
                head_ = (head_ + 1) % queue_batches;
                size_.store(n - 1, std::memory_order_relaxed);
                return;
            }
        }
    }

  private:
    static void copy(batch& to, const batch& from) {
        to.count = from.count;
        std::memcpy(to.blocks.data(), from.blocks.data(), from.count * sizeof(void*));
    }
    std::mutex m_;
    std::atomic<std::size_t> size_{0}; // written under m_; read anywhere to wait
    std::array<batch, queue_batches> slots_{};
    std::size_t head_ = 0; // under m_
};

struct prodcons_totals {
    std::uint64_t blocks = 0;
    std::uint64_t bytes = 0;
    std::uint64_t bad = 0;
};

template <class Peer>
void produce(const tables& tb, batch_queue& q, int index, std::size_t ops, std::size_t& next,
             prodcons_totals& out) {
    Peer a(0);
    bench::escape(a);
    batch b;
    const std::uint32_t* const sizes = tb.size.data();
    const std::uint64_t id = static_cast<std::uint64_t>(index + 1) << 32;
    for (std::size_t i = next, end = next + ops; i != end; ++i) {
        const std::uint32_t n = sizes[i & table_mask];
        auto* const p = static_cast<std::uint64_t*>(a.alloc(n));
        if (p == nullptr) [[unlikely]]
            fail("out of memory");
        p[0] = id | n;
        p[1] = reinterpret_cast<std::uintptr_t>(p) ^ p[0] ^ header_key;
        out.bytes += n;
        b.blocks[b.count++] = p;
        if (b.count == batch_blocks) {
            q.push(b);
            b.count = 0;
        }
    }
    if (b.count != 0)
        q.push(b);
    b.count = 0;
    q.push(b); // end of this producer's repetition
    out.blocks += ops;
    next += ops;
}

template <class Peer>
void consume(batch_queue& q, prodcons_totals& out) {
    Peer a(0);
    bench::escape(a);
    batch b;
    for (;;) {
        q.pop(b);
        if (b.count == 0)
            return; // one marker per consumer: the last marker is the queue's last batch
        for (std::uint32_t i = 0; i < b.count; ++i) {
            auto* const p = static_cast<std::uint64_t*>(b.blocks[i]);
            const std::uint64_t h = p[0];
            out.bad += p[1] != (reinterpret_cast<std::uintptr_t>(p) ^ h ^ header_key);
            const std::uint32_t n = static_cast<std::uint32_t>(h);
            out.bytes += n;
            a.free(p, n);
        }
        out.blocks += b.count;
    }
}

template <class Peer>
run_result run_prodcons(const options& o, const tables& tb) {
    const int pairs = o.threads;
    const std::size_t ops = o.ops;
    static batch_queue q; // static storage: not the measured allocator's
    phases ph(2 * pairs);
    std::vector<prodcons_totals> made(static_cast<std::size_t>(pairs));
    std::vector<prodcons_totals> freed(static_cast<std::size_t>(pairs));
    std::vector<std::thread> workers;
    for (int t = 0; t < pairs; ++t) {
        workers.emplace_back([&, t] {
            std::size_t next = table_offset(t);
            for (int rep = 0; rep <= o.reps; ++rep)
                ph.worker(t, [&] {
                    produce<Peer>(tb, q, t, ops, next, made[static_cast<std::size_t>(t)]);
                });
        });
        workers.emplace_back([&, t] {
            for (int rep = 0; rep <= o.reps; ++rep)
                ph.worker(pairs + t, [&] { consume<Peer>(q, freed[static_cast<std::size_t>(t)]); });
        });
    }
    run_result out;
    out.baseline = bench::rss_baseline::take();
    ph.run(); // warm-up
    for (int rep = 0; rep < o.reps; ++rep) {
        const auto [wall, cpu] = ph.run();
        out.times.wall_ns.push_back(wall);
        out.times.cpu_ns.push_back(cpu);
    }
    for (std::thread& w : workers)
        w.join();
    prodcons_totals m, f;
    for (const auto& x : made) {
        m.blocks += x.blocks;
        m.bytes += x.bytes;
    }
    for (const auto& x : freed) {
        f.blocks += x.blocks;
        f.bytes += x.bytes;
        f.bad += x.bad;
    }
    if (f.bad != 0)
        fail("a block's header changed between its producer and its consumer");
    if (m.blocks != f.blocks || m.bytes != f.bytes)
        fail("the consumers did not free what the producers allocated");
    out.ops_per_thread = ops;
    out.total_ops = ops * static_cast<std::size_t>(pairs);
    return out;
}

// ---------------------------------------------------------------------------------

template <class Peer>
int run(const options& o) {
    if (!Peer::available()) {
        std::fprintf(stderr, "threads_benchmark: %s is not available here\n", o.alloc.c_str());
        return 3;
    }
    const tables tb = make_tables(o.work);
    const run_result r =
        o.work == workload::prodcons ? run_prodcons<Peer>(o, tb) : run_churn<Peer>(o, tb);
    const bench::rss_peak rss = r.baseline.peak();
    std::vector<double> per_op, cpu_per_op;
    for (std::size_t i = 0; i < r.times.wall_ns.size(); ++i) {
        per_op.push_back(r.times.wall_ns[i] / static_cast<double>(r.ops_per_thread));
        cpu_per_op.push_back(r.times.cpu_ns[i] / static_cast<double>(r.total_ops));
    }
    const int workers = o.work == workload::prodcons ? 2 * o.threads : o.threads;
    bench::print_result(
        "threads", o.alloc,
        {{"workload", o.work_name},
         {"threads", o.threads},
         {"workers", workers},
         {"reps", o.reps},
         {"ops_per_thread", r.ops_per_thread},
         {"ns_per_op", bench::decimal{bench::median(per_op), 3}},
         {"ns_per_op_min", bench::decimal{*std::min_element(per_op.begin(), per_op.end()), 3}},
         {"cpu_ns_per_op", bench::decimal{bench::median(cpu_per_op), 3}},
         {"baseline_kib", rss.baseline_kib},
         {"peak_rss_kib", rss.peak_kib},
         {"net_peak_kib", rss.net_kib()}});
    return 0;
}

struct threads_tag {};
using sta_spans = bench::pool_peer<bench::pools::sta_spans, threads_tag>;
using sta_spans_seed = bench::pool_peer<bench::pools::sta_spans_seed, threads_tag>;
static_assert(sta_spans::pool::per_thread, "sta-spans: the per-thread default");
static_assert(!sta_spans_seed::pool::per_thread, "sta-spans-seed: one pool for the program");
using rows =
    bench::allocators<sta_spans, sta_spans_seed, bench::malloc_peer, bench::mimalloc_dl_peer>;

bool value_of(const char* arg, const char* key, std::string& out) {
    const std::size_t n = std::strlen(key);
    if (std::strncmp(arg, key, n) != 0 || arg[n] != '=')
        return false;
    out = arg + n + 1;
    return true;
}

int usage(const char* why) {
    std::fprintf(stderr,
                 "threads_benchmark: %s\nusage: threads_benchmark --alloc=<%s> "
                 "--workload=<churn32|churn_mixed|prodcons> --threads=<1|2> [--reps=R] "
                 "[--ops=K]\n",
                 why, rows::names().c_str());
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string v;
        if (value_of(argv[i], "--alloc", v)) {
            o.alloc = v;
        } else if (value_of(argv[i], "--workload", v)) {
            o.work_name = v;
            if (v == "churn32")
                o.work = workload::churn32;
            else if (v == "churn_mixed")
                o.work = workload::churn_mixed;
            else if (v == "prodcons")
                o.work = workload::prodcons;
            else
                return usage("unknown workload");
        } else if (value_of(argv[i], "--threads", v)) {
            o.threads = std::atoi(v.c_str());
        } else if (value_of(argv[i], "--reps", v)) {
            o.reps = std::atoi(v.c_str());
        } else if (value_of(argv[i], "--ops", v)) {
            o.ops = static_cast<std::size_t>(std::strtoull(v.c_str(), nullptr, 10));
        } else {
            return usage("unknown argument");
        }
    }
    if (o.alloc.empty() || o.work_name.empty())
        return usage("--alloc and --workload are required");
    if (o.threads < 1 || o.threads > 64 || o.reps < 1)
        return usage("--threads must be 1..64 and --reps at least 1");
    if (o.ops == 0)
        o.ops = o.work == workload::churn32       ? 2'000'000
                : o.work == workload::churn_mixed ? 1'000'000
                                                  : 500'000;
    const auto status = rows::call(o.alloc, [&]<class Peer>() {
        if constexpr (std::is_same_v<Peer, sta_spans_seed>)
            if (o.work == workload::prodcons || o.threads != 1)
                return usage("sta-spans-seed (threads::one_owner) allows one thread: churn at "
                             "--threads=1 only");
        return run<Peer>(o);
    });
    return status ? *status : usage("unknown allocator");
}
