// libFuzzer target: the input is a program of alloc / free / realloc over all sizes,
// with phase changes between classes, run on every dispatch x layout combination.
// Every block is filled with its own pattern and verified before free and after
// realloc; at the end of an input (now and then: check_now_and_then) the accounting
// checker must find every page (shared cursor) or span (spans) exactly tiled. Any
// mismatch aborts (a finding).
//
// The program, one op byte at a time (then its operands):
//   op < 0xE0, op % 4 in {0, 1}   alloc: a size of the phase (two bytes)
//              op % 4 == 2        free block [byte % live]
//              op % 4 == 3        realloc block [byte % live] to a size of the phase
//   op >= 0xE0, op % 4 == 0       phase: byte % 15 < 13 picks the sizes of one class
//                                 (8 B << it), 13 the next tiers' sizes up to 128 KiB,
//                                 14 every size (the start of every input)
//              op % 4 == 1        burst: 1 + 4 * byte allocations of one size of the phase
//              op % 4 == 2        free every (byte % 4 + 1)-th live block, newest first
//              op % 4 == 3        move: every live block reallocated to one size of the phase
// So a program fills spans of one class, frees them (whole or in part: partial and
// sleeping spans), and fills the memory again with another class. The span pools run
// with a purge delay of zero: every span that comes clean gives its pages back at once
// and every segment whose spans all come clean is unmapped, so blocks come from purged
// spans and new segments all the time (the checker asserts no purged page resident). Live bytes are
// capped at live_cap: an op that would pass it is skipped.
#include "../support/pool_checker.hpp"
#include "sta/memory_pool.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

struct fuzz_tag {};
using sta::dispatch::inline_branch;
using sta::dispatch::self_rewriting_table;
using sta::layout::shared_cursor;
using sta::layout::spans;
using table_cursor_pool = sta::basic_memory_pool<self_rewriting_table, fuzz_tag, shared_cursor>;
using branch_cursor_pool = sta::basic_memory_pool<inline_branch, fuzz_tag, shared_cursor>;
using table_spans_pool = sta::basic_memory_pool<self_rewriting_table, fuzz_tag, spans>;
using branch_spans_pool = sta::basic_memory_pool<inline_branch, fuzz_tag, spans>;

/// The most an input holds live at once. The shared-cursor layout never gives memory
/// to another class, so its pools grow to this per class over a run.
constexpr std::size_t live_cap = std::size_t{256} << 10;
/// The pool size up to which the accounting checker runs on every 16th input.
constexpr std::size_t check_bytes = std::size_t{4} << 20;

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

/// The sizes the program draws from: [low, high], or every size when high == 0.
struct phase {
    std::size_t low = 0, high = 0;
};

phase decode_phase(reader& r) {
    const unsigned k = r.byte() % 15;
    if (k < 13) {
        const std::size_t class_bytes = std::size_t{8} << k;
        return {k == 0 ? 0 : class_bytes / 2 + 1, class_bytes}; // 0 is an 8 B block too
    }
    if (k == 13)
        return {32769, 131072};
    return {};
}

std::size_t size_in(reader& r, const phase& ph) {
    if (ph.high == 0)
        return decode_size(r);
    return ph.low + r.u16() % (ph.high - ph.low + 1);
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

[[noreturn]] void refused(const char* what, std::size_t bytes) {
    std::fprintf(stderr, "pool_fuzzer: %s of %zu B returned nullptr\n", what, bytes);
    std::abort();
}

/// One input on one pool: its blocks, its phase, its live bytes.
template <class Pool>
class program {
  public:
    void alloc(std::size_t bytes) {
        if (live_bytes_ + bytes > live_cap)
            return;
        auto* p = static_cast<unsigned char*>(Pool::alloc(bytes));
        if (p == nullptr)
            refused("alloc", bytes);
        blocks_.push_back({p, bytes, next_seed_++});
        live_bytes_ += bytes;
        fill(blocks_.back());
    }

    void free(std::size_t i) {
        const live_block b = blocks_[i];
        verify(b, b.bytes, "before free");
        Pool::free(b.p, b.bytes);
        live_bytes_ -= b.bytes;
        blocks_[i] = blocks_.back();
        blocks_.pop_back();
    }

    void realloc(std::size_t i, std::size_t bytes) {
        const live_block b = blocks_[i];
        if (live_bytes_ - b.bytes + bytes > live_cap)
            return;
        verify(b, b.bytes, "before realloc");
        auto* q = static_cast<unsigned char*>(Pool::realloc(b.p, b.bytes, bytes));
        if (q == nullptr)
            refused("realloc", bytes);
        verify({q, b.bytes, b.seed}, b.bytes < bytes ? b.bytes : bytes, "after realloc");
        blocks_[i] = {q, bytes, next_seed_++};
        live_bytes_ += bytes - b.bytes;
        fill(blocks_[i]);
    }

    void run(reader r) {
        phase ph;
        while (r.more()) {
            const std::uint8_t op = r.byte();
            if (op < 0xE0) {
                if (op % 4 < 2 || blocks_.empty())
                    alloc(size_in(r, ph));
                else if (op % 4 == 2)
                    free(r.byte() % blocks_.size());
                else {
                    const std::size_t i = r.byte() % blocks_.size();
                    realloc(i, size_in(r, ph));
                }
                continue;
            }
            switch (op % 4) {
            case 0:
                ph = decode_phase(r);
                break;
            case 1: {
                const std::size_t count = 1 + std::size_t{4} * r.byte();
                const std::size_t bytes = size_in(r, ph);
                for (std::size_t n = 0; n < count; ++n)
                    alloc(bytes);
                break;
            }
            case 2: {
                const std::size_t step = r.byte() % 4 + 1;
                for (std::size_t i = blocks_.size(); i-- != 0;) // swaps in visited ones only
                    if (i % step == 0)
                        free(i);
                break;
            }
            default: {
                const std::size_t bytes = size_in(r, ph);
                for (std::size_t i = 0; i < blocks_.size(); ++i)
                    realloc(i, bytes);
                break;
            }
            }
        }
    }

    /// The checker walks every page or span and every free block: O(everything the pool
    /// ever held), which grows over a fuzzing run (the shared-cursor layout keeps what
    /// shrinks and phase changes leave in each class). It runs on the first input, then
    /// every 16th while the pool holds at most 4 MiB, and proportionally less often
    /// above: its cost per input stays bounded.
    void check_now_and_then() {
        static std::size_t since = 0;
        if (since++ % 16 != 0)
            return;
        const sta::pool_stats stats = Pool::stats();
        const std::size_t period = 1 + stats.mappings * stats.mapping_bytes / check_bytes;
        static std::size_t turn = 0;
        if (turn++ % period != 0)
            return;
        std::vector<sta::detail::held_block> held;
        for (const auto& b : blocks_)
            held.push_back({b.p, b.bytes});
        const std::string problems = sta::detail::check_accounting<Pool>(held);
        if (!problems.empty()) {
            std::fprintf(stderr, "pool_fuzzer: accounting broken on %s, %s:\n%s", Pool::name(),
                         Pool::layout_policy::name, problems.c_str());
            std::abort();
        }
    }

    void free_all() {
        while (!blocks_.empty())
            free(blocks_.size() - 1);
    }

  private:
    std::vector<live_block> blocks_;
    std::size_t live_bytes_ = 0;
    unsigned char next_seed_ = 1;
};

template <class Pool>
void run(const std::uint8_t* data, std::size_t size) {
    program<Pool> p;
    p.run(reader{data, size});
    p.check_now_and_then();
    p.free_all();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const bool purging = [] {
        table_spans_pool::set_purge_delay(0);
        branch_spans_pool::set_purge_delay(0);
        return true;
    }();
    (void)purging;
    run<table_cursor_pool>(data, size);
    run<branch_cursor_pool>(data, size);
    run<table_spans_pool>(data, size);
    run<branch_spans_pool>(data, size);
    return 0;
}
