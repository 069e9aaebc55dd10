// libFuzzer target: the input is a program of alloc / free / realloc over all sizes,
// run on every dispatch variant. Every block is filled with its own pattern and
// verified before free and after realloc; at the end of an input (every 16th) the
// accounting checker must find every page exactly tiled. Any mismatch aborts (a finding).
#include "sta/detail/pool_checker.hpp"
#include "sta/memory_pool.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

struct fuzz_tag {};
using table_pool = sta::basic_memory_pool<sta::dispatch::self_rewriting_table, fuzz_tag>;
using branch_pool = sta::basic_memory_pool<sta::dispatch::inline_branch, fuzz_tag>;

struct reader {
    const std::uint8_t* data;
    std::size_t size;
    std::size_t at = 0;
    bool more() const { return at < size; }
    std::uint8_t byte() { return at < size ? data[at++] : 0; }
    std::size_t u16() { return byte() | (static_cast<std::size_t>(byte()) << 8); }
};

/// Sizes from two bytes: mostly small, reaching every class, both tiers and 0.
std::size_t decode_size(reader& r) {
    const std::size_t v = r.u16();
    switch (v >> 14) {
    case 0:
        return v & 0xFF;
    case 1:
        return v & 0xFFF;
    case 2:
        return v & 0x3FFF ? (v & 0x3FFF) * 2 + 1 : 32768;
    default:
        return 32768 + (v & 0x3FFF) * 29;
    }
}

struct live_block {
    unsigned char* p;
    std::size_t bytes;
    unsigned char seed;
};

/// The pattern of a block is a window of one shared table, shifted by its seed, so fill
/// and verify are memcpy and memcmp: a byte loop under coverage instrumentation made a
/// 500 KiB block cost milliseconds.
const unsigned char* pattern_table() {
    static const std::vector<unsigned char> table = [] {
        std::vector<unsigned char> t(600 * 1024 + 256);
        for (std::size_t i = 0; i < t.size(); ++i)
            t[i] = static_cast<unsigned char>(i * 7);
        return t;
    }();
    return table.data();
}

void fill(const live_block& b) {
    std::memcpy(b.p, pattern_table() + b.seed, b.bytes);
}

void verify(const live_block& b, std::size_t bytes, const char* when) {
    if (std::memcmp(b.p, pattern_table() + b.seed, bytes) != 0) {
        std::fprintf(stderr, "pool_fuzzer: block %p (%zu B) corrupted %s\n",
                     static_cast<void*>(b.p), b.bytes, when);
        std::abort();
    }
}

template <class Pool>
void run(const std::uint8_t* data, std::size_t size) {
    reader r{data, size};
    std::vector<live_block> blocks;
    unsigned char next_seed = 1;
    while (r.more()) {
        const std::uint8_t op = r.byte();
        if (op % 4 < 2 || blocks.empty()) {
            const std::size_t bytes = decode_size(r);
            auto* p = static_cast<unsigned char*>(Pool::alloc(bytes));
            if (p == nullptr)
                std::abort();
            blocks.push_back({p, bytes, next_seed++});
            fill(blocks.back());
        } else {
            const std::size_t i = r.byte() % blocks.size();
            live_block b = blocks[i];
            verify(b, b.bytes, "before free/realloc");
            if (op % 4 == 2) {
                Pool::free(b.p, b.bytes);
                blocks[i] = blocks.back();
                blocks.pop_back();
            } else {
                const std::size_t bytes = decode_size(r);
                auto* q = static_cast<unsigned char*>(Pool::realloc(b.p, b.bytes, bytes));
                if (q == nullptr)
                    std::abort();
                live_block moved{q, b.bytes < bytes ? b.bytes : bytes, b.seed};
                verify(moved, moved.bytes, "after realloc");
                blocks[i] = {q, bytes, next_seed++};
                fill(blocks[i]);
            }
        }
    }
    // The checker walks every page and free block: O(everything the pool ever held),
    // which grows over a fuzzing run. Every 16th input, and always on the first.
    static unsigned inputs = 0;
    if (inputs++ % 16 == 0) {
        std::vector<sta::detail::held_block> held;
        for (const auto& b : blocks)
            held.push_back({b.p, b.bytes});
        const std::string problems = sta::detail::check_accounting<Pool>(held);
        if (!problems.empty()) {
            std::fprintf(stderr, "pool_fuzzer: accounting broken:\n%s", problems.c_str());
            std::abort();
        }
    }
    for (const auto& b : blocks) {
        verify(b, b.bytes, "at the end");
        Pool::free(b.p, b.bytes);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    run<table_pool>(data, size);
    run<branch_pool>(data, size);
    return 0;
}
