// The drop-in's memory limit (os/memory_account.hpp), run under LD_PRELOAD with a limit
// (STA_MALLOC_LIMIT_MIB, or a control group's: cgroup_limit.sh): each mode allocates and
// writes blocks until the library refuses, checks that it refused with NULL and ENOMEM
// (operator new: std::bad_alloc) when the blocks held (malloc_usable_size) [low, high]
// MiB, frees, and allocates again.
// Exit 0 when every check held; otherwise one line saying which did not.
//
//   memory_limit MODE LOW_MIB HIGH_MIB
//   big            1 MiB blocks; again after freeing them all
//   small          200-byte blocks; again after freeing them all
//   small_then_big 200-byte blocks, all freed, then 1 MiB blocks (the spans go back at once)
//   thread_exit    a thread fills and frees 200-byte blocks and ends, then 1 MiB blocks
//   new            operator new[] of 1 MiB until std::bad_alloc
#include <malloc.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>

namespace {

constexpr std::size_t mib = std::size_t{1} << 20;
std::size_t low = 0, high = 0;

[[noreturn]] void fail(const std::string& what) {
    std::printf("FAIL: %s\n", what.c_str());
    std::exit(1);
}

/// Blocks allocated, chained through their first word (no container of ours takes
/// memory under the same limit), and what they hold (malloc_usable_size).
struct chain {
    void* last = nullptr;
    std::size_t blocks = 0;
    std::size_t bytes = 0;

    void add(void* p) {
        std::memcpy(p, &last, sizeof last);
        last = p;
        ++blocks;
        bytes += malloc_usable_size(p);
    }
    template <class Free>
    void free_all(Free free_one) {
        while (last != nullptr) {
            void* next;
            std::memcpy(&next, last, sizeof next);
            free_one(last);
            last = next;
        }
        blocks = bytes = 0;
    }
    void free_all() {
        free_all([](void* p) { std::free(p); });
    }
};

/// Blocks of `bytes`, written, until malloc refuses; the refusal must be NULL + ENOMEM.
void fill(std::size_t bytes, chain& out) {
    for (;;) {
        errno = 0;
        void* const p = std::malloc(bytes);
        if (p == nullptr) {
            if (errno != ENOMEM)
                fail("malloc returned NULL with errno " + std::to_string(errno));
            return;
        }
        std::memset(p, 0x5a, bytes);
        out.add(p);
        if (out.bytes > 4 * high * mib)
            fail("no refusal after " + std::to_string(out.bytes / mib) + " MiB");
    }
}

/// What a fill held when refused lies within [low, high] MiB. Called after the blocks
/// are freed: at the limit, the strings here could not be allocated.
void check_range(const std::string& what, std::size_t blocks, std::size_t bytes) {
    const std::size_t got = bytes / mib;
    std::printf("%s: %zu blocks, %zu MiB, before the refusal\n", what.c_str(), blocks, got);
    if (got < low || got > high)
        fail(what + ": refused after " + std::to_string(got) + " MiB, not within [" +
             std::to_string(low) + ", " + std::to_string(high) + "]");
}

/// Fill with `bytes`, free, check.
void fill_free_check(std::size_t bytes, const std::string& name) {
    chain blocks;
    fill(bytes, blocks);
    const std::size_t n = blocks.blocks, held = blocks.bytes;
    blocks.free_all();
    check_range(name, n, held);
}

/// Fill with `bytes`, check, free, fill again: the second fill reaches the range too.
void fill_twice(std::size_t bytes, const std::string& name) {
    fill_free_check(bytes, name);
    fill_free_check(bytes, name + ", again after freeing");
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: memory_limit MODE LOW_MIB HIGH_MIB\n");
        return 2;
    }
    std::setvbuf(stdout, nullptr, _IONBF, 0); // printf allocates no buffer
    const std::string mode = argv[1];
    low = std::strtoull(argv[2], nullptr, 10);
    high = std::strtoull(argv[3], nullptr, 10);
    if (mode == "big") {
        fill_twice(mib, "1 MiB blocks");
    } else if (mode == "small") {
        fill_twice(200, "200-byte blocks");
    } else if (mode == "small_then_big") {
        fill_free_check(200, "200-byte blocks");
        fill_free_check(mib, "then 1 MiB blocks");
    } else if (mode == "thread_exit") {
        std::thread([] { fill_free_check(200, "a thread's 200-byte blocks"); }).join();
        fill_twice(mib, "then the main thread's 1 MiB blocks");
    } else if (mode == "new") {
        chain blocks;
        try {
            for (;;) {
                char* const p = new char[mib];
                std::memset(p, 0x5a, mib);
                blocks.add(p);
                if (blocks.bytes > 4 * high * mib)
                    fail("no std::bad_alloc after " + std::to_string(blocks.bytes / mib) + " MiB");
            }
        } catch (const std::bad_alloc&) {
        }
        const std::size_t n = blocks.blocks, held = blocks.bytes;
        blocks.free_all([](void* p) { delete[] static_cast<char*>(p); });
        check_range("operator new[] of 1 MiB", n, held);
    } else {
        std::fprintf(stderr, "memory_limit: unknown mode '%s'\n", mode.c_str());
        return 2;
    }
    std::printf("ok\n");
    return 0;
}
