// sta-pool: whole workloads, the seed's sta_allocator_scenario_benchmark: the tree
// (bench/scenarios.hpp) and the GUI scene (bench/gui_scene.hpp), one iteration = one
// round.
//
// Allocators: the pool (both dispatch variants, each in the seed's shared-cursor layout
// — sta-table, sta-branch — and in the span layout — sta-spans-table, sta-spans-branch —
// in its default thread policy; and sta-spans-seed: the span layout, default dispatch, in
// threads::one_owner, the seed's mode, beside the default for issue 14),
// std::allocator (glibc; jemalloc, tcmalloc and mimalloc when the report runs this binary
// under LD_PRELOAD), mimalloc-dlopen (mimalloc in-process through dlopen),
// pmr-unsync-pool (std::pmr::unsynchronized_pool_resource) and the two bump allocators,
// pmr-monotonic (std::pmr::monotonic_buffer_resource) and foonathan-stack
// (foonathan::memory_stack), a new one per round, released at the end of the round.
// boost::pool is single-size and foonathan::memory_pool too: they appear in the get
// benchmark only.
//
//   scenario_benchmark [google benchmark flags]
//   scenario_benchmark --rss <tree|gui> <allocator> [rounds]   peak RSS of one process:
//     {"kind": "rss", "allocator": ..., "scenario": ..., "rounds": ...,
//      "baseline_kib": <peak RSS before the first round>, "peak_rss_kib": <after the last>}
#include "harness.hpp"
#include "scenarios.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <string>
#include <vector>

namespace {

// ---------------------------------------------------------------------------------
// Rows: the pool families with this program's tags, and the peers.
// ---------------------------------------------------------------------------------

struct table_tag {};
struct branch_tag {};
struct seed_tag {};
using sta_table = bench::pool_peer<bench::pools::sta_table, table_tag>;
using sta_branch = bench::pool_peer<bench::pools::sta_branch, branch_tag>;
using sta_spans_table = bench::pool_peer<bench::pools::sta_spans_table, table_tag>;
using sta_spans_branch = bench::pool_peer<bench::pools::sta_spans_branch, branch_tag>;
using sta_spans_seed = bench::pool_peer<bench::pools::sta_spans_seed, seed_tag>;

/// A stateless allocator over a global "current" memory function pair.
struct current_source {
    void* (*alloc)(std::size_t bytes, std::size_t align) = nullptr;
    void (*free)(void* p, std::size_t bytes, std::size_t align) = nullptr;
};
inline current_source current;

template <class T>
struct source_alloc {
    using value_type = T;
    source_alloc() noexcept = default;
    template <class U>
    source_alloc(const source_alloc<U>&) noexcept {}
    T* allocate(std::size_t n) {
        void* p = current.alloc(n * sizeof(T), alignof(T));
        if (p == nullptr)
            throw std::bad_alloc();
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t n) noexcept { current.free(p, n * sizeof(T), alignof(T)); }
    template <class U>
    friend bool operator==(const source_alloc&, const source_alloc<U>&) noexcept {
        return true;
    }
};

// pmr resources and foonathan's stack, one per round, reached through `current`.
inline std::pmr::memory_resource* current_resource = nullptr;
void use_resource(std::pmr::memory_resource* r) {
    current_resource = r;
    current.alloc = [](std::size_t bytes, std::size_t align) {
        return current_resource->allocate(bytes, align);
    };
    current.free = [](void* p, std::size_t bytes, std::size_t align) {
        current_resource->deallocate(p, bytes, align);
    };
}
#if STA_BENCH_HAVE_FOONATHAN
inline foonathan::memory::memory_stack<>* current_stack = nullptr;
void use_stack(foonathan::memory::memory_stack<>* s) {
    current_stack = s;
    current.alloc = [](std::size_t bytes, std::size_t align) {
        return current_stack->allocate(bytes, align < 8 ? 8 : align);
    };
    current.free = [](void*, std::size_t, std::size_t) {};
}
#endif

/// What a round needs around it: a fresh resource for the bump allocators.
enum class source { none, pmr_pool, pmr_monotonic, foonathan_stack };

struct round_scope {
    std::optional<std::pmr::unsynchronized_pool_resource> pool;
    std::optional<std::pmr::monotonic_buffer_resource> monotonic;
#if STA_BENCH_HAVE_FOONATHAN
    std::optional<foonathan::memory::memory_stack<>> stack;
#endif
    explicit round_scope(source s) {
        switch (s) {
        case source::none:
            break;
        case source::pmr_pool:
            use_resource(&pool.emplace());
            break;
        case source::pmr_monotonic:
            use_resource(&monotonic.emplace(std::size_t{64} << 10));
            break;
        case source::foonathan_stack:
#if STA_BENCH_HAVE_FOONATHAN
            use_stack(&stack.emplace(std::size_t{1} << 20));
#endif
            break;
        }
    }
};

// ---------------------------------------------------------------------------------
// Registration.
// ---------------------------------------------------------------------------------

struct family {
    const char* name;
    source src;
    std::size_t (*tree)();
    std::size_t (*gui)();
    bool (*available)();
};

/// A row's family: its std allocator (`Alloc`) over the tree and the scene.
template <class Row, template <class> class Alloc = Row::template std_allocator>
family make(source src = source::none) {
    return {Row::name, src, [] { return bench::tree_round<Alloc>(); },
            [] { return bench::gui_round<Alloc>(); }, &Row::available};
}

std::vector<family> families() {
    return {
        make<sta_table>(), make<sta_branch>(), make<sta_spans_table>(), make<sta_spans_branch>(),
            make<sta_spans_seed>(), make<bench::new_delete_peer>(), make<bench::mimalloc_dl_peer>(),
            make<bench::pmr_pool_peer, source_alloc>(source::pmr_pool),
            make<bench::pmr_monotonic_peer, source_alloc>(source::pmr_monotonic),
#if STA_BENCH_HAVE_FOONATHAN
            make<bench::foonathan_stack_peer, source_alloc>(source::foonathan_stack),
#endif
    };
}

void run_round(const family& f, bool tree) {
    round_scope scope(f.src);
    benchmark::DoNotOptimize(tree ? f.tree() : f.gui());
}

/// Peak RSS of one process running `rounds` rounds of one scenario: what the
/// allocator holds at its worst, beyond the program's own baseline.
int rss_main(const char* scenario, const char* allocator, int rounds) {
    for (const family& f : families()) {
        if (std::strcmp(f.name, allocator) != 0 || !f.available())
            continue;
        const bench::rss_baseline baseline = bench::rss_baseline::take();
        const bool tree = std::strcmp(scenario, "tree") == 0;
        for (int r = 0; r < rounds; ++r)
            run_round(f, tree);
        const bench::rss_peak rss = baseline.peak();
        bench::print_result("rss", allocator,
                            {{"scenario", scenario},
                             {"rounds", rounds},
                             {"baseline_kib", rss.baseline_kib},
                             {"peak_rss_kib", rss.peak_kib}});
        return 0;
    }
    std::fprintf(stderr, "scenario_benchmark: unknown or unavailable allocator %s\n", allocator);
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    if (argc >= 4 && std::strcmp(argv[1], "--rss") == 0)
        return rss_main(argv[2], argv[3], argc >= 5 ? std::atoi(argv[4]) : 5);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    static const std::vector<family> all = families();
    for (const family& f : all) {
        if (!f.available())
            continue;
        for (bool tree : {true, false}) {
            const std::string name = std::string("scenario/") + f.name + (tree ? "/tree" : "/gui");
            benchmark::RegisterBenchmark(name.c_str(), [&f, tree](benchmark::State& state) {
                for (auto _ : state)
                    run_round(f, tree);
            })->Unit(benchmark::kMicrosecond); // CPU time: steadier on a shared machine
        }
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
