// sta-pool benchmarks: the clocks and the memory figures every program reads (part of
// bench/harness.hpp; the client programs and the store-forwarding probe include it
// alone, since it needs nothing of sta-pool's).
//
//   thread_cpu_seconds()    this thread's CPU time (CLOCK_THREAD_CPUTIME_ID)
//   process_cpu_seconds()   the process's CPU time, user + system of all its threads
//                           (CLOCK_PROCESS_CPUTIME_ID)
//   peak_rss_kib()          the process's peak resident set so far (getrusage ru_maxrss)
//   minor_faults()          its minor page faults so far (ru_minflt)
//   rss_baseline            the peak RSS before the measured allocations; its peak()
//                           gives the peak since and the net peak (peak - baseline)
//   child_peak_rss_kib(f)   f() in a forked child: the child's peak RSS
//   median(v)
//
// CPU time, not wall time: on a machine shared with other work, the time a process
// spends descheduled is not its own. POSIX (Linux); the Windows benchmarks time
// themselves with QueryPerformanceCounter (bench/self_timed.hpp).
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <vector>

namespace bench {

/// The CPU time of a clock (CLOCK_THREAD_CPUTIME_ID, CLOCK_PROCESS_CPUTIME_ID) in
/// seconds. A system call (vDSO): cheap, not free.
inline double cpu_seconds(clockid_t clock) noexcept {
    timespec t{};
    ::clock_gettime(clock, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// This thread's CPU time in seconds.
inline double thread_cpu_seconds() noexcept {
    return cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
}

/// The process's CPU time in seconds: user + system, all threads.
inline double process_cpu_seconds() noexcept {
    return cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

/// getrusage(RUSAGE_SELF).
inline rusage self_usage() noexcept {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return usage;
}

/// The process's peak resident set size so far, in KiB (ru_maxrss).
inline long peak_rss_kib() noexcept {
    return self_usage().ru_maxrss;
}

/// The process's minor page faults so far (ru_minflt).
inline long minor_faults() noexcept {
    return self_usage().ru_minflt;
}

/// Peak RSS over a baseline: what the allocator held at its worst beyond the memory the
/// program had before it started (its code, its stacks, its own arrays).
struct rss_peak {
    long baseline_kib = 0;
    long peak_kib = 0;
    long net_kib() const noexcept { return peak_kib - baseline_kib; }
};

/// Taken before the measured allocations (after the program's own arrays are touched).
struct rss_baseline {
    long kib = 0;
    static rss_baseline take() noexcept { return {peak_rss_kib()}; }
    rss_peak peak() const noexcept { return {kib, peak_rss_kib()}; }
};

/// Runs `body` (returning an exit status) in a forked child process and gives the
/// child's peak RSS in KiB, or -1 when the child did not exit with status 0. The child
/// starts with the parent's pages, so its peak counts them too.
template <class Body>
long child_peak_rss_kib(Body&& body) {
    const pid_t child = ::fork();
    if (child == 0)
        ::_exit(body());
    int status = 0;
    rusage usage{};
    if (child < 0 || ::wait4(child, &status, 0, &usage) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return -1;
    return usage.ru_maxrss;
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace bench
