// What stays resident after a program frees: a plain malloc/free program, run unchanged
// under every allocator (LD_PRELOAD) by bench/programs/run_memory_back.sh.
//
//   memory_back MODE [MIB] [LIGHT_MS]
//
// It allocates MIB MiB (default 1024) in blocks of 16 B to 4 KiB (sizes log-uniform from
// a fixed seed), writing every block, then frees as MODE says:
//
//   all          every block
//   older_half   the older half, in allocation order (the newer half stays live)
//   after_exit   every block, from the main thread, after the thread that allocated
//                them all has ended
//   document     a document-shaped heap (a std::map of string keys to vectors of
//                strings, through std::allocator, so through malloc) built to MIB MiB
//                and destroyed
//
// and then runs lightly for LIGHT_MS milliseconds (default 1000): every millisecond it
// allocates 8 blocks of 16 B to 4 KiB, writes them and frees them. Output, one JSON line:
//   {"kind": "memory_back", "mode": ..., "baseline_kib": RssAnon before the first
//    block, "peak_kib": after the last block, "after_kib": at the end,
//    "after_share": (after - baseline) / (peak - baseline)}
// RssAnon (/proc/self/status) counts the anonymous pages the process has resident: the
// heap's, not the program's code or files.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
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

/// What a program that keeps running does between its real work: a few small blocks a
/// millisecond.
void run_lightly(int milliseconds) {
    splitmix64 rng{42};
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(milliseconds);
    while (std::chrono::steady_clock::now() < end) {
        void* held[8];
        for (void*& p : held) {
            const std::size_t n = rng.size();
            p = malloc_fn(n);
            if (p == nullptr)
                fail("out of memory");
            std::memset(p, 1, n);
        }
        for (void* p : held)
            free_fn(p);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

/// A document: keys to lists of strings, every string longer than the small-string
/// buffer, built to about `bytes` of payload.
using document = std::map<std::string, std::vector<std::string>>;
void build_and_destroy_document(std::size_t bytes, long& peak) {
    splitmix64 rng{7};
    auto doc = std::make_unique<document>();
    std::size_t total = 0;
    for (std::size_t key = 0; total < bytes; ++key) {
        std::vector<std::string>& values = (*doc)["element-" + std::to_string(key)];
        const std::size_t count = 1 + rng.next() % 12;
        for (std::size_t i = 0; i < count; ++i) {
            values.emplace_back(rng.size(), 'x');
            total += values.back().size();
        }
    }
    peak = rss_anon_kib();
    doc.reset();
}

void report(const std::string& mode, long baseline, long peak, long after) {
    std::printf("{\"kind\": \"memory_back\", \"mode\": \"%s\", \"baseline_kib\": %ld, "
                "\"peak_kib\": %ld, \"after_kib\": %ld, \"after_share\": %.4f}\n",
                mode.c_str(), baseline, peak, after,
                static_cast<double>(after - baseline) / static_cast<double>(peak - baseline));
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: memory_back all|older_half|after_exit|document [MIB] "
                             "[LIGHT_MS]\n");
        return 2;
    }
    const std::string mode = argv[1];
    const std::size_t bytes = (argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1024) << 20;
    const int light_ms = argc > 3 ? std::atoi(argv[3]) : 1000;
    const long baseline = rss_anon_kib();
    long peak = 0;
    if (mode == "all" || mode == "older_half") {
        std::vector<void*> blocks = allocate(bytes, 1);
        peak = rss_anon_kib();
        const std::size_t freed = mode == "all" ? blocks.size() : blocks.size() / 2;
        for (std::size_t i = 0; i < freed; ++i)
            free_fn(blocks[i]);
        run_lightly(light_ms);
        report(mode, baseline, peak, rss_anon_kib());
        for (std::size_t i = freed; i < blocks.size(); ++i)
            free_fn(blocks[i]);
        return 0;
    }
    if (mode == "after_exit") {
        std::vector<void*> blocks;
        std::thread([&] { blocks = allocate(bytes, 1); }).join();
        peak = rss_anon_kib();
        for (void* p : blocks)
            free_fn(p);
    } else if (mode == "document") {
        build_and_destroy_document(bytes, peak);
    } else {
        fail("unknown mode");
    }
    run_lightly(light_ms);
    report(mode, baseline, peak, rss_anon_kib());
    return 0;
}
