// sta-pool: whole workloads, the seed's sta_allocator_scenario_benchmark.
//
//   tree  a tree of nested containers — map<string, vector<node>>, each node with a
//         string name, a vector of values and a map<int, string> of attributes — with
//         the allocator at every level: built (about 4,100 nodes, 40,000 blocks),
//         shaken (a quarter of the keys erased and as many new ones inserted, a
//         quarter of the nodes' values regrown) and destroyed. One iteration = one
//         round.
//   gui   a GUI-like scene: 4,000 elements with a string name, a map of property
//         values, a vector of event handlers (std::function) and a vector of
//         children; built, its handlers invoked, then discarded.
//
// Allocators: the pool (both dispatch variants), std::allocator (glibc; jemalloc,
// tcmalloc and mimalloc when the report runs this binary under LD_PRELOAD), mimalloc
// in-process through dlopen, std::pmr::unsynchronized_pool_resource and the two bump
// allocators, std::pmr::monotonic_buffer_resource and foonathan::memory_stack (a new
// one per round, released at the end of the round). boost::pool is single-size and
// foonathan::memory_pool too: they appear in the get benchmark only.
//
//   scenario_benchmark [google benchmark flags]
//   scenario_benchmark --rss <tree|gui> <allocator> [rounds]   peak RSS of one process
#include "peers.hpp"

#include <sta/allocator.hpp>

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
#include <sys/resource.h>
#include <vector>

namespace {

// ---------------------------------------------------------------------------------
// Allocator families: stateless std allocators over each peer.
// ---------------------------------------------------------------------------------

struct table_tag {};
struct branch_tag {};
template <class T>
using sta_table_alloc =
    sta::allocator_adapter<T,
                           sta::basic_memory_pool<sta::dispatch::self_rewriting_table, table_tag>>;
template <class T>
using sta_branch_alloc =
    sta::allocator_adapter<T, sta::basic_memory_pool<sta::dispatch::inline_branch, branch_tag>>;
template <class T>
using std_alloc = std::allocator<T>;

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
void use_mimalloc() {
    current.alloc = [](std::size_t bytes, std::size_t) {
        return bench::mimalloc_dl_peer::entries().malloc(bytes);
    };
    current.free = [](void* p, std::size_t, std::size_t) {
        bench::mimalloc_dl_peer::entries().free(p);
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
enum class source { none, mimalloc, pmr_pool, pmr_monotonic, foonathan_stack };

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
        case source::mimalloc:
            use_mimalloc();
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
// The tree.
// ---------------------------------------------------------------------------------

template <template <class> class Alloc>
struct tree_types {
    using string = std::basic_string<char, std::char_traits<char>, Alloc<char>>;
    struct node {
        string name;
        std::vector<std::uint32_t, Alloc<std::uint32_t>> values;
        std::map<int, string, std::less<int>, Alloc<std::pair<const int, string>>> attributes;
    };
    using nodes = std::vector<node, Alloc<node>>;
    using tree = std::map<string, nodes, std::less<string>, Alloc<std::pair<const string, nodes>>>;
};

constexpr int tree_keys = 256;
constexpr int nodes_per_key = 16;

template <template <class> class Alloc>
void fill_key(typename tree_types<Alloc>::tree& t, int key, std::uint32_t& seed) {
    using types = tree_types<Alloc>;
    typename types::string name("section/with/a/long/enough/path/");
    name += std::to_string(key);
    auto& nodes = t[name];
    for (int i = 0; i < nodes_per_key; ++i) {
        auto& n = nodes.emplace_back();
        n.name = "node name beyond the small-string buffer #";
        n.name += std::to_string(i);
        seed = seed * 1664525u + 1013904223u;
        const std::uint32_t values = 4 + (seed >> 28);
        for (std::uint32_t v = 0; v < values; ++v)
            n.values.push_back(v * seed);
        for (int a = 0; a < 4; ++a)
            n.attributes.emplace(a, a % 2 ? "short" : "an attribute value too long for SSO");
    }
}

template <template <class> class Alloc>
std::size_t tree_round() {
    using types = tree_types<Alloc>;
    std::uint32_t seed = 12345;
    std::size_t checksum = 0;
    {
        typename types::tree t;
        for (int k = 0; k < tree_keys; ++k) // build
            fill_key<Alloc>(t, k, seed);
        int k = 0; // shake: erase a quarter of the keys, insert as many new ones
        for (auto it = t.begin(); it != t.end(); ++k)
            it = k % 4 == 0 ? t.erase(it) : std::next(it);
        for (int n = 0; n < tree_keys / 4; ++n)
            fill_key<Alloc>(t, tree_keys + n, seed);
        for (auto& [name, nodes] : t) { // regrow a quarter of the value vectors
            for (std::size_t i = 0; i < nodes.size(); i += 4)
                for (int v = 0; v < 24; ++v)
                    nodes[i].values.push_back(static_cast<std::uint32_t>(v));
            checksum += name.size() + nodes.size();
        }
        benchmark::DoNotOptimize(t);
    } // destroy
    return checksum;
}

// ---------------------------------------------------------------------------------
// The GUI scene (the idea of examples/gui_scene.cpp).
// ---------------------------------------------------------------------------------

template <template <class> class Alloc>
struct scene_types {
    using string = std::basic_string<char, std::char_traits<char>, Alloc<char>>;
    struct element {
        string name;
        std::map<string, string, std::less<string>, Alloc<std::pair<const string, string>>>
            properties;
        std::vector<std::function<void(int)>, Alloc<std::function<void(int)>>> handlers;
        std::vector<element*, Alloc<element*>> children;
    };
    using storage = std::vector<element, Alloc<element>>;
};

constexpr int scene_elements = 4000;

template <template <class> class Alloc>
std::size_t gui_round() {
    using types = scene_types<Alloc>;
    std::size_t checksum = 0;
    typename types::storage scene;
    scene.reserve(scene_elements);
    for (int i = 0; i < scene_elements; ++i) {
        auto& e = scene.emplace_back();
        e.name = "element_";
        e.name += std::to_string(i);
        e.name.append(" of the main window");
        e.properties.emplace("Width", std::to_string(100 + i % 300).c_str());
        e.properties.emplace("Height", "32");
        e.properties.emplace("Margin", "4,4,4,4");
        e.properties.emplace("Background", "#FF202020");
        e.properties.emplace("Content", e.name);
        for (int h = 0; h < 1 + i % 3; ++h)
            e.handlers.emplace_back(
                [&checksum, i](int v) { checksum += static_cast<std::size_t>(v + i); });
        if (i > 0)
            scene[static_cast<std::size_t>((i - 1) / 4)].children.push_back(&e);
    }
    for (auto& e : scene)
        for (auto& h : e.handlers)
            h(static_cast<int>(e.children.size()));
    return checksum + scene.size();
}

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

template <template <class> class Alloc>
family make(
    const char* name, source src, bool (*available)() = [] { return true; }) {
    return {name, src, &tree_round<Alloc>, &gui_round<Alloc>, available};
}

std::vector<family> families() {
    return {
        make<sta_table_alloc>("sta-table", source::none),
            make<sta_branch_alloc>("sta-branch", source::none),
            make<std_alloc>("std::allocator", source::none),
            make<source_alloc>("mimalloc-dlopen", source::mimalloc,
                               [] { return bench::mimalloc_dl_peer::available(); }),
            make<source_alloc>("pmr-unsync-pool", source::pmr_pool),
            make<source_alloc>("pmr-monotonic", source::pmr_monotonic),
#if STA_BENCH_HAVE_FOONATHAN
            make<source_alloc>("foonathan-stack", source::foonathan_stack),
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
        rusage before{};
        ::getrusage(RUSAGE_SELF, &before);
        const bool tree = std::strcmp(scenario, "tree") == 0;
        for (int r = 0; r < rounds; ++r)
            run_round(f, tree);
        rusage after{};
        ::getrusage(RUSAGE_SELF, &after);
        std::printf("{\"scenario\": \"%s\", \"allocator\": \"%s\", \"rounds\": %d, "
                    "\"baseline_kib\": %ld, \"peak_rss_kib\": %ld}\n",
                    scenario, allocator, rounds, before.ru_maxrss, after.ru_maxrss);
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
