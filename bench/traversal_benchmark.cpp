// sta-pool: the traversal benchmark — a tree of GUI-like elements, built once, then in
// cycles: walked depth first many times (every byte of every string read), a third of
// its subtrees torn down, as many regrown. A heap that hands out blocks near each other
// and keeps an element near its own strings is walked faster.
//
//   traversal_benchmark ALLOC [CYCLES] [WALKS]    (defaults: 12 cycles of 24 walks)
//
// An element is a name string, a vector of string properties, a vector of handlers
// (each an event name and an action string) and a vector of owned children, all over
// the allocator under test. The tree: 7 children per element, 5 levels (19,607
// elements, about 250,000 blocks). Each cycle: WALKS depth-first walks, then the third
// of the level-3 subtrees whose index matches the cycle is destroyed and as many new
// subtrees are appended (the order a GUI adds and removes panels in).
//
// ALLOC: sta-cursor (the seed's shared-cursor layout), sta-spans (the span layout),
// sta-spans+thp (the span layout with set_huge_pages(true)), all on the default
// dispatch; malloc (std::allocator: glibc, or the LD_PRELOAD peer — report.sh renames
// the row); mimalloc-dlopen (mi_malloc/mi_free through dlopen).
// Output: one JSON result line (bench::print_result) with the whole process's CPU time
// (user + system, CLOCK_PROCESS_CPUTIME_ID) and peak RSS (ru_maxrss):
//   {"kind": "traversal", "allocator": "sta-spans", "cycles": ..., "walks": ...,
//    "cpu_seconds": ..., "peak_rss_kib": ..., "checksum": ...}
#include "harness.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int fanout = 7;
constexpr int levels = 5;
constexpr int prune_level = 3; // the parents of the subtrees torn down and regrown

template <template <class> class Alloc>
struct gui {
    using string = std::basic_string<char, std::char_traits<char>, Alloc<char>>;
    struct handler {
        string event;
        string action;
    };
    struct element {
        string name;
        std::vector<string, Alloc<string>> properties;
        std::vector<handler, Alloc<handler>> handlers;
        std::vector<element*, Alloc<element*>> children;
        element() = default;
        element(const element&) = delete;
        element& operator=(const element&) = delete;
        ~element() {
            for (element* c : children)
                destroy(c);
        }
    };

    static element* make() {
        Alloc<element> a;
        element* e = a.allocate(1);
        return ::new (static_cast<void*>(e)) element();
    }
    static void destroy(element* e) {
        e->~element();
        Alloc<element>().deallocate(e, 1);
    }

    /// A new element at `level` (1 = a child of the root) with its whole subtree.
    static element* grow(int level, unsigned id, unsigned generation) {
        element* e = make();
        e->name = "panel/";
        e->name += std::to_string(id);
        e->name += "/generation/";
        e->name += std::to_string(generation);
        const unsigned properties = 3 + id % 4;
        for (unsigned p = 0; p < properties; ++p) {
            e->properties.emplace_back(p % 2 ? "Margin=4,4,4,4" : "Background=#FF2020207F; ");
            e->properties.back() += std::to_string(id + p);
        }
        for (unsigned h = 0; h < 1 + id % 3; ++h)
            e->handlers.push_back({string(h % 2 ? "Click" : "PointerEntered with a long name"),
                                   string("OnActivated handler of the element")});
        if (level < levels) {
            e->children.reserve(fanout);
            for (unsigned c = 0; c < fanout; ++c)
                e->children.push_back(grow(level + 1, id * fanout + c + 1, generation));
        }
        return e;
    }

    static std::size_t sum(const string& s) {
        std::size_t total = s.size();
        for (char c : s)
            total += static_cast<unsigned char>(c);
        return total;
    }
    static std::size_t walk(const element& e) {
        std::size_t total = sum(e.name);
        for (const string& p : e.properties)
            total += sum(p);
        for (const handler& h : e.handlers)
            total += sum(h.event) + sum(h.action);
        for (const element* c : e.children)
            total += walk(*c);
        return total;
    }

    /// Destroy every third subtree below `level`-deep parents (those whose position
    /// matches `cycle`) and append as many new ones.
    static void prune_and_regrow(element& e, int level, int cycle, unsigned& fresh_id) {
        if (level < prune_level) {
            for (element* c : e.children)
                prune_and_regrow(*c, level + 1, cycle, fresh_id);
            return;
        }
        std::size_t removed = 0;
        std::size_t kept = 0;
        for (std::size_t i = 0; i < e.children.size(); ++i) {
            if ((i + static_cast<std::size_t>(cycle)) % 3 == 0) {
                destroy(e.children[i]);
                ++removed;
            } else {
                e.children[kept++] = e.children[i];
            }
        }
        e.children.resize(kept);
        for (std::size_t i = 0; i < removed; ++i)
            e.children.push_back(grow(level + 1, fresh_id++, static_cast<unsigned>(cycle)));
    }

    static std::size_t run(int cycles, int walks) {
        element* root = make();
        root->name = "root window of the traversal benchmark";
        for (unsigned c = 0; c < fanout; ++c)
            root->children.push_back(grow(1, c + 1, 0));
        unsigned fresh_id = 1u << 20;
        std::size_t checksum = 0;
        for (int cycle = 0; cycle < cycles; ++cycle) {
            for (int w = 0; w < walks; ++w) {
                checksum += walk(*root);
                bench::escape(*root);
            }
            prune_and_regrow(*root, 0, cycle, fresh_id);
        }
        checksum += walk(*root);
        destroy(root);
        return checksum;
    }
};

/// The layouts and the heaps (bench::layout_rows), and the span layout on huge pages.
using rows = bench::layout_rows::with<bench::pool_peer<bench::pools::sta_spans_thp>>;

template <template <class> class Alloc>
int report(const char* name, int cycles, int walks) {
    const std::size_t checksum = gui<Alloc>::run(cycles, walks);
    const double seconds = bench::process_cpu_seconds();
    bench::print_result("traversal", name,
                        {{"cycles", cycles},
                         {"walks", walks},
                         {"cpu_seconds", bench::decimal{seconds, 4}},
                         {"peak_rss_kib", bench::peak_rss_kib()},
                         {"checksum", checksum}});
    return 0;
}

int usage() {
    std::fprintf(stderr, "usage: traversal_benchmark %s [CYCLES] [WALKS]\n", rows::names().c_str());
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2 || argc > 4)
        return usage();
    const int cycles = argc > 2 ? std::atoi(argv[2]) : 12;
    const int walks = argc > 3 ? std::atoi(argv[3]) : 24;
    if (cycles < 1 || walks < 1) {
        std::fprintf(stderr, "traversal_benchmark: CYCLES and WALKS are at least 1\n");
        return 2;
    }
    const auto status = rows::call(argv[1], [&]<class Row>() {
        if (!Row::available()) {
            std::fprintf(stderr, "traversal_benchmark: %s is not available here\n", Row::name);
            return 1;
        }
        return report<Row::template std_allocator>(Row::name, cycles, walks);
    });
    return status ? *status : usage();
}
