// sta-pool: measurements that need a fresh process each — cold start, the phase change
// and scale.
//
//   process_benchmark cold <allocator> [BYTES]
//                                        1,000,000 × 32 B (BYTES 32, the default), or
//                                        32 MiB of 4096 B or 32768 B blocks, allocated
//                                        and first-touched (one word written per block)
//                                        in a process that has allocated nothing yet
//   process_benchmark phase <allocator>  64 MiB in 16 B blocks, all freed, then 64 MiB
//                                        in 1 KiB blocks: peak RSS over the baseline
//   process_benchmark scale <allocator>  32 B blocks; the live set grows 10^3 .. 10^7:
//                                        `grow` = ns per alloc + touch while it grows to
//                                        each size, `churn` = ns per free + alloc +
//                                        touch pair over the live ring at that size
//
// Each run prints JSON result lines (bench::print_result), one per process for cold and
// phase, one per live-set size for scale:
//   {"kind": "cold", "allocator", "bytes", "blocks", "ns_per_block", "total_ms",
//    "peak_rss_kib", "minor_faults"}
//   {"kind": "phase", "allocator", "phase_bytes", "baseline_kib", "first_phase_kib",
//    "peak_kib", "net_peak_kib"}            (RSS from /proc/self/status: VmRSS, VmHWM)
//   {"kind": "scale", "allocator", "live_blocks", "grow_ns_per_op", "churn_ns_per_pair"}
// Allocators: the pool variants (sta-table, sta-branch: the seed's shared-cursor layout;
// sta-spans-table, sta-spans-branch: the span layout); the default pool with other page
// sources swapped in through its white-box state (sta+populate: MAP_POPULATE;
// sta+populate-2M, sta+thp-2M, sta+thp-populate-2M: 2 MiB pages, populated, with
// madvise(MADV_HUGEPAGE), both); for the phase change also sta-cursor and sta-spans, the
// default dispatch in each layout; for cold start also sta-spans+prefault and
// sta-spans+thp (the span layout's set_prefault and set_huge_pages); malloc (jemalloc /
// tcmalloc / mimalloc when run under LD_PRELOAD), mimalloc-dlopen (mimalloc through
// dlopen), pmr-unsync-pool, foonathan-pool, boost-pool, and for cold start the bump
// allocators pmr-monotonic and foonathan-stack.
#include "harness.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <sys/mman.h>
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

/// The blocks of a cold start: 10^6 of 32 B, else 32 MiB of blocks of `bytes`.
constexpr std::size_t cold_blocks(std::size_t bytes) {
    return bytes == block_bytes ? 1'000'000 : (std::size_t{32} << 20) / bytes;
}

template <class Peer>
void run_cold(const char* name, std::size_t bytes) {
    const std::size_t count = cold_blocks(bytes);
    std::vector<void*> kept(count); // faulted in before the clock starts
    for (void*& p : kept)
        p = nullptr;
    const auto t0 = clock_type::now();
    {
        Peer a(bytes);
        for (std::size_t i = 0; i < count; ++i) {
            void* p = a.alloc(bytes);
            *static_cast<std::size_t*>(p) = i; // first touch
            kept[i] = p;
        }
        const auto t1 = clock_type::now();
        bench::print_result(
            "cold", name,
            {{"bytes", bytes},
             {"blocks", count},
             {"ns_per_block",
              bench::decimal{std::chrono::duration<double, std::nano>(t1 - t0).count() / count, 3}},
             {"total_ms",
              bench::decimal{std::chrono::duration<double, std::milli>(t1 - t0).count(), 3}},
             {"peak_rss_kib", bench::peak_rss_kib()},
             {"minor_faults", bench::minor_faults()}});
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
        bench::print_result(
            "scale", name,
            {{"live_blocks", target},
             {"grow_ns_per_op",
              bench::decimal{std::chrono::duration<double, std::nano>(t1 - t0).count() /
                                 static_cast<double>(grow),
                             3}},
             {"churn_ns_per_pair",
              bench::decimal{std::chrono::duration<double, std::nano>(t3 - t2).count() /
                                 static_cast<double>(pairs),
                             3}}});
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
    bench::print_result("phase", name,
                        {{"phase_bytes", phase_bytes},
                         {"baseline_kib", baseline},
                         {"first_phase_kib", after_first - baseline},
                         {"peak_kib", peak},
                         {"net_peak_kib", peak - baseline}});
    std::_Exit(0);
}

/// The default pool in the seed's layout with another page source, swapped in through
/// its white-box state before the first allocation.
template <sta::detail::map_pages_fn Source, std::size_t PageBytes>
struct sourced : bench::pools::sta_cursor {
    template <class Pool>
    static void prepare() {
        Pool::set_page_bytes(PageBytes);
        Pool::detail_state().map_pages = Source;
    }
};
constexpr std::size_t mib = std::size_t{1} << 20;
struct sta_populate : sourced<&populate_pages, mib> {
    static constexpr const char* name = "sta+populate";
};
struct sta_populate_2m : sourced<&populate_pages, 2 * mib> {
    static constexpr const char* name = "sta+populate-2M";
};
struct sta_thp_2m : sourced<&thp_pages, 2 * mib> {
    static constexpr const char* name = "sta+thp-2M";
};
struct sta_thp_populate_2m : sourced<&thp_populate_pages, 2 * mib> {
    static constexpr const char* name = "sta+thp-populate-2M";
};

// The rows of each measurement. The pool's dispatch variants in both layouts take
// cold_tag; the default pool (its layouts, its page settings and sources) scale_tag.
template <class Family>
using cold_pool = bench::pool_peer<Family, cold_tag>;
template <class Family>
using scale_pool = bench::pool_peer<Family, scale_tag>;
using every_mode =
    bench::allocators<cold_pool<bench::pools::sta_table>, cold_pool<bench::pools::sta_branch>,
                      cold_pool<bench::pools::sta_spans_table>,
                      cold_pool<bench::pools::sta_spans_branch>, scale_pool<sta_populate>,
                      scale_pool<sta_populate_2m>, scale_pool<sta_thp_2m>,
                      scale_pool<sta_thp_populate_2m>, bench::malloc_peer, bench::mimalloc_dl_peer,
                      bench::pmr_pool_peer
#if STA_BENCH_HAVE_FOONATHAN
                      ,
                      bench::foonathan_pool_peer
#endif
#if STA_BENCH_HAVE_BOOST
                      ,
                      bench::boost_pool_peer
#endif
                      >;
/// Cold start: also the span layout's page settings and the bump allocators.
using cold_rows =
    every_mode::with<scale_pool<bench::pools::sta_spans_prefault>,
                     scale_pool<bench::pools::sta_spans_thp>, bench::pmr_monotonic_peer
#if STA_BENCH_HAVE_FOONATHAN
                     ,
                     bench::foonathan_stack_peer
#endif
                     >;
/// The phase change: also the layouts with the default dispatch, as the waves name them.
using phase_rows =
    every_mode::with<scale_pool<bench::pools::sta_cursor>, scale_pool<bench::pools::sta_spans>>;
using scale_rows = every_mode;

enum class measurement { cold, phase, scale };

/// The measurement for the row called `name` among `Rows`: it ends the process (_Exit)
/// once it has printed its lines. 3 when the row is not available here; nullopt when no
/// row has that name.
template <measurement M, class Rows>
std::optional<int> measure(const char* name, std::size_t bytes = block_bytes) {
    return Rows::call(name, [&]<class Peer>() {
        if (!Peer::available())
            return 3;
        if constexpr (M == measurement::cold)
            run_cold<Peer>(name, bytes);
        else if constexpr (M == measurement::phase)
            run_phase<Peer>(name);
        else
            run_scale<Peer>(name);
        return 0;
    });
}

} // namespace

int main(int argc, char** argv) {
    const bool cold = argc >= 3 && std::strcmp(argv[1], "cold") == 0;
    const std::string bytes_arg = cold && argc == 4 ? argv[3] : "32";
    if (argc < 3 || (!cold && argc != 3) || argc > 4 ||
        (!cold && std::strcmp(argv[1], "scale") != 0 && std::strcmp(argv[1], "phase") != 0) ||
        (bytes_arg != "32" && bytes_arg != "4096" && bytes_arg != "32768")) {
        std::fprintf(stderr, "usage: process_benchmark cold <allocator> [32|4096|32768]\n"
                             "       process_benchmark <scale|phase> <allocator>\n");
        return 2;
    }
    const std::string mode = argv[1];
    const char* name = argv[2];
    const std::optional<int> status =
        mode == "cold"    ? measure<measurement::cold, cold_rows>(name, std::stoul(bytes_arg))
        : mode == "phase" ? measure<measurement::phase, phase_rows>(name)
                          : measure<measurement::scale, scale_rows>(name);
    if (status)
        return *status;
    std::fprintf(stderr, "process_benchmark: unknown allocator %s for %s\n", argv[2], argv[1]);
    return 2;
}
