// Under wine (or Windows): the pool and sta::thread_heap against the Windows heaps and
// malloc, on a small-block churn and a mid-size churn. Wine's heap is not Microsoft's:
// these figures say how the pool fares on wine, not on Windows.
//
//     tiers_benchmark [scale=1] [repetitions=7]
//
// Each allocator runs the same seeded churn: a ring of live blocks, every operation
// frees one at random and allocates a new one of a random size, touching its first
// and last byte. Time: QueryPerformanceCounter, median of the repetitions; the table
// gives ns per operation and the ratio against HeapAlloc(GetProcessHeap()).
#include <sta/memory_pool.hpp>
#include <sta/thread_heap.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

namespace {

struct churn {
    const char* name;
    std::size_t min_bytes, max_bytes, live, operations;
};

struct allocator_under_test {
    const char* name;
    void* (*alloc)(std::size_t);
    void (*free)(void*, std::size_t);
};

HANDLE private_heap = nullptr;
sta::thread_heap tlsf{};

const allocator_under_test allocators[] = {
    {"sta::memory_pool (all tiers)", [](std::size_t n) { return sta::memory_pool::alloc(n); },
     [](void* p, std::size_t n) { sta::memory_pool::free(p, n); }},
    {"sta::thread_heap", [](std::size_t n) { return tlsf.alloc(n); },
     [](void* p, std::size_t n) { tlsf.free(p, n); }},
    {"HeapAlloc(GetProcessHeap())",
     [](std::size_t n) { return ::HeapAlloc(::GetProcessHeap(), 0, n); },
     [](void* p, std::size_t) { ::HeapFree(::GetProcessHeap(), 0, p); }},
    {"HeapCreate(HEAP_NO_SERIALIZE)", [](std::size_t n) { return ::HeapAlloc(private_heap, 0, n); },
     [](void* p, std::size_t) { ::HeapFree(private_heap, 0, p); }},
    {"malloc", [](std::size_t n) { return std::malloc(n); },
     [](void* p, std::size_t) { std::free(p); }},
};

double seconds_now() {
    static const double frequency = [] {
        LARGE_INTEGER f;
        ::QueryPerformanceFrequency(&f);
        return static_cast<double>(f.QuadPart);
    }();
    LARGE_INTEGER t;
    ::QueryPerformanceCounter(&t);
    return static_cast<double>(t.QuadPart) / frequency;
}

/// ns per operation of one run of `c` on `a`.
double run(const allocator_under_test& a, const churn& c) {
    std::uint64_t state = 0x9E3779B97F4A7C15ull;
    auto next = [&state] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<std::size_t>(state >> 33);
    };
    auto size = [&] { return c.min_bytes + next() % (c.max_bytes - c.min_bytes + 1); };
    std::vector<void*> blocks(c.live);
    std::vector<std::size_t> sizes(c.live);
    for (std::size_t i = 0; i < c.live; ++i) {
        sizes[i] = size();
        blocks[i] = a.alloc(sizes[i]);
    }
    const double start = seconds_now();
    for (std::size_t op = 0; op < c.operations; ++op) {
        const std::size_t i = next() % c.live;
        a.free(blocks[i], sizes[i]);
        sizes[i] = size();
        auto* p = static_cast<unsigned char*>(a.alloc(sizes[i]));
        if (p == nullptr) {
            std::fprintf(stderr, "%s: out of memory\n", a.name);
            std::exit(1);
        }
        p[0] = 1;
        p[sizes[i] - 1] = 2;
        blocks[i] = p;
    }
    const double elapsed = seconds_now() - start;
    for (std::size_t i = 0; i < c.live; ++i)
        a.free(blocks[i], sizes[i]);
    return elapsed * 1e9 / static_cast<double>(c.operations);
}

} // namespace

int main(int argc, char** argv) {
    const double scale = argc > 1 ? std::atof(argv[1]) : 1.0;
    const int repetitions = argc > 2 ? std::atoi(argv[2]) : 7;
    if (scale <= 0 || repetitions <= 0) {
        std::fprintf(stderr, "usage: tiers_benchmark [scale>0] [repetitions>0]\n");
        return 2;
    }
    private_heap = ::HeapCreate(HEAP_NO_SERIALIZE, 0, 0);
    const churn churns[] = {
        {"small, 16..512 B", 16, 512, 4096, static_cast<std::size_t>(400000 * scale) + 1},
        {"mid, 32..512 KiB", 32 * 1024 + 1, 512 * 1024, 64,
         static_cast<std::size_t>(40000 * scale) + 1},
    };
    std::printf(
        "| churn | allocator | ns per op (median of %d) | x vs HeapAlloc(GetProcessHeap()) |\n",
        repetitions);
    std::printf("|---|---|---:|---:|\n");
    for (const churn& c : churns) {
        double medians[std::size(allocators)];
        for (std::size_t k = 0; k < std::size(allocators); ++k) {
            std::vector<double> times;
            for (int r = 0; r < repetitions; ++r)
                times.push_back(run(allocators[k], c));
            std::nth_element(times.begin(), times.begin() + repetitions / 2, times.end());
            medians[k] = times[static_cast<std::size_t>(repetitions / 2)];
        }
        for (std::size_t k = 0; k < std::size(allocators); ++k)
            std::printf("| %s | %s | %.1f | %.2fx |\n", c.name, allocators[k].name, medians[k],
                        medians[2] / medians[k]);
    }
    return 0;
}
