// A newcomer's first program: build and tear down a GUI-like scene — elements with
// names, property values, event-handler lists and child lists — once on the std
// containers with std::allocator and once on the sta containers, and print the
// median time of each and what the pool holds afterwards. The scene is the one the
// benchmarks measure (bench/gui_scene.hpp: its types and one round of it).
//
//     ./gui_scene [elements=4000] [rounds=31]
#include "../bench/gui_scene.hpp"

#include <sta/containers.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace {

template <class T>
using std_alloc = std::allocator<T>;
template <class T>
using sta_alloc = sta::allocator<T>;

template <template <class> class Alloc>
double median_microseconds(int elements, int rounds, std::size_t& checksum) {
    std::vector<double> times;
    for (int r = 0; r < rounds; ++r) {
        const auto start = std::chrono::steady_clock::now();
        checksum += bench::gui_round<Alloc>(elements);
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
    std::size_t checksum_std = 0, checksum_sta = 0;
    // Interleave to share the machine's noise fairly; warm up both first.
    bench::gui_round<std_alloc>(elements);
    bench::gui_round<sta_alloc>(elements);
    const double t_std = median_microseconds<std_alloc>(elements, rounds, checksum_std);
    const double t_sta = median_microseconds<sta_alloc>(elements, rounds, checksum_sta);
    if (checksum_std != checksum_sta) {
        std::fprintf(stderr, "the two scenes differ: %zu vs %zu\n", checksum_std, checksum_sta);
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
