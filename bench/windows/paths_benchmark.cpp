// Under wine (or Windows): the per-thread pool against the seed's mode and the Windows
// heaps on the get paths at 32 B and the scenarios (issue 28) — what a thread-local
// pointer costs where the compiler has no native TLS (mingw-w64 g++) and where it has
// (clang). Self-timed (bench/self_timed.hpp): rows interleaved in every repetition.
//
//   paths_benchmark [scale=1] [repetitions=11] [jsonl]
//
// The rows:
//   sta-spans       the span layout in threads::per_thread (sta::memory_pool's home):
//                   each call reads the thread's slot (os/thread_slot.hpp)
//   sta-spans-seed  the same layout and dispatch in threads::one_owner, the seed's mode:
//                   a constant address
//   malloc          the C runtime's (mingw-w64: msvcrt.dll's)
//   HeapAlloc       the process heap
// The get paths (bench/get_benchmark.cpp's patterns, at 32 B): every allocation and free
// is a call to a function of its own that the compiler does not inline (STA_NOINLINE),
// so that no loop lets it read the thread's slot once for many calls; `ct` passes the
// size as a constant (the pool's alloc<32>()), `rt` as an argument.
//   fresh      allocations only, into memory never used (the pool's bump path); the
//              peers free the blocks after the timed part
//   pure_get   a batch of 1,024 allocations from a warm free list, timed; the frees not
//   balanced   a free and an allocation over a ring of 1,024 live blocks: one op = both
// The scenarios (bench/scenarios.hpp): one tree round and one GUI-scene round over each
// row's std allocator (the peers: std::allocator, operator new over malloc), µs each.
#include "../scenarios.hpp"
#include "../self_timed.hpp"

#include <sta/allocator.hpp>
#include <sta/memory_pool.hpp>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr std::size_t bytes = 32;
constexpr std::size_t batch = 1024;

template <class Pattern>
struct tag {};
struct fresh {};
struct warm {};

/// A pool family's row: its own free lists and memory for the fresh pattern (never
/// freed) and for the others.
template <class Threads>
struct pool_row {
    template <class Pattern>
    using pool = sta::basic_memory_pool<sta::dispatch::default_policy, tag<Pattern>,
                                        sta::layout::spans, Threads>;
    template <class Pattern>
    STA_NOINLINE static void* alloc_rt(std::size_t n) {
        return pool<Pattern>::alloc(n);
    }
    template <class Pattern>
    STA_NOINLINE static void free_rt(void* p, std::size_t n) {
        pool<Pattern>::free(p, n);
    }
    template <class Pattern>
    STA_NOINLINE static void* alloc_ct(std::size_t) {
        return pool<Pattern>::template alloc<bytes>();
    }
    template <class Pattern>
    STA_NOINLINE static void free_ct(void* p, std::size_t) {
        pool<Pattern>::template free<bytes>(p);
    }
    template <class T>
    using std_allocator = sta::allocator_adapter<T, pool<warm>>;
    static constexpr bool fresh_memory = true; // the fresh pattern's blocks stay allocated
};

struct malloc_row {
    template <class>
    STA_NOINLINE static void* alloc_rt(std::size_t n) {
        return std::malloc(n);
    }
    template <class>
    STA_NOINLINE static void free_rt(void* p, std::size_t) {
        std::free(p);
    }
    template <class T>
    using std_allocator = std::allocator<T>;
    static constexpr bool fresh_memory = false;
};

struct heap_row {
    template <class>
    STA_NOINLINE static void* alloc_rt(std::size_t n) {
        return ::HeapAlloc(::GetProcessHeap(), 0, n);
    }
    template <class>
    STA_NOINLINE static void free_rt(void* p, std::size_t) {
        (void)::HeapFree(::GetProcessHeap(), 0, p);
    }
    static constexpr bool fresh_memory = false;
};

using per_thread = pool_row<sta::threads::per_thread>;
using seed = pool_row<sta::threads::one_owner>;

long scale_ops = 1; // the scale argument: operations per repetition, x 64 Ki

using alloc_fn = void* (*)(std::size_t);
using free_fn = void (*)(void*, std::size_t);

/// The size as the callee sees it: not a constant the compiler could fold.
std::size_t volatile opaque_bytes = bytes;

/// ns per allocation of `count` fresh blocks; a peer frees them after the timed part.
double fresh_once(alloc_fn alloc, free_fn release, bool keep) {
    const std::size_t count = std::size_t{65536} * static_cast<std::size_t>(scale_ops);
    std::vector<void*> blocks(count);
    const std::size_t n = opaque_bytes;
    const double t0 = self_timed::now_ns();
    for (std::size_t i = 0; i < count; ++i)
        blocks[i] = alloc(n);
    const double ns = (self_timed::now_ns() - t0) / static_cast<double>(count);
    if (!keep)
        for (void* p : blocks)
            release(p, n);
    return ns;
}

/// ns per allocation of a batch from a warm free list; the frees are not timed.
double pure_get_once(alloc_fn alloc, free_fn release) {
    const std::size_t rounds = 64 * static_cast<std::size_t>(scale_ops);
    void* blocks[batch];
    const std::size_t n = opaque_bytes;
    double ns = 0;
    for (std::size_t r = 0; r < rounds; ++r) {
        const double t0 = self_timed::now_ns();
        for (void*& p : blocks)
            p = alloc(n);
        ns += self_timed::now_ns() - t0;
        for (void* p : blocks)
            release(p, n);
    }
    return ns / static_cast<double>(rounds * batch);
}

/// ns per free + allocation over a ring of live blocks.
double balanced_once(alloc_fn alloc, free_fn release) {
    const std::size_t ops = std::size_t{65536} * static_cast<std::size_t>(scale_ops);
    void* ring[batch];
    const std::size_t n = opaque_bytes;
    for (void*& p : ring)
        p = alloc(n);
    const double t0 = self_timed::now_ns();
    for (std::size_t i = 0; i < ops; ++i) {
        void*& slot = ring[i % batch];
        release(slot, n);
        slot = alloc(n);
    }
    const double ns = (self_timed::now_ns() - t0) / static_cast<double>(ops);
    for (void* p : ring)
        release(p, n);
    return ns;
}

/// µs per round of a scenario.
template <template <template <class> class> class Round, template <class> class Alloc>
double scenario_once() {
    const double t0 = self_timed::now_ns();
    const std::size_t checksum = Round<Alloc>::run();
    const double us = (self_timed::now_ns() - t0) / 1000;
    bench::escape(checksum);
    return us;
}
template <template <class> class Alloc>
struct tree {
    static std::size_t run() { return bench::tree_round<Alloc>(); }
};
template <template <class> class Alloc>
struct gui {
    static std::size_t run() { return bench::gui_round<Alloc>(); }
};

template <class Row>
double fresh_rt() {
    return fresh_once(&Row::template alloc_rt<fresh>, &Row::template free_rt<fresh>,
                      Row::fresh_memory);
}
template <class Row>
double fresh_ct() {
    return fresh_once(&Row::template alloc_ct<fresh>, &Row::template free_ct<fresh>,
                      Row::fresh_memory);
}
template <class Row>
double pure_get_rt() {
    return pure_get_once(&Row::template alloc_rt<warm>, &Row::template free_rt<warm>);
}
template <class Row>
double pure_get_ct() {
    return pure_get_once(&Row::template alloc_ct<warm>, &Row::template free_ct<warm>);
}
template <class Row>
double balanced_rt() {
    return balanced_once(&Row::template alloc_rt<warm>, &Row::template free_rt<warm>);
}
template <class Row>
double balanced_ct() {
    return balanced_once(&Row::template alloc_ct<warm>, &Row::template free_ct<warm>);
}
template <class Row>
double tree_once() {
    return scenario_once<tree, Row::template std_allocator>();
}
template <class Row>
double gui_once() {
    return scenario_once<gui, Row::template std_allocator>();
}

void print_markdown(const char* title, const char* unit,
                    const std::vector<self_timed::measured_row>& rows) {
    std::printf("### %s\n\n| measure | allocator | %s (median) | min | max |\n"
                "|---|---|---:|---:|---:|\n",
                title, unit);
    for (const auto& r : rows)
        std::printf("| %s | %s | %.2f | %.2f | %.2f |\n", r.measure, r.allocator,
                    self_timed::median(r.values), self_timed::lowest(r.values),
                    self_timed::highest(r.values));
    std::printf("\n");
}

} // namespace

int main(int argc, char** argv) {
    scale_ops = argc > 1 ? std::atol(argv[1]) : 1;
    const int repetitions = argc > 2 ? std::atoi(argv[2]) : 11;
    if (scale_ops <= 0 || repetitions <= 0) {
        std::fprintf(stderr, "usage: paths_benchmark [scale] [repetitions] [jsonl]\n");
        return 2;
    }
    std::vector<self_timed::measured_row> paths = {
        {"sta-spans", "get/fresh/ct/32", &fresh_ct<per_thread>, {}},
        {"sta-spans-seed", "get/fresh/ct/32", &fresh_ct<seed>, {}},
        {"sta-spans", "get/fresh/rt/32", &fresh_rt<per_thread>, {}},
        {"sta-spans-seed", "get/fresh/rt/32", &fresh_rt<seed>, {}},
        {"malloc", "get/fresh/rt/32", &fresh_rt<malloc_row>, {}},
        {"HeapAlloc", "get/fresh/rt/32", &fresh_rt<heap_row>, {}},
        {"sta-spans", "get/pure_get/ct/32", &pure_get_ct<per_thread>, {}},
        {"sta-spans-seed", "get/pure_get/ct/32", &pure_get_ct<seed>, {}},
        {"sta-spans", "get/pure_get/rt/32", &pure_get_rt<per_thread>, {}},
        {"sta-spans-seed", "get/pure_get/rt/32", &pure_get_rt<seed>, {}},
        {"malloc", "get/pure_get/rt/32", &pure_get_rt<malloc_row>, {}},
        {"HeapAlloc", "get/pure_get/rt/32", &pure_get_rt<heap_row>, {}},
        {"sta-spans", "get/balanced/ct/32", &balanced_ct<per_thread>, {}},
        {"sta-spans-seed", "get/balanced/ct/32", &balanced_ct<seed>, {}},
        {"sta-spans", "get/balanced/rt/32", &balanced_rt<per_thread>, {}},
        {"sta-spans-seed", "get/balanced/rt/32", &balanced_rt<seed>, {}},
        {"malloc", "get/balanced/rt/32", &balanced_rt<malloc_row>, {}},
        {"HeapAlloc", "get/balanced/rt/32", &balanced_rt<heap_row>, {}},
    };
    std::vector<self_timed::measured_row> scenarios = {
        {"sta-spans", "scenario/tree", &tree_once<per_thread>, {}},
        {"sta-spans-seed", "scenario/tree", &tree_once<seed>, {}},
        {"malloc", "scenario/tree", &tree_once<malloc_row>, {}},
        {"sta-spans", "scenario/gui", &gui_once<per_thread>, {}},
        {"sta-spans-seed", "scenario/gui", &gui_once<seed>, {}},
        {"malloc", "scenario/gui", &gui_once<malloc_row>, {}},
    };
    self_timed::run(paths, repetitions);
    self_timed::run(scenarios, repetitions);
    if (self_timed::jsonl(argc, argv)) {
        self_timed::print_lines(paths, "ns");
        self_timed::print_lines(scenarios, "µs");
        return 0;
    }
    std::printf("paths_benchmark (%s): x%ld, %d repetitions\n\n", self_timed::compiler().c_str(),
                scale_ops, repetitions);
    print_markdown("Get paths at 32 B, ns per operation", "ns", paths);
    print_markdown("Scenarios, µs per round", "µs", scenarios);
    return 0;
}
