// A newcomer's first program: build and tear down a GUI-like scene — elements with
// names, property values, event-handler lists and child lists — once on the std
// containers with std::allocator and once on the sta containers, and print the
// median time of each and what the pool holds afterwards.
//
//     ./gui_scene [elements=4000] [rounds=31]
#include <sta/containers.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

/// The same scene type, over either allocator family.
template <template <class> class Alloc>
struct scene_types {
    using string = std::basic_string<char, std::char_traits<char>, Alloc<char>>;
    struct element;
    using element_ptr = std::unique_ptr<element>;
    struct element {
        string name;
        std::map<string, string, std::less<string>, Alloc<std::pair<const string, string>>>
            properties;
        std::vector<std::function<void(int)>, Alloc<std::function<void(int)>>> handlers;
        std::vector<element*, Alloc<element*>> children;
    };
    using storage = std::vector<element, Alloc<element>>;
};

template <class T>
using std_alloc = std::allocator<T>;
template <class T>
using sta_alloc = sta::allocator<T>;

template <template <class> class Alloc>
long build_and_discard(int elements) {
    using types = scene_types<Alloc>;
    typename types::storage scene;
    scene.reserve(static_cast<std::size_t>(elements));
    long checksum = 0;
    for (int i = 0; i < elements; ++i) {
        auto& e = scene.emplace_back();
        e.name = "element_" + std::to_string(i);
        e.name.append(" of the main window");
        e.properties.emplace("Width", std::to_string(100 + i % 300).c_str());
        e.properties.emplace("Height", "32");
        e.properties.emplace("Margin", "4,4,4,4");
        e.properties.emplace("Background", "#FF202020");
        e.properties.emplace("Content", e.name);
        for (int h = 0; h < 1 + i % 3; ++h)
            e.handlers.emplace_back([&checksum, i](int v) { checksum += v + i; });
        if (i > 0)
            scene[static_cast<std::size_t>((i - 1) / 4)].children.push_back(&e);
    }
    for (auto& e : scene)
        for (auto& h : e.handlers)
            h(static_cast<int>(e.children.size()));
    return checksum + static_cast<long>(scene.size());
}

template <template <class> class Alloc>
double median_microseconds(int elements, int rounds, long& checksum) {
    std::vector<double> times;
    for (int r = 0; r < rounds; ++r) {
        const auto start = std::chrono::steady_clock::now();
        checksum += build_and_discard<Alloc>(elements);
        const auto stop = std::chrono::steady_clock::now();
        times.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
    }
    std::nth_element(times.begin(), times.begin() + rounds / 2, times.end());
    return times[static_cast<std::size_t>(rounds / 2)];
}

} // namespace

int main(int argc, char** argv) {
    const int elements = argc > 1 ? std::atoi(argv[1]) : 4000;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 31;
    if (elements <= 0 || rounds <= 0) {
        std::fprintf(stderr, "usage: gui_scene [elements>0] [rounds>0]\n");
        return 2;
    }
    long checksum_std = 0, checksum_sta = 0;
    // Interleave to share the machine's noise fairly; warm up both first.
    build_and_discard<std_alloc>(elements);
    build_and_discard<sta_alloc>(elements);
    const double t_std = median_microseconds<std_alloc>(elements, rounds, checksum_std);
    const double t_sta = median_microseconds<sta_alloc>(elements, rounds, checksum_sta);
    if (checksum_std != checksum_sta) {
        std::fprintf(stderr, "the two scenes differ: %ld vs %ld\n", checksum_std, checksum_sta);
        return 1;
    }
    const sta::pool_stats s = sta::memory_pool::stats();
    std::printf("GUI scene: %d elements, build + discard, median of %d rounds\n", elements, rounds);
    std::printf("  std::allocator (glibc malloc): %9.1f us\n", t_std);
    std::printf("  sta::allocator (memory_pool):  %9.1f us   (%.2fx)\n", t_sta, t_std / t_sta);
    std::printf("pool afterwards: %zu pages of %zu KiB, %zu bytes in use, %zu bytes free "
                "for reuse\n",
                s.mappings, s.mapping_bytes / 1024, s.bytes_in_use, s.bytes_free);
    return 0;
}
