// sta-pool clients: what the three client programs (Lua, SQLite, libxml2) share —
// the command line's allocator choice, the result line the scripts read, a hash.
//
// Every client program takes `--alloc=pool` or `--alloc=malloc` first. `malloc` is
// the library's default allocator (glibc, or whatever LD_PRELOAD puts in its place:
// run_clients.sh measures mimalloc that way). The program writes the workload's
// output to stdout (the oracle: both allocators must print the same bytes) and one
// line to stderr:
//
//   sta-client alloc=<pool|malloc> seconds=<timed part> maxrss_kib=<peak RSS>
//
// `seconds` is the CPU time (user + system, CLOCK_PROCESS_CPUTIME_ID) of the part the
// program names as its benchmark: on a machine shared with other work it moves less
// than wall time, and these programs are single-threaded and do no I/O while timed.
// `maxrss_kib` is getrusage's ru_maxrss for the whole process. Both are read through
// bench/measure.hpp, as the benchmark programs read them. This line is not a JSON
// result line: run_clients.sh reads it and writes the JSON lines (kind "clients").
#pragma once

#include "../measure.hpp" // the benchmarks' clocks and peak RSS

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace sta_clients {

enum class allocator_choice { pool, malloc, invalid };

inline allocator_choice parse_allocator(int argc, char** argv) {
    if (argc < 2)
        return allocator_choice::invalid;
    const std::string_view a = argv[1];
    if (a == "--alloc=pool")
        return allocator_choice::pool;
    if (a == "--alloc=malloc")
        return allocator_choice::malloc;
    return allocator_choice::invalid;
}

inline const char* name_of(allocator_choice c) {
    return c == allocator_choice::pool ? "pool" : "malloc";
}

/// CPU seconds of this process since construction.
class stopwatch {
  public:
    stopwatch() : start_(bench::process_cpu_seconds()) {}
    double seconds() const { return bench::process_cpu_seconds() - start_; }

  private:
    double start_;
};

inline void report_result(allocator_choice c, double seconds) {
    std::fprintf(stderr, "sta-client alloc=%s seconds=%.6f maxrss_kib=%ld\n", name_of(c), seconds,
                 bench::peak_rss_kib());
}

/// FNV-1a, 64 bits: a stable hash of output too long to print.
class fnv1a {
  public:
    void add(const void* data, std::size_t bytes) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < bytes; ++i) {
            value_ ^= p[i];
            value_ *= 0x100000001b3u;
        }
    }
    void add(std::string_view s) { add(s.data(), s.size()); }
    std::uint64_t value() const { return value_; }

  private:
    std::uint64_t value_ = 0xcbf29ce484222325u;
};

} // namespace sta_clients
