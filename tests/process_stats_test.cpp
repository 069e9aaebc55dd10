// memory_pool::process_stats (issue 42): what every pool of a per-thread family holds,
// read by any thread — exact while the other threads wait, a sane snapshot while they
// work, and the parked pools' blocks still counted after their threads end.
#include "sta/memory_pool.hpp"
#include "sta/stats_json.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

template <class Tag>
using spans_pool = sta::basic_memory_pool<sta::dispatch::inline_branch, Tag, sta::layout::spans,
                                          sta::threads::per_thread>;

std::size_t class_in_use(const sta::process_stats& s, std::size_t block_bytes) {
    for (std::size_t n = 0; n < s.class_count; ++n)
        if (s.classes[n].block_bytes == block_bytes)
            return s.classes[n].bytes_in_use;
    return 0;
}

// Two threads hold 1000 blocks of 48 B and ten of 100,000 B (the private heap) each and
// wait: another thread's process_stats counts both pools' blocks exactly; when the
// threads have ended, their parked pools still hold them; freed by the main thread, they
// are gone from the figures.
TEST(ProcessStats, CountsEveryThreadsPoolAndTheParkedOnes) {
    struct tag {};
    using pool = spans_pool<tag>;
    constexpr std::size_t small = 1000, large = 10, large_bytes = 100000;
    std::vector<void*> blocks[2];
    std::atomic<int> held{0}, done{0}; // spun on: std::barrier never returned under wine (clang)
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
        threads.emplace_back([&, t] {
            for (std::size_t i = 0; i < small; ++i)
                blocks[t].push_back(pool::alloc(48));
            for (std::size_t i = 0; i < large; ++i)
                blocks[t].push_back(pool::alloc(large_bytes));
            held.fetch_add(1);
            while (done.load() == 0)
                std::this_thread::yield();
        });
    while (held.load() != 2)
        std::this_thread::yield();
    const sta::process_stats running = pool::process_stats();
    EXPECT_EQ(running.pools_made, 2u);
    EXPECT_EQ(running.pools_parked, 0u);
    EXPECT_EQ(class_in_use(running, 48), 2 * small * 48);
    // A per-thread heap block carries its owner in 16 bytes in front (heap_owner_prefix).
    const std::size_t heap_asked = 2 * large * large_bytes;
    EXPECT_GE(running.heap_bytes_in_use, heap_asked);
    EXPECT_LE(running.heap_bytes_in_use, heap_asked + 2 * large * 16);
    EXPECT_EQ(running.bytes_in_use,
              running.class_bytes_in_use + running.heap_bytes_in_use + running.big_bytes_in_use);
    EXPECT_GE(running.segments, 2u);
    EXPECT_GE(running.bytes_held, running.class_bytes_in_use);
    done.store(1);
    for (std::thread& t : threads)
        t.join();

    const sta::process_stats parked = pool::process_stats();
    EXPECT_EQ(parked.pools_parked, 2u);
    EXPECT_EQ(class_in_use(parked, 48), 2 * small * 48);
    EXPECT_EQ(parked.heap_bytes_in_use, running.heap_bytes_in_use);
#if !defined(_WIN32) // Windows does not tell a private heap's free space
    // The private heaps' free space: walked once the threads ended (exact), derived from
    // their counters while they ran (mapped less in use: the blocks' headers count as
    // free, 32 bytes a block and 64 a chunk at the most here).
    EXPECT_GT(parked.heap_bytes_free, 0u);
    EXPECT_GE(running.heap_bytes_free, parked.heap_bytes_free);
    EXPECT_LE(running.heap_bytes_free - parked.heap_bytes_free, 2 * ((large + 1) * 32 + 64));
#endif

    for (int t = 0; t < 2; ++t)
        for (std::size_t i = 0; i < blocks[t].size(); ++i)
            pool::free(blocks[t][i], i < small ? 48 : large_bytes);
    const sta::process_stats freed = pool::process_stats();
    EXPECT_EQ(class_in_use(freed, 48), 0u);
    EXPECT_EQ(freed.heap_bytes_in_use, 0u);
}

// A thread that allocates and frees in waves, mapping and unmapping segments (purge
// delay 0), while another reads process_stats again and again: every walk ends (no
// segment leaves under it, S14) and its figures stay within what was mapped.
TEST(ProcessStats, ASnapshotWhileAnotherThreadWorks) {
    struct tag {};
    using pool = spans_pool<tag>;
    std::atomic<bool> stop{false};
    std::thread worker([&] {
        pool::set_purge_delay(0);
        std::vector<void*> blocks;
        while (!stop.load(std::memory_order_relaxed)) {
            for (int i = 0; i < 20000; ++i)
                blocks.push_back(pool::alloc(256));
            for (void* p : blocks)
                pool::free(p, 256);
            blocks.clear();
            (void)pool::trim();
        }
    });
    std::size_t walks = 0;
    for (; walks < 300; ++walks) {
        const sta::process_stats s = pool::process_stats();
        ASSERT_LE(s.class_bytes_in_use, s.segments * (std::size_t{2} << 20));
        ASSERT_LE(s.pools_made, 1u);
    }
    stop.store(true);
    worker.join();
    EXPECT_EQ(walks, 300u);
}

// The JSON of sta/stats_json.hpp: one object, cut and NUL-terminated in a short buffer,
// whole in a long one, with the figures of the stats it was given.
TEST(ProcessStats, JsonIsOneObjectCutToTheBuffer) {
    sta::process_stats s;
    s.bytes_in_use = 12345;
    s.class_count = 2;
    s.classes[1] = {32, 1, 2048, 2000, 48 * 32};
    char whole[4096];
    const std::size_t length = sta::write_json(s, whole, sizeof whole);
    ASSERT_LT(length, sizeof whole);
    const std::string text(whole);
    EXPECT_EQ(text.size(), length);
    EXPECT_EQ(text.front(), '{');
    EXPECT_EQ(text.back(), '}');
    EXPECT_NE(text.find("\"in_use\": 12345"), std::string::npos);
    EXPECT_NE(text.find("{\"block_bytes\": 32, \"spans\": 1, \"blocks\": 2048, \"blocks_free\": "
                        "2000, \"bytes_in_use\": 1536}"),
              std::string::npos)
        << text;
    char cut[16];
    EXPECT_EQ(sta::write_json(s, cut, sizeof cut), length);
    EXPECT_EQ(std::strlen(cut), sizeof cut - 1);
    EXPECT_EQ(std::string(cut), text.substr(0, sizeof cut - 1));
}

} // namespace
