// Self-timing for the Windows benchmarks (Google Benchmark is not built for mingw):
// QueryPerformanceCounter around N calls of each row, R repetitions with the rows
// interleaved in each (in a shuffled order), the median per row. Windows only.
//
// With the argument `jsonl` a program prints, instead of its Markdown, one JSON result
// line (bench/result_line.hpp) per row and repetition for scripts/report.sh:
//   {"kind": "wine", "allocator": ..., "compiler": "g++ 12", "measure": ..., "rep": 3,
//    "value": 12.345, "unit": "ns"}
#pragma once

#include "result_line.hpp"
#include "sta/detail/os/windows.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace self_timed {

struct row {
    const char* name;
    void (*fn)();
    std::vector<double> ns; ///< ns per call, one entry per repetition
    /// The row's allocator in the JSON lines ("sta-spans", "heap-box", ...); nullptr: the
    /// row is not printed there.
    const char* allocator = nullptr;
};

/// A row that times itself: once() runs one repetition and returns its figure (ns per
/// operation, µs per round), for measurements with parts that are not timed.
struct measured_row {
    const char* allocator; ///< as in the JSON lines
    const char* measure;   ///< "get/pure_get/rt/32", "scenario/tree", ...
    double (*once)();
    std::vector<double> values;
};

/// The compiler this program was built with, as the report names it.
inline std::string compiler() {
#if defined(__clang__)
    return "clang " + std::to_string(__clang_major__);
#elif defined(__GNUC__)
    return "g++ " + std::to_string(__GNUC__);
#elif defined(_MSC_VER)
    return "msvc " + std::to_string(_MSC_VER);
#else
    return "unknown";
#endif
}

/// argv[3] == "jsonl": print result lines, not Markdown.
inline bool jsonl(int argc, char** argv) {
    return argc > 3 && std::strcmp(argv[3], "jsonl") == 0;
}

inline void print_line(const char* allocator, const std::string& measure, std::size_t rep,
                       double value, const char* unit) {
    bench::print_result("wine", allocator,
                        {{"compiler", compiler()},
                         {"measure", measure},
                         {"rep", rep},
                         {"value", bench::decimal{value, 3}},
                         {"unit", unit}});
}

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
inline double lowest(const std::vector<double>& v) {
    return *std::min_element(v.begin(), v.end());
}
inline double highest(const std::vector<double>& v) {
    return *std::max_element(v.begin(), v.end());
}

/// The order of the rows in each repetition: shuffled anew every time (the same orders in
/// every run), so that no row always follows the same neighbour (what one leaves behind,
/// mapped pages, a warm cache or a busy heap, another would find).
class row_order {
  public:
    explicit row_order(std::size_t rows) : order_(rows) {
        for (std::size_t i = 0; i < rows; ++i)
            order_[i] = i;
    }
    const std::vector<std::size_t>& next() {
        std::shuffle(order_.begin(), order_.end(), random_);
        return order_;
    }

  private:
    std::vector<std::size_t> order_;
    std::mt19937 random_{12345};
};

/// Warm every row up (1,000 calls), then time `iterations` calls of each, `repetitions`
/// times, rows interleaved (row_order). Fills each row's ns.
inline void run(std::vector<row>& rows, long iterations, int repetitions) {
    for (auto& r : rows)
        for (int i = 0; i < 1000; ++i)
            r.fn();
    row_order order(rows.size());
    for (int rep = 0; rep < repetitions; ++rep)
        for (std::size_t k : order.next()) {
            row& r = rows[k];
            const double t0 = now_ns();
            for (long i = 0; i < iterations; ++i)
                r.fn();
            r.ns.push_back((now_ns() - t0) / static_cast<double>(iterations));
        }
}

/// Every row's once() a first time (not kept), then `repetitions` times, rows interleaved
/// (row_order).
inline void run(std::vector<measured_row>& rows, int repetitions) {
    for (auto& r : rows)
        (void)r.once();
    row_order order(rows.size());
    for (int rep = 0; rep < repetitions; ++rep)
        for (std::size_t k : order.next())
            rows[k].values.push_back(rows[k].once());
}

/// The JSON lines of `rows` (those with an allocator), measured as `measure`.
inline void print_lines(const std::vector<row>& rows, const std::string& measure) {
    for (const row& r : rows)
        if (r.allocator != nullptr)
            for (std::size_t i = 0; i < r.ns.size(); ++i)
                print_line(r.allocator, measure, i, r.ns[i], "ns");
}
inline void print_lines(const std::vector<measured_row>& rows, const char* unit) {
    for (const measured_row& r : rows)
        for (std::size_t i = 0; i < r.values.size(); ++i)
            print_line(r.allocator, r.measure, i, r.values[i], unit);
}

} // namespace self_timed
