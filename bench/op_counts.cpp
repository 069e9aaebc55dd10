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
#include "peers.hpp"

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

enum class pattern { fresh, pure_get, balanced };
const char* pattern_name(pattern p) {
    return p == pattern::fresh ? "fresh" : p == pattern::pure_get ? "pure_get" : "balanced";
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

template <class Peer, std::uint32_t Bytes, bool CT>
void fresh(std::size_t batches) {
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
void pure_get(std::size_t batches) {
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
void balanced(std::size_t batches) {
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

template <class Peer, std::uint32_t Bytes, bool CT>
void run_mode() {
    for (std::size_t batches : {small_batches, large_batches})
        fresh<Peer, Bytes, CT>(batches);
    if constexpr (Peer::reuses) {
        for (std::size_t batches : {small_batches, large_batches})
            pure_get<Peer, Bytes, CT>(batches);
        for (std::size_t batches : {small_batches, large_batches})
            balanced<Peer, Bytes, CT>(batches);
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

template <std::uint32_t Bytes, int Policy, bool CT>
struct tag {};

template <template <std::uint32_t, bool> class PeerOf, std::size_t... Shift>
void run_sizes(const std::vector<std::uint32_t>& sizes, std::index_sequence<Shift...>) {
    auto one = [&](auto size_constant) {
        constexpr std::uint32_t bytes = decltype(size_constant)::value;
        for (std::uint32_t s : sizes)
            if (s == bytes)
                run_size<PeerOf, bytes>();
    };
    (one(std::integral_constant<std::uint32_t, (std::uint32_t{8} << Shift)>{}), ...);
}

template <std::uint32_t Bytes, bool CT>
using pool_table = bench::pool_peer<sta::dispatch::self_rewriting_table, tag<Bytes, 0, CT>>;
template <std::uint32_t Bytes, bool CT>
using pool_branch = bench::pool_peer<sta::dispatch::inline_branch, tag<Bytes, 1, CT>>;
template <std::uint32_t Bytes, bool CT>
using spans_table =
    bench::pool_peer<sta::dispatch::self_rewriting_table, tag<Bytes, 2, CT>, sta::layout::spans>;
template <std::uint32_t Bytes, bool CT>
using spans_branch =
    bench::pool_peer<sta::dispatch::inline_branch, tag<Bytes, 3, CT>, sta::layout::spans>;
/// The span layout in the seed's thread mode: what the per-thread pool's owner test
/// and thread-local state cost, counted beside it.
template <std::uint32_t Bytes, bool CT>
using spans_branch_seed = bench::pool_peer<sta::dispatch::inline_branch, tag<Bytes, 4, CT>,
                                           sta::layout::spans, sta::threads::one_owner>;
template <std::uint32_t Bytes, bool CT>
using null_any = null_peer;
template <std::uint32_t Bytes, bool CT>
using malloc_any = bench::malloc_peer;
template <std::uint32_t Bytes, bool CT>
using new_delete_any = bench::new_delete_peer;
template <std::uint32_t Bytes, bool CT>
using mimalloc_any = bench::mimalloc_dl_peer;
template <std::uint32_t Bytes, bool CT>
using pmr_pool_any = bench::pmr_pool_peer;
template <std::uint32_t Bytes, bool CT>
using pmr_monotonic_any = bench::pmr_monotonic_peer;
#if STA_BENCH_HAVE_FOONATHAN
template <std::uint32_t Bytes, bool CT>
using foonathan_pool_any = bench::foonathan_pool_peer;
template <std::uint32_t Bytes, bool CT>
using foonathan_stack_any = bench::foonathan_stack_peer;
#endif
#if STA_BENCH_HAVE_BOOST
template <std::uint32_t Bytes, bool CT>
using boost_pool_any = bench::boost_pool_peer;
template <std::uint32_t Bytes, bool CT>
using boost_fast_any = bench::boost_fast_peer<Bytes>;
#endif

struct entry {
    const char* name;
    void (*run)(const std::vector<std::uint32_t>&);
    bool (*available)();
};

template <template <std::uint32_t, bool> class PeerOf>
entry make(const char* name) {
    return {name,
            [](const std::vector<std::uint32_t>& sizes) {
                run_sizes<PeerOf>(sizes, std::make_index_sequence<13>{});
            },
            [] { return PeerOf<8, false>::available(); }};
}

} // namespace

int main(int argc, char** argv) {
    const std::vector<entry> table = {
        make<null_any>("null"),
        make<pool_table>("sta-table"),
        make<pool_branch>("sta-branch"),
        make<spans_table>("sta-spans-table"),
        make<spans_branch>("sta-spans-branch"),
        make<spans_branch_seed>("sta-spans-branch-seed"),
        make<malloc_any>("malloc"),
        make<new_delete_any>("std::allocator"),
        make<mimalloc_any>("mimalloc-dlopen"),
        make<pmr_pool_any>("pmr-unsync-pool"),
        make<pmr_monotonic_any>("pmr-monotonic"),
#if STA_BENCH_HAVE_FOONATHAN
        make<foonathan_pool_any>("foonathan-pool"),
        make<foonathan_stack_any>("foonathan-stack"),
#endif
#if STA_BENCH_HAVE_BOOST
        make<boost_pool_any>("boost-pool"),
        make<boost_fast_any>("boost-fast-pool"),
#endif
    };
    if (argc < 2 || std::strcmp(argv[1], "--list") == 0) {
        for (const entry& e : table)
            std::printf("%s%s\n", e.name, e.available() ? "" : " (unavailable)");
        return argc < 2 ? 2 : 0;
    }
    std::vector<std::uint32_t> sizes;
    for (int i = 2; i < argc; ++i)
        sizes.push_back(static_cast<std::uint32_t>(std::strtoul(argv[i], nullptr, 10)));
    if (sizes.empty())
        sizes = {8, 32, 256, 4096, 32768};
    for (const entry& e : table) {
        if (std::strcmp(e.name, argv[1]) != 0)
            continue;
        if (!e.available()) {
            std::fprintf(stderr, "op_counts: %s is not available here\n", e.name);
            return 3;
        }
        e.run(sizes);
        return 0;
    }
    std::fprintf(stderr, "op_counts: unknown allocator %s (see op_counts --list)\n", argv[1]);
    return 2;
}
