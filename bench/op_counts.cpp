// sta-pool: the driver behind scripts/callgrind_counts.sh — runs the get benchmark's
// three patterns for ONE allocator, chosen by argv, under
// `valgrind --tool=callgrind --collect-atstart=no`, and marks each measured phase:
// collection is on only inside the measured loops, and every phase ends with a
// CALLGRIND_DUMP_STATS_AT("<pattern>/<ct|rt>/<bytes>/<ops>"). Each phase runs twice,
// with `small` and `large` operation counts; the script takes the difference (which
// cancels the fixed costs) and subtracts the same difference for the `null`
// allocator (which cancels the loop itself): instructions per operation, net.
//
//     op_counts <allocator> [bytes...]     allocators: see `op_counts --list`
//
// Outside valgrind the client requests do nothing; the program just runs.
#include "harness.hpp"

#include <valgrind/callgrind.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

/// The baseline: the same loops around an allocator that does nothing.
struct null_peer {
    static constexpr const char* name = "null";
    static constexpr bool reuses = true;
    static constexpr bool compile_time = true;
    static bool available() { return true; }
    alignas(16) static inline unsigned char block[32768];
    explicit null_peer(std::size_t) {}
    void* alloc(std::size_t) { return block; }
    void free(void*, std::size_t) {}
    template <std::uint32_t>
    void* alloc() {
        return block;
    }
    template <std::uint32_t>
    void free(void*) {}
    void release_all() {}
};

inline void barrier() {
    __asm__ __volatile__("" ::: "memory");
}
template <class T>
inline void opaque(T& value) {
    __asm__ __volatile__("" : "+r"(value) : : "memory");
}

enum class pattern { fresh, pure_get, balanced, random };
const char* pattern_name(pattern p) {
    return p == pattern::fresh      ? "fresh"
           : p == pattern::pure_get ? "pure_get"
           : p == pattern::balanced ? "balanced"
                                    : "random";
}

constexpr std::size_t batch_of(std::size_t bytes) {
    const std::size_t n = (std::size_t{1} << 20) / bytes;
    return n < 32 ? 32 : n > 1024 ? 1024 : n;
}
/// Operation counts of the two runs of each phase: 2 and 10 batches.
constexpr std::size_t small_batches = 2;
constexpr std::size_t large_batches = 10;

template <class Peer, std::uint32_t Bytes, bool CT>
struct ops {
    static void* alloc(Peer& a, std::size_t& n) {
        if constexpr (CT) {
            return a.template alloc<Bytes>();
        } else {
            opaque(n);
            return a.alloc(n);
        }
    }
    static void free(Peer& a, void* p, std::size_t& n) {
        if constexpr (CT) {
            a.template free<Bytes>(p);
        } else {
            opaque(n);
            a.free(p, n);
        }
    }
};

void dump(pattern p, bool ct, std::uint32_t bytes, std::size_t n_ops) {
    char label[96];
    std::snprintf(label, sizeof label, "%s/%s/%u/%zu", pattern_name(p), ct ? "ct" : "rt", bytes,
                  n_ops);
    CALLGRIND_DUMP_STATS_AT(label);
}

// The three patterns are functions of their own (noinline): the loop around a pool's
// inlined fast path is compiled alone, so a change elsewhere in this program (a new
// allocator row, the harness) cannot move its registers and so its counts.
template <class Peer, std::uint32_t Bytes, bool CT>
[[gnu::noinline]] void fresh(std::size_t batches) {
    using op = ops<Peer, Bytes, CT>;
    constexpr std::size_t batch = batch_of(Bytes);
    std::size_t n = Bytes;
    std::vector<void*> kept(batch * batches);
    Peer a(Bytes);
    bench::escape(a); // as in get_benchmark: the barriers cover its state
    CALLGRIND_TOGGLE_COLLECT;
    for (std::size_t i = 0; i < kept.size(); ++i) {
        kept[i] = op::alloc(a, n);
        barrier();
    }
    CALLGRIND_TOGGLE_COLLECT;
    dump(pattern::fresh, CT, Bytes, kept.size());
    if constexpr (!Peer::compile_time) // the pool never frees: fresh stays fresh
        for (void* p : kept)
            a.free(p, Bytes);
    a.release_all();
}

template <class Peer, std::uint32_t Bytes, bool CT>
[[gnu::noinline]] void pure_get(std::size_t batches) {
    using op = ops<Peer, Bytes, CT>;
    constexpr std::size_t batch = batch_of(Bytes);
    std::size_t n = Bytes;
    std::vector<void*> ptrs(batch);
    Peer a(Bytes);
    bench::escape(a); // as in get_benchmark: the barriers cover its state
    auto give_back = [&] {
        for (std::size_t i = batch; i-- > 0;) {
            op::free(a, ptrs[i], n);
            barrier();
        }
    };
    for (std::size_t i = 0; i < batch; ++i)
        ptrs[i] = op::alloc(a, n);
    give_back();
    for (std::size_t b = 0; b < batches; ++b) {
        CALLGRIND_TOGGLE_COLLECT;
        for (std::size_t i = 0; i < batch; ++i) {
            ptrs[i] = op::alloc(a, n);
            barrier();
        }
        CALLGRIND_TOGGLE_COLLECT;
        give_back();
    }
    dump(pattern::pure_get, CT, Bytes, batch * batches);
    a.release_all();
}

template <class Peer, std::uint32_t Bytes, bool CT>
[[gnu::noinline]] void balanced(std::size_t batches) {
    using op = ops<Peer, Bytes, CT>;
    constexpr std::size_t ring_size = batch_of(Bytes);
    std::size_t n = Bytes;
    std::vector<void*> ring(ring_size);
    Peer a(Bytes);
    bench::escape(a); // as in get_benchmark: the barriers cover its state
    for (std::size_t i = 0; i < ring_size; ++i)
        ring[i] = op::alloc(a, n);
    CALLGRIND_TOGGLE_COLLECT;
    for (std::size_t b = 0; b < batches; ++b) {
        for (std::size_t i = 0; i < ring_size; ++i) {
            op::free(a, ring[i], n);
            barrier();
            ring[i] = op::alloc(a, n);
            barrier();
        }
    }
    CALLGRIND_TOGGLE_COLLECT;
    dump(pattern::balanced, CT, Bytes, ring_size * batches);
    for (void* p : ring)
        op::free(a, p, n);
    a.release_all();
}

/// random: a ring of live blocks four times the balanced ring (more than a span of the
/// class holds), and one op = free the block of a pseudo-random slot + allocate its
/// replacement: frees in any order, as a program's churn (threads_benchmark's churn, one
/// size). The slots come from a table made before the loop, the same for every allocator.
template <class Peer, std::uint32_t Bytes, bool CT>
[[gnu::noinline]] void random(std::size_t batches) {
    using op = ops<Peer, Bytes, CT>;
    constexpr std::size_t ring_size = 4 * batch_of(Bytes);
    std::size_t n = Bytes;
    std::vector<void*> ring(ring_size);
    std::vector<std::uint32_t> slots(ring_size);
    std::uint64_t x = 0x9e3779b97f4a7c15ull;
    for (std::uint32_t& slot : slots) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        slot = static_cast<std::uint32_t>(x % ring_size);
    }
    Peer a(Bytes);
    bench::escape(a); // as in get_benchmark: the barriers cover its state
    for (std::size_t i = 0; i < ring_size; ++i)
        ring[i] = op::alloc(a, n);
    for (std::uint32_t i : slots) { // warm: the ring's order is random already
        op::free(a, ring[i], n);
        ring[i] = op::alloc(a, n);
    }
    CALLGRIND_TOGGLE_COLLECT;
    for (std::size_t b = 0; b < batches; ++b) {
        for (std::uint32_t i : slots) {
            op::free(a, ring[i], n);
            barrier();
            ring[i] = op::alloc(a, n);
            barrier();
        }
    }
    CALLGRIND_TOGGLE_COLLECT;
    dump(pattern::random, CT, Bytes, ring_size * batches);
    for (void* p : ring)
        op::free(a, p, n);
    a.release_all();
}

template <class Peer, std::uint32_t Bytes, bool CT>
void run_mode() {
    for (std::size_t batches : {small_batches, large_batches})
        fresh<Peer, Bytes, CT>(batches);
    if constexpr (Peer::reuses) {
        for (std::size_t batches : {small_batches, large_batches})
            pure_get<Peer, Bytes, CT>(batches);
        for (std::size_t batches : {small_batches, large_batches})
            balanced<Peer, Bytes, CT>(batches);
        for (std::size_t batches : {small_batches, large_batches})
            random<Peer, Bytes, CT>(batches);
    }
}

/// Each mode (ct, rt) of a pool gets its own tag, so its fresh phase starts with
/// empty lists (fresh never frees; the other phases run after it).
template <template <std::uint32_t, bool> class PeerOf, std::uint32_t Bytes>
void run_size() {
    if constexpr (PeerOf<Bytes, true>::compile_time)
        run_mode<PeerOf<Bytes, true>, Bytes, true>();
    run_mode<PeerOf<Bytes, false>, Bytes, false>();
}

template <std::uint32_t Bytes, class Family, bool CT>
struct tag {};

/// The sizes op_counts can count: every power of two of the classes, and sizes between
/// them that quarter classes serve (24, 48, 96, 200 and 3000 B: issue 26's list).
using countable_sizes = std::integer_sequence<std::uint32_t, 8, 16, 24, 32, 48, 64, 96, 128, 200,
                                              256, 512, 1024, 2048, 3000, 4096, 8192, 16384, 32768>;

template <template <std::uint32_t, bool> class PeerOf, std::uint32_t... Sizes>
void run_sizes(const std::vector<std::uint32_t>& sizes,
               std::integer_sequence<std::uint32_t, Sizes...>) {
    auto one = [&](auto size_constant) {
        constexpr std::uint32_t bytes = decltype(size_constant)::value;
        for (std::uint32_t s : sizes)
            if (s == bytes)
                run_size<PeerOf, bytes>();
    };
    (one(std::integral_constant<std::uint32_t, Sizes>{}), ...);
}

/// The peer of a row at each (size, ct/rt): a pool family with a tag per size and mode,
/// or a peer, the same at every size and mode.
template <class Family>
struct pool_of_family {
    template <std::uint32_t Bytes, bool CT>
    using peer = bench::pool_peer<Family, tag<Bytes, Family, CT>>;
};
template <class Peer>
struct same_peer {
    template <std::uint32_t, bool>
    using peer = Peer;
};
#if STA_BENCH_HAVE_BOOST
/// boost::fast_pool_allocator: a singleton pool per block size.
struct boost_fast_of_size {
    template <std::uint32_t Bytes, bool>
    using peer = bench::boost_fast_peer<Bytes>;
};
#endif

/// A row of op_counts: the peer measured at each (size, ct/rt), named as the peer is.
template <class Of>
struct row {
    static constexpr const char* name = Of::template peer<8, false>::name;
    static bool available() { return Of::template peer<8, false>::available(); }
    static void run(const std::vector<std::uint32_t>& sizes) {
        run_sizes<Of::template peer>(sizes, countable_sizes{});
    }
};

using rows = bench::allocators<
    row<same_peer<null_peer>>, row<pool_of_family<bench::pools::sta_table>>,
    row<pool_of_family<bench::pools::sta_branch>>,
    row<pool_of_family<bench::pools::sta_spans_table>>,
    row<pool_of_family<bench::pools::sta_spans_branch>>,
    // the span layout in the seed's thread mode: what the per-thread pool's owner test and
    // thread-local state cost, counted beside it
    row<pool_of_family<bench::pools::sta_spans_branch_seed>>, row<same_peer<bench::malloc_peer>>,
    row<same_peer<bench::new_delete_peer>>, row<same_peer<bench::mimalloc_dl_peer>>,
    row<same_peer<bench::pmr_pool_peer>>, row<same_peer<bench::pmr_monotonic_peer>>
#if STA_BENCH_HAVE_FOONATHAN
    ,
    row<same_peer<bench::foonathan_pool_peer>>, row<same_peer<bench::foonathan_stack_peer>>
#endif
#if STA_BENCH_HAVE_BOOST
    ,
    row<same_peer<bench::boost_pool_peer>>, row<boost_fast_of_size>
#endif
    >;

} // namespace

int main(int argc, char** argv) {
    if (argc < 2 || std::strcmp(argv[1], "--list") == 0) {
        rows::each([]<class Row>() {
            std::printf("%s%s\n", Row::name, Row::available() ? "" : " (unavailable)");
        });
        return argc < 2 ? 2 : 0;
    }
    std::vector<std::uint32_t> sizes;
    for (int i = 2; i < argc; ++i)
        sizes.push_back(static_cast<std::uint32_t>(std::strtoul(argv[i], nullptr, 10)));
    if (sizes.empty())
        sizes = {8, 32, 256, 4096, 32768};
    for (std::uint32_t s : sizes)
        if (![s]<std::uint32_t... Sizes>(std::integer_sequence<std::uint32_t, Sizes...>) {
                return ((s == Sizes) || ...);
            }(countable_sizes{})) {
            std::fprintf(stderr, "op_counts: %u B is not a size it counts (countable_sizes)\n", s);
            return 2;
        }
    const auto status = rows::call(argv[1], [&]<class Row>() {
        if (!Row::available()) {
            std::fprintf(stderr, "op_counts: %s is not available here\n", Row::name);
            return 3;
        }
        Row::run(sizes);
        return 0;
    });
    if (status)
        return *status;
    std::fprintf(stderr, "op_counts: unknown allocator %s (see op_counts --list)\n", argv[1]);
    return 2;
}
