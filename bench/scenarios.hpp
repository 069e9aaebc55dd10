// sta-pool benchmarks: the workloads more than one program runs — the nested-container
// tree of scenario_benchmark (waves_benchmark repeats it in waves) and the GUI scene
// (bench/gui_scene.hpp), each over any std allocator (a row's std_allocator,
// bench/harness.hpp). The standard library only: the Windows benchmarks run them too
// (bench/windows/paths_benchmark.cpp).
//
//   tree  map<string, vector<node>>, each node with a string name, a vector of values
//         and a map<int, string> of attributes, the allocator at every level: built
//         (`keys` keys of 16 nodes; 256 keys = about 4,100 nodes, 40,000 blocks),
//         shaken `shakes` times (a quarter of the keys erased and as many new ones
//         inserted, a quarter of the nodes' values regrown) and destroyed;
//         bench/programs/memory_back.cpp builds it large through malloc.
//   gui   4,000 elements with a string name, a map of property values, a vector of
//         event handlers (std::function) and a vector of children; built, its handlers
//         invoked, then discarded.
#pragma once

#include "escape.hpp"
#include "gui_scene.hpp"

#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace bench {

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

/// What tree_round calls before it destroys the tree, by default: nothing.
struct no_op {
    void operator()() const noexcept {}
};

/// One round of the tree: build `keys` keys, shake `shakes` times, call `at_peak()` (the
/// tree at its largest, all of it live: bench/programs/memory_back.cpp reads the RSS
/// there), destroy.
template <template <class> class Alloc, class AtPeak = no_op>
std::size_t tree_round(int keys = tree_keys, int shakes = 1, AtPeak at_peak = {}) {
    using types = tree_types<Alloc>;
    std::uint32_t seed = 12345;
    std::size_t checksum = 0;
    {
        typename types::tree t;
        int next_key = 0;
        for (; next_key < keys; ++next_key) // build
            fill_key<Alloc>(t, next_key, seed);
        for (int shake = 0; shake < shakes; ++shake) {
            int k = 0; // erase a quarter of the keys, insert as many new ones
            for (auto it = t.begin(); it != t.end(); ++k)
                it = k % 4 == 0 ? t.erase(it) : std::next(it);
            for (int n = 0; n < keys / 4; ++n)
                fill_key<Alloc>(t, next_key++, seed);
            for (auto& [name, nodes] : t) { // regrow a quarter of the value vectors
                for (std::size_t i = 0; i < nodes.size(); i += 4)
                    for (int v = 0; v < 24; ++v)
                        nodes[i].values.push_back(static_cast<std::uint32_t>(v));
                checksum += name.size() + nodes.size();
            }
        }
        escape(t);
        at_peak();
    } // destroy
    return checksum;
}

} // namespace bench
