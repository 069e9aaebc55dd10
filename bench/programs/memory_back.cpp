// What stays resident after a program frees: a plain malloc/free program, run unchanged
// under every allocator (LD_PRELOAD) by bench/programs/run_memory_back.sh.
//
//   memory_back MODE [MIB] [ACTIVITY_MS] [BLOCKS_PER_MS]
//
// It allocates MIB MiB (default 1024) in blocks of 16 B to 4 KiB (sizes log-uniform from
// a fixed seed), writing every block, then frees as MODE says:
//
//   all          every block
//   older_half   the older half, in allocation order (the newer half stays live)
//   after_exit   every block, from the main thread, after the thread that allocated
//                them all has ended
//   tree         the tree scenario of the benchmarks (bench/scenarios.hpp: a map of
//                string keys to vectors of nodes, each with a string, a vector and a
//                map of strings), through std::allocator, so through malloc: built to
//                about MIB MiB, shaken once (a quarter of its keys erased and as many
//                inserted, a quarter of its vectors regrown) and destroyed
//
// and then keeps working for ACTIVITY_MS milliseconds (default 1000): every millisecond
// it allocates BLOCKS_PER_MS blocks (default 8) of 16 B to 4 KiB, writes them and frees
// them. Output, one JSON line:
//   {"kind": "memory_back", "mode": ..., "mib": MIB, "activity_ms": ...,
//    "blocks_per_ms": ..., "baseline_kib": RssAnon before the first block, "peak_kib":
//    after the last block (tree: before it is destroyed), "after_kib": at the end of
//    the activity, "after_share": (after - baseline) / (peak - baseline)}
// RssAnon (/proc/self/status) counts the anonymous pages the process has resident: the
// heap's, not the program's code or files.
//
// No header of sta-pool: under LD_PRELOAD this is any program, and libsta_malloc.so is
// one allocator among the others.
#include "../scenarios.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// Through volatile pointers: the compiler may not pair a malloc with its free and drop
// both.
void* (*volatile malloc_fn)(std::size_t) = &std::malloc;
void (*volatile free_fn)(void*) = &std::free;

long rss_anon_kib() {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (f == nullptr)
        return -1;
    char line[256];
    long kib = -1;
    while (std::fgets(line, sizeof line, f) != nullptr)
        if (std::strncmp(line, "RssAnon:", 8) == 0)
            kib = std::strtol(line + 8, nullptr, 10);
    std::fclose(f);
    return kib;
}

struct splitmix64 {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    /// 16 B .. 4 KiB, log-uniform: 2^(4 + 8 u).
    std::size_t size() {
        const double u = static_cast<double>(next() >> 11) * 0x1.0p-53;
        return static_cast<std::size_t>(16.0 * __builtin_exp2(8.0 * u));
    }
};

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "memory_back: %s\n", what);
    std::exit(1);
}

std::vector<void*> allocate(std::size_t bytes, std::uint64_t seed) {
    splitmix64 rng{seed};
    std::vector<void*> blocks;
    for (std::size_t total = 0; total < bytes;) {
        const std::size_t n = rng.size();
        auto* p = static_cast<unsigned char*>(malloc_fn(n));
        if (p == nullptr)
            fail("out of memory");
        std::memset(p, static_cast<int>(n & 0xff), n);
        blocks.push_back(p);
        total += n;
    }
    return blocks;
}

/// What a program that keeps running does after its big free: every millisecond,
/// `blocks_per_ms` blocks of 16 B to 4 KiB allocated, written and freed.
void keep_working(int milliseconds, int blocks_per_ms) {
    splitmix64 rng{42};
    std::vector<void*> held(static_cast<std::size_t>(blocks_per_ms));
    const auto start = std::chrono::steady_clock::now();
    for (int ms = 0; ms < milliseconds; ++ms) {
        for (void*& p : held) {
            const std::size_t n = rng.size();
            p = malloc_fn(n);
            if (p == nullptr)
                fail("out of memory");
            std::memset(p, 1, n);
        }
        for (void* p : held)
            free_fn(p);
        std::this_thread::sleep_until(start + std::chrono::milliseconds(ms + 1));
    }
}

/// The tree's keys for about `bytes` of RSS: a key's 16 nodes take about 12 KiB
/// resident under glibc, shaken once (1024 MiB: 87,381 keys).
constexpr std::size_t tree_key_bytes = 12 << 10;
int tree_keys_for(std::size_t bytes) {
    return static_cast<int>(std::max<std::size_t>(bytes / tree_key_bytes, 4));
}

struct settings {
    std::string mode;
    std::size_t mib = 1024;
    int activity_ms = 1000;
    int blocks_per_ms = 8;
};

[[noreturn]] void usage() {
    std::fprintf(stderr, "usage: memory_back all|older_half|after_exit|tree [MIB] [ACTIVITY_MS] "
                         "[BLOCKS_PER_MS]\n");
    std::exit(2);
}

int positive(const char* text) {
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || value <= 0 || value > 1 << 20)
        usage();
    return static_cast<int>(value);
}

settings parse(int argc, char** argv) {
    if (argc < 2 || argc > 5)
        usage();
    settings run;
    run.mode = argv[1];
    if (argc > 2)
        run.mib = static_cast<std::size_t>(positive(argv[2]));
    if (argc > 3)
        run.activity_ms = positive(argv[3]);
    if (argc > 4)
        run.blocks_per_ms = positive(argv[4]);
    return run;
}

/// Keeps working as `run` says, then prints the line.
void keep_working_and_report(const settings& run, long baseline, long peak) {
    keep_working(run.activity_ms, run.blocks_per_ms);
    const long after = rss_anon_kib();
    std::printf("{\"kind\": \"memory_back\", \"mode\": \"%s\", \"mib\": %zu, "
                "\"activity_ms\": %d, \"blocks_per_ms\": %d, \"baseline_kib\": %ld, "
                "\"peak_kib\": %ld, \"after_kib\": %ld, \"after_share\": %.4f}\n",
                run.mode.c_str(), run.mib, run.activity_ms, run.blocks_per_ms, baseline, peak,
                after,
                static_cast<double>(after - baseline) / static_cast<double>(peak - baseline));
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
    const settings run = parse(argc, argv);
    const std::size_t bytes = run.mib << 20;
    const long baseline = rss_anon_kib();
    if (run.mode == "all" || run.mode == "older_half") {
        std::vector<void*> blocks = allocate(bytes, 1);
        const long peak = rss_anon_kib();
        const std::size_t freed = run.mode == "all" ? blocks.size() : blocks.size() / 2;
        for (std::size_t i = 0; i < freed; ++i)
            free_fn(blocks[i]);
        keep_working_and_report(run, baseline, peak);
        for (std::size_t i = freed; i < blocks.size(); ++i)
            free_fn(blocks[i]);
    } else if (run.mode == "after_exit") {
        std::vector<void*> blocks;
        std::thread([&] { blocks = allocate(bytes, 1); }).join();
        const long peak = rss_anon_kib();
        for (void* p : blocks)
            free_fn(p);
        keep_working_and_report(run, baseline, peak);
    } else if (run.mode == "tree") {
        long peak = 0;
        bench::tree_round<std::allocator>(tree_keys_for(bytes), 1,
                                          [&peak] { peak = rss_anon_kib(); });
        keep_working_and_report(run, baseline, peak);
    } else {
        usage();
    }
    return 0;
}
