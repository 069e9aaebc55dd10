// sta-pool: measurements that need a fresh process each — cold start and scale.
//
//   process_benchmark cold <allocator>   1,000,000 × 32 B allocated and first-touched
//                                        (one word written per block) in a process
//                                        that has allocated nothing yet
//   process_benchmark phase <allocator>  64 MiB in 16 B blocks, all freed, then 64 MiB
//                                        in 1 KiB blocks: peak RSS over the baseline
//   process_benchmark scale <allocator>  32 B blocks; the live set grows 10^3 .. 10^7:
//                                        `grow` = ns per alloc + touch while it grows to
//                                        each size, `churn` = ns per free + alloc +
//                                        touch pair over the live ring at that size
//
// Each run prints one JSON object per line. Allocators: the pool variants (sta-table,
// sta-branch: the seed's shared-cursor layout; sta-spans-table, sta-spans-branch: the
// span layout); for the phase change sta-cursor and sta-spans, the default dispatch in
// each layout; for cold start also sta-spans+prefault and sta-spans+thp (the span
// layout's set_prefault and set_huge_pages) and the default pool with other page
// sources swapped in through its white-box state (MAP_POPULATE; 2 MiB pages with
// madvise(MADV_HUGEPAGE); both); malloc (jemalloc / tcmalloc / mimalloc when run under
// LD_PRELOAD), mimalloc through dlopen, the pmr resources, foonathan and boost pools.
#include "peers.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <sys/resource.h>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
constexpr std::size_t block_bytes = 32;

struct cold_tag {};
struct scale_tag {};

// Page sources for the cold-start experiment (the pool's own is plain mmap).
void* populate_pages(std::size_t bytes) noexcept {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}
/// `bytes` aligned to 2 MiB (over-map and trim), then madvise(MADV_HUGEPAGE).
void* huge_pages(std::size_t bytes, bool populate) noexcept {
    const std::size_t huge = std::size_t{2} << 20;
    void* raw =
        ::mmap(nullptr, bytes + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return nullptr;
    const auto base = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t aligned = (base + huge - 1) & ~(huge - 1);
    if (aligned > base)
        ::munmap(raw, aligned - base);
    const std::uintptr_t tail = base + bytes + huge - (aligned + bytes);
    if (tail > 0)
        ::munmap(reinterpret_cast<void*>(aligned + bytes), tail);
    void* p = reinterpret_cast<void*>(aligned);
    ::madvise(p, bytes, MADV_HUGEPAGE);
    if (populate)
        ::madvise(p, bytes, MADV_POPULATE_WRITE);
    return p;
}
void* thp_pages(std::size_t bytes) noexcept {
    return huge_pages(bytes, false);
}
void* thp_populate_pages(std::size_t bytes) noexcept {
    return huge_pages(bytes, true);
}

template <class Peer>
void run_cold(const char* name) {
    constexpr std::size_t count = 1'000'000;
    std::vector<void*> kept(count); // faulted in before the clock starts
    for (void*& p : kept)
        p = nullptr;
    const auto t0 = clock_type::now();
    {
        Peer a(block_bytes);
        for (std::size_t i = 0; i < count; ++i) {
            void* p = a.alloc(block_bytes);
            *static_cast<std::size_t*>(p) = i; // first touch
            kept[i] = p;
        }
        const auto t1 = clock_type::now();
        rusage ru{};
        ::getrusage(RUSAGE_SELF, &ru);
        std::printf("{\"kind\": \"cold\", \"allocator\": \"%s\", \"blocks\": %zu, "
                    "\"ns_per_block\": %.3f, \"total_ms\": %.3f, \"peak_rss_kib\": %ld, "
                    "\"minor_faults\": %ld}\n",
                    name, count, std::chrono::duration<double, std::nano>(t1 - t0).count() / count,
                    std::chrono::duration<double, std::milli>(t1 - t0).count(), ru.ru_maxrss,
                    ru.ru_minflt);
        std::fflush(stdout);
        std::_Exit(0); // the process ends: nothing to give back
    }
}

template <class Peer>
void run_scale(const char* name) {
    Peer a(block_bytes);
    std::vector<void*> live;
    live.reserve(10'000'000);
    std::size_t target = 1000;
    std::size_t sink = 0;
    while (target <= 10'000'000) {
        const std::size_t grow = target - live.size();
        const auto t0 = clock_type::now();
        while (live.size() < target) {
            void* p = a.alloc(block_bytes);
            *static_cast<std::size_t*>(p) = live.size();
            live.push_back(p);
        }
        const auto t1 = clock_type::now();
        // Churn: free + alloc pairs around the ring of live blocks, at least 1 M pairs.
        const std::size_t pairs = target < 1'000'000 ? 1'000'000 : target;
        const auto t2 = clock_type::now();
        for (std::size_t i = 0, j = 0; i < pairs; ++i) {
            a.free(live[j], block_bytes);
            __asm__ __volatile__("" ::: "memory");
            void* p = a.alloc(block_bytes);
            *static_cast<std::size_t*>(p) = i;
            sink += reinterpret_cast<std::uintptr_t>(p) & 1u;
            live[j] = p;
            j = j + 1 == target ? 0 : j + 1;
        }
        const auto t3 = clock_type::now();
        std::printf(
            "{\"kind\": \"scale\", \"allocator\": \"%s\", \"live_blocks\": %zu, "
            "\"grow_ns_per_op\": %.3f, \"churn_ns_per_pair\": %.3f}\n",
            name, target,
            std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(grow),
            std::chrono::duration<double, std::nano>(t3 - t2).count() / static_cast<double>(pairs));
        std::fflush(stdout);
        target *= 10;
    }
    if (sink == 42)
        std::puts("");
    std::_Exit(0);
}

/// A field of /proc/self/status in KiB ("VmRSS", "VmHWM"); -1 when it cannot be read.
long status_kib(const char* field) {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (f == nullptr)
        return -1;
    char line[256];
    long kib = -1;
    const std::size_t n = std::strlen(field);
    while (std::fgets(line, sizeof line, f) != nullptr)
        if (std::strncmp(line, field, n) == 0 && line[n] == ':')
            kib = std::strtol(line + n + 1, nullptr, 10);
    std::fclose(f);
    return kib;
}

/// The phase change: 64 MiB in 16 B blocks, every block freed, then 64 MiB in 1 KiB
/// blocks; each block is touched (one word written). Peak RSS (VmHWM) over the RSS
/// before the first phase: an allocator that reuses the freed memory for the other
/// class peaks near 64 MiB, one that keeps it per class near 128 MiB.
template <class Peer>
void run_phase(const char* name) {
    constexpr std::size_t phase_bytes = std::size_t{64} << 20;
    constexpr std::size_t small = 16;
    constexpr std::size_t large = 1024;
    // The pointer arrays are faulted in before the baseline: they are not the allocator's.
    std::vector<void*> smalls(phase_bytes / small, nullptr);
    std::vector<void*> larges(phase_bytes / large, nullptr);
    Peer a(small);
    const long baseline = status_kib("VmRSS");
    for (std::size_t i = 0; i < smalls.size(); ++i) {
        smalls[i] = a.alloc(small);
        *static_cast<std::size_t*>(smalls[i]) = i;
    }
    const long after_first = status_kib("VmRSS");
    for (void* p : smalls)
        a.free(p, small);
    for (std::size_t i = 0; i < larges.size(); ++i) {
        larges[i] = a.alloc(large);
        *static_cast<std::size_t*>(larges[i]) = i;
    }
    const long peak = status_kib("VmHWM");
    if (baseline < 0 || peak < 0) {
        std::fprintf(stderr, "process_benchmark: /proc/self/status is not readable\n");
        std::_Exit(1);
    }
    std::printf("{\"kind\": \"phase\", \"allocator\": \"%s\", \"phase_bytes\": %zu, "
                "\"baseline_kib\": %ld, \"first_phase_kib\": %ld, \"peak_kib\": %ld, "
                "\"net_peak_kib\": %ld}\n",
                name, phase_bytes, baseline, after_first - baseline, peak, peak - baseline);
    std::fflush(stdout);
    std::_Exit(0);
}

template <class Pool>
void set_source(sta::detail::map_pages_fn source, std::size_t page_bytes) {
    Pool::set_page_bytes(page_bytes);
    Pool::detail_state().map_pages = source;
}

template <class Peer>
bool dispatch(const std::string& mode, const char* name) {
    if (!Peer::available())
        return false;
    if (mode == "cold")
        run_cold<Peer>(name);
    else if (mode == "phase")
        run_phase<Peer>(name);
    else
        run_scale<Peer>(name);
    return true;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3 || (std::strcmp(argv[1], "cold") != 0 && std::strcmp(argv[1], "scale") != 0 &&
                     std::strcmp(argv[1], "phase") != 0)) {
        std::fprintf(stderr, "usage: process_benchmark <cold|scale|phase> <allocator>\n");
        return 2;
    }
    const std::string mode = argv[1];
    const std::string name = argv[2];
    using table = bench::pool_peer<sta::dispatch::self_rewriting_table, cold_tag>;
    using branch = bench::pool_peer<sta::dispatch::inline_branch, cold_tag>;
    using spans_table =
        bench::pool_peer<sta::dispatch::self_rewriting_table, cold_tag, sta::layout::spans>;
    using spans_branch =
        bench::pool_peer<sta::dispatch::inline_branch, cold_tag, sta::layout::spans>;
    using default_pool = bench::pool_peer<sta::dispatch::default_policy, scale_tag>;
    using default_spans =
        bench::pool_peer<sta::dispatch::default_policy, scale_tag, sta::layout::spans>;
    const std::size_t mib = std::size_t{1} << 20;
    if (name == "sta-table")
        return dispatch<table>(mode, argv[2]) ? 0 : 3;
    if (name == "sta-branch")
        return dispatch<branch>(mode, argv[2]) ? 0 : 3;
    if (name == "sta-spans-table")
        return dispatch<spans_table>(mode, argv[2]) ? 0 : 3;
    if (name == "sta-spans-branch")
        return dispatch<spans_branch>(mode, argv[2]) ? 0 : 3;
    // The phase change names the layouts (default dispatch), as the waves do.
    if (name == "sta-cursor" && mode == "phase")
        return dispatch<default_pool>(mode, argv[2]) ? 0 : 3;
    if (name == "sta-spans" && mode == "phase")
        return dispatch<default_spans>(mode, argv[2]) ? 0 : 3;
    if (name == "sta-spans+prefault" && mode == "cold") {
        default_spans::pool::set_prefault(true);
        return dispatch<default_spans>(mode, argv[2]) ? 0 : 3;
    }
    if (name == "sta-spans+thp" && mode == "cold") {
        default_spans::pool::set_huge_pages(true);
        return dispatch<default_spans>(mode, argv[2]) ? 0 : 3;
    }
    if (name == "sta+populate") {
        set_source<default_pool::pool>(&populate_pages, mib);
        return dispatch<default_pool>(mode, argv[2]) ? 0 : 3;
    }
    if (name == "sta+populate-2M") {
        set_source<default_pool::pool>(&populate_pages, 2 * mib);
        return dispatch<default_pool>(mode, argv[2]) ? 0 : 3;
    }
    if (name == "sta+thp-2M") {
        set_source<default_pool::pool>(&thp_pages, 2 * mib);
        return dispatch<default_pool>(mode, argv[2]) ? 0 : 3;
    }
    if (name == "sta+thp-populate-2M") {
        set_source<default_pool::pool>(&thp_populate_pages, 2 * mib);
        return dispatch<default_pool>(mode, argv[2]) ? 0 : 3;
    }
    if (name == "malloc")
        return dispatch<bench::malloc_peer>(mode, argv[2]) ? 0 : 3;
    if (name == "mimalloc-dlopen")
        return dispatch<bench::mimalloc_dl_peer>(mode, argv[2]) ? 0 : 3;
    if (name == "pmr-unsync-pool")
        return dispatch<bench::pmr_pool_peer>(mode, argv[2]) ? 0 : 3;
    if (name == "pmr-monotonic" && mode == "cold")
        return dispatch<bench::pmr_monotonic_peer>(mode, argv[2]) ? 0 : 3;
#if STA_BENCH_HAVE_FOONATHAN
    if (name == "foonathan-pool")
        return dispatch<bench::foonathan_pool_peer>(mode, argv[2]) ? 0 : 3;
    if (name == "foonathan-stack" && mode == "cold")
        return dispatch<bench::foonathan_stack_peer>(mode, argv[2]) ? 0 : 3;
#endif
#if STA_BENCH_HAVE_BOOST
    if (name == "boost-pool")
        return dispatch<bench::boost_pool_peer>(mode, argv[2]) ? 0 : 3;
#endif
    std::fprintf(stderr, "process_benchmark: unknown allocator %s for %s\n", argv[2], argv[1]);
    return 2;
}
