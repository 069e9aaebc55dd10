// A program's start-up, run unchanged under every allocator by
// bench/programs/run_programs.sh (it calls the C library's malloc and free and
// std::vector's operator new, nothing of sta-pool's):
//
//   start_up BLOCKS   allocate BLOCKS blocks in a row, each written whole as it comes
//                     (70 % of 16-127 B, 25 % of 128-1023 B, 5 % of 1-8 KiB), their
//                     pointers kept in a std::vector that grows as it goes; every 20th
//                     block frees one allocated three before it (5 % freed soon after)
//
// What a GUI thread building its first window, a parser loading its document or an
// interpreter loading its modules asks of an allocator: many blocks of mixed sizes, few
// frees, every page touched for the first time (issue 38). The cost is mostly the
// kernel's: each page an allocator takes is a fault and a page cleared, so an allocator
// that faults in 2 MiB at a time (huge pages) and lays the blocks densely pays least.
// Output: a checksum of what was read back, the same under every allocator.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

// Through volatile pointers: the compiler may not pair a malloc with its free and drop
// both.
void* (*volatile malloc_fn)(std::size_t) = &std::malloc;
void (*volatile free_fn)(void*) = &std::free;

/// A block size of the mix, from the generator's state.
std::size_t size_of(unsigned x) {
    const unsigned r = (x >> 8) % 100;
    return r < 70 ? 16 + (x >> 20) % 112 : r < 95 ? 128 + (x >> 18) % 896 : 1024 + (x >> 16) % 7168;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2 || std::atol(argv[1]) <= 0) {
        std::fprintf(stderr, "usage: start_up BLOCKS\n");
        return 2;
    }
    const long blocks = std::atol(argv[1]);
    std::vector<unsigned char*> kept;
    std::vector<std::size_t> sizes;
    unsigned x = 12345;
    for (long i = 0; i < blocks; ++i) {
        x = x * 1103515245u + 12345u;
        const std::size_t n = size_of(x);
        auto* p = static_cast<unsigned char*>(malloc_fn(n));
        if (p == nullptr) {
            std::fprintf(stderr, "start_up: out of memory at block %ld\n", i);
            return 1;
        }
        std::memset(p, static_cast<int>(i & 0xff), n);
        kept.push_back(p);
        sizes.push_back(n);
        if (i % 20 == 19) { // one of the last few goes soon after
            free_fn(kept[static_cast<std::size_t>(i - 3)]);
            kept[static_cast<std::size_t>(i - 3)] = nullptr;
        }
    }
    unsigned long sum = 0;
    for (std::size_t i = 0; i < kept.size(); ++i)
        if (kept[i] != nullptr)
            sum += kept[i][0] + kept[i][sizes[i] - 1];
    std::printf("start_up %ld blocks: checksum %lu\n", blocks, sum);
    for (unsigned char* p : kept)
        free_fn(p);
    return 0;
}
