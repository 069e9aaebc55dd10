// Two small programs of big buffers, run unchanged under every allocator by
// bench/programs/run_programs.sh (they call the C library's malloc, realloc and free,
// nothing of sta-pool's):
//
//   big_buffers refill MIB ROUNDS   allocate MIB MiB (plus a few bytes that change from
//                                   round to round), fill it, free it; ROUNDS times
//   big_buffers grow MIB ROUNDS     grow one buffer with realloc by 1.5x from 16 B to
//                                   MIB MiB, filling each new part; free it; ROUNDS times
//
// What a program that frees and allocates its large buffers again and again, or grows
// one a step at a time, asks of an allocator: that the pages come back without a page
// fault each (docs/malloc.md, "Retained mappings"). Output: a checksum of what was
// read back, the same under every allocator.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// Through volatile pointers: the compiler may not pair a malloc with its free and drop
// both.
void* (*volatile malloc_fn)(std::size_t) = &std::malloc;
void* (*volatile realloc_fn)(void*, std::size_t) = &std::realloc;
void (*volatile free_fn)(void*) = &std::free;

long refill(std::size_t bytes, int rounds) {
    long sum = 0;
    for (int r = 0; r < rounds; ++r) {
        const std::size_t n = bytes + static_cast<std::size_t>(r % 7) * 100;
        auto* p = static_cast<unsigned char*>(malloc_fn(n));
        if (p == nullptr)
            return -1;
        std::memset(p, r & 0xff, n);
        sum += p[n / 2] + p[n - 1];
        free_fn(p);
    }
    return sum;
}

long grow(std::size_t limit, int rounds) {
    long sum = 0;
    for (int r = 0; r < rounds; ++r) {
        std::size_t n = 16;
        auto* p = static_cast<unsigned char*>(malloc_fn(n));
        if (p == nullptr)
            return -1;
        std::memset(p, 1, n);
        while (n < limit) {
            const std::size_t m = n + n / 2 + 8;
            auto* q = static_cast<unsigned char*>(realloc_fn(p, m));
            if (q == nullptr)
                return -1;
            std::memset(q + n, (r + static_cast<int>(n)) & 0xff, m - n);
            p = q;
            n = m;
        }
        sum += p[0] + p[n / 3] + p[n - 1];
        free_fn(p);
    }
    return sum;
}

} // namespace

int main(int argc, char** argv) {
    const std::string mode = argc == 4 ? argv[1] : "";
    const long mib = argc == 4 ? std::strtol(argv[2], nullptr, 10) : 0;
    const long rounds = argc == 4 ? std::strtol(argv[3], nullptr, 10) : 0;
    if ((mode != "refill" && mode != "grow") || mib <= 0 || rounds <= 0) {
        std::fprintf(stderr, "usage: big_buffers refill|grow MIB ROUNDS\n");
        return 2;
    }
    const std::size_t bytes = static_cast<std::size_t>(mib) << 20;
    const long sum = mode == "refill" ? refill(bytes, static_cast<int>(rounds))
                                      : grow(bytes, static_cast<int>(rounds));
    if (sum < 0) {
        std::fprintf(stderr, "big_buffers: out of memory\n");
        return 1;
    }
    std::printf("%s %ld MiB x %ld: %ld\n", mode.c_str(), mib, rounds, sum);
    return 0;
}
