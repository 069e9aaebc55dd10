// Self-timing for the Windows benchmarks (Google Benchmark is not built for mingw):
// QueryPerformanceCounter around N calls of each row, R repetitions with the rows
// interleaved in each, the median per row. Windows only.
#pragma once

#include "sta/detail/os/windows.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace self_timed {

struct row {
    const char* name;
    void (*fn)();
    std::vector<double> ns; ///< ns per call, one entry per repetition
};

/// `program [iterations] [repetitions]`: the two numbers, or the defaults; a value that is
/// not positive prints the usage line and exits with status 2.
struct arguments {
    long iterations;
    int repetitions;
};
inline arguments parse_arguments(int argc, char** argv, const char* program,
                                 long default_iterations, int default_repetitions = 15) {
    const arguments a{argc > 1 ? std::atol(argv[1]) : default_iterations,
                      argc > 2 ? std::atoi(argv[2]) : default_repetitions};
    if (a.iterations <= 0 || a.repetitions <= 0) {
        std::fprintf(stderr, "usage: %s [iterations] [repetitions]\n", program);
        std::exit(2);
    }
    return a;
}

inline double now_ns() {
    static const double ns_per_tick = [] {
        LARGE_INTEGER f;
        QueryPerformanceFrequency(&f);
        return 1e9 / static_cast<double>(f.QuadPart);
    }();
    LARGE_INTEGER t;
    QueryPerformanceCounter(&t);
    return static_cast<double>(t.QuadPart) * ns_per_tick;
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// Warm every row up (1,000 calls), then time `iterations` calls of each, `repetitions`
/// times, rows interleaved. Fills each row's ns.
inline void run(std::vector<row>& rows, long iterations, int repetitions) {
    for (auto& r : rows)
        for (int i = 0; i < 1000; ++i)
            r.fn();
    for (int rep = 0; rep < repetitions; ++rep)
        for (auto& r : rows) {
            const double t0 = now_ns();
            for (long i = 0; i < iterations; ++i)
                r.fn();
            r.ns.push_back((now_ns() - t0) / static_cast<double>(iterations));
        }
}

} // namespace self_timed
