// sta-pool: sta::thread_heap against glibc malloc and mimalloc (dlopen) on the mid-size
// mix of issue 7 — blocks of 32 KiB .. 512 KiB churned over a live set.
//
// The workload (the same precomputed sequence for every allocator): a live set of
// `live_slots` slots; each operation picks a slot, frees its block (if any) and puts a
// fresh block of a random size in [32 KiB, 512 KiB] there, writing its first and last
// byte. One benchmark iteration = one operation. The live set is filled before timing.
//
//   thread_heap_benchmark [google benchmark flags]        time per operation
//   thread_heap_benchmark --rss <allocator> [ops]         peak RSS of a child process
//                                                         that runs the mix touching
//                                                         every page of every block:
//                                                         {"kind": "rss", "allocator",
//                                                          "peak_rss_kib"}
//   thread_heap_benchmark --ops <allocator> <ops>         run the mix only (for
//                                                         valgrind --tool=callgrind:
//                                                         Ir(2N) - Ir(N) over N ops)
//   allocator: thread_heap | malloc | mimalloc-dlopen (mimalloc through dlopen; the
//   benchmark rows name it mix_32k_512k/mimalloc)
#include "harness.hpp"

#include <sta/thread_heap.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr std::size_t live_slots = 256;
constexpr std::size_t sequence_length = 1 << 16;
constexpr std::size_t min_bytes = 32 * 1024;
constexpr std::size_t max_bytes = 512 * 1024;

struct step {
    std::uint32_t slot;
    std::uint32_t bytes;
};

const std::vector<step>& sequence() {
    static const std::vector<step> s = [] {
        std::mt19937_64 rng(0x7eab5eedULL);
        std::vector<step> v(sequence_length);
        for (step& x : v) {
            x.slot = static_cast<std::uint32_t>(rng() % live_slots);
            x.bytes = static_cast<std::uint32_t>(min_bytes + rng() % (max_bytes - min_bytes + 1));
        }
        return v;
    }();
    return s;
}

struct thread_heap_peer {
    static constexpr const char* name = "thread_heap";
    static bool available() { return true; }
    sta::thread_heap heap;
    explicit thread_heap_peer(std::size_t) {}
    void* alloc(std::size_t bytes) { return heap.alloc(bytes); }
    void free(void* p, std::size_t bytes) { heap.free(p, bytes); }
};

/// The mix over one allocator: a live set and a cursor into the shared sequence.
template <class Peer>
struct mix {
    Peer peer{0};
    void* blocks[live_slots] = {};
    std::uint32_t sizes[live_slots] = {};
    std::size_t next = 0;
    bool touch_all = false;

    mix() {
        for (std::size_t i = 0; i < live_slots; ++i)
            put(i, sequence()[i].bytes);
    }
    ~mix() {
        for (std::size_t i = 0; i < live_slots; ++i)
            peer.free(blocks[i], sizes[i]);
    }
    void put(std::size_t slot, std::uint32_t bytes) {
        auto* p = static_cast<unsigned char*>(peer.alloc(bytes));
        if (p == nullptr)
            std::abort();
        if (touch_all) {
            for (std::size_t i = 0; i < bytes; i += 4096)
                p[i] = 1;
        }
        p[0] = 1;
        p[bytes - 1] = 1;
        blocks[slot] = p;
        sizes[slot] = bytes;
    }
    void operation() {
        const step s = sequence()[next];
        next = (next + 1) % sequence_length;
        peer.free(blocks[s.slot], sizes[s.slot]);
        put(s.slot, s.bytes);
    }
};

template <class Peer>
void bm_mix(benchmark::State& state) {
    if (!Peer::available()) {
        state.SkipWithError("peer not available");
        return;
    }
    mix<Peer> m;
    for (std::size_t i = 0; i < 4 * live_slots; ++i) // warm: reach the steady state
        m.operation();
    for (auto _ : state)
        m.operation();
    state.SetItemsProcessed(state.iterations());
}

BENCHMARK(bm_mix<thread_heap_peer>)->Name("mix_32k_512k/thread_heap");
BENCHMARK(bm_mix<bench::malloc_peer>)->Name("mix_32k_512k/malloc");
BENCHMARK(bm_mix<bench::mimalloc_dl_peer>)->Name("mix_32k_512k/mimalloc");

template <class Peer>
void run_ops(long ops, bool touch_all) {
    mix<Peer> m;
    m.touch_all = touch_all;
    for (long i = 0; i < ops; ++i)
        m.operation();
}

using rows = bench::allocators<thread_heap_peer, bench::malloc_peer, bench::mimalloc_dl_peer>;

int with_peer(const std::string& which, long ops, bool touch_all) {
    const auto status = rows::call(which, [&]<class Peer>() {
        if (!Peer::available())
            return 2;
        run_ops<Peer>(ops, touch_all);
        return 0;
    });
    if (!status || *status != 0) {
        std::fprintf(stderr, "unknown or unavailable allocator %s\n", which.c_str());
        return 2;
    }
    return 0;
}

/// Peak RSS of a fresh child process that runs the mix (every page touched).
int rss_main(const std::string& which, long ops) {
    const long peak = bench::child_peak_rss_kib([&] { return with_peer(which, ops, true); });
    if (peak < 0)
        return 1;
    bench::print_result("rss", which, {{"peak_rss_kib", peak}});
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc >= 3 && std::strcmp(argv[1], "--rss") == 0)
        return rss_main(argv[2], argc >= 4 ? std::atol(argv[3]) : 100000);
    if (argc >= 4 && std::strcmp(argv[1], "--ops") == 0)
        return with_peer(argv[2], std::atol(argv[3]), false);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
