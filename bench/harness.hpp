// sta-pool benchmarks: what every benchmark program shares.
//
//   measure.hpp      the CPU clocks (thread, process), peak RSS and its baseline
//   result_line.hpp  bench::print_result: the JSON result line, "kind" and "allocator"
//                    first, then the program's own fields
//   peers.hpp        the allocators measured beside the pool (malloc, std::allocator,
//                    mimalloc through its one dlopen, pmr, foonathan, boost)
// and here: the pool families by name, the pool as a row, and the call by name.
//
// A row is what a program names on its command line and prints as "allocator": a type
// with
//     static constexpr const char* name;   // "sta-spans-branch", "malloc", ...
//     static bool available();             // false when a peer could not be loaded
// and what the programs use of it: the Peer shape of peers.hpp (alloc / free by size),
// `template <class T> using std_allocator` (a stateless std allocator over it, for
// the container workloads), `pool` (the pool rows), `prepare()` (a setting the row
// needs before its first allocation, e.g. set_huge_pages). The pool rows are
// pool_peer<Family, Tag>: a family below, and a tag that gives the program (or one of
// its measurements) pages and free lists of its own (program_tag by default).
//
// bench::allocators<Rows...>::call(name, f) calls f.template operator()<Row>() for the
// row of that name: a template call, so each row's measured code is compiled for that
// row exactly as a direct call would be (the pool's calls inlined).
//
// The Windows benchmarks (bench/com_*.cpp, bench/windows) do not use the harness: they
// time themselves with QueryPerformanceCounter (bench/self_timed.hpp; no getrusage, no
// CPU clock of a process under mingw), print Markdown tables rather than result lines,
// and take no allocator by name.
#pragma once

#include "measure.hpp"
#include "peers.hpp"
#include "result_line.hpp"

#include <sta/allocator.hpp>
#include <sta/memory_pool.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace bench {

// ---------------------------------------------------------------------------------
// Pool families: (dispatch policy, layout, thread policy) under the name the programs
// take and print. The layout is named, not defaulted, whatever STA_POOL_SPANS makes
// sta::memory_pool's default; the thread policy is the layout's default
// (sta::threads::default_for: per_thread on spans, one_owner on the shared cursor)
// unless the family names it.
// ---------------------------------------------------------------------------------

template <class Policy, class Layout, class Threads = sta::threads::default_for<Layout>>
struct pool_family {
    using policy = Policy;
    using layout = Layout;
    using threads = Threads;
    template <class Tag>
    using pool = sta::basic_memory_pool<Policy, Tag, Layout, Threads>;
};

namespace pools {

using table = sta::dispatch::self_rewriting_table;
using branch = sta::dispatch::inline_branch;
using default_policy = sta::dispatch::default_policy;
using cursor = sta::layout::shared_cursor;
using spans = sta::layout::spans;

/// Each dispatch policy in the seed's shared-cursor layout.
struct sta_table : pool_family<table, cursor> {
    static constexpr const char* name = "sta-table";
};
struct sta_branch : pool_family<branch, cursor> {
    static constexpr const char* name = "sta-branch";
};
/// Each dispatch policy in the span layout, in its default thread policy.
struct sta_spans_table : pool_family<table, spans> {
    static constexpr const char* name = "sta-spans-table";
};
struct sta_spans_branch : pool_family<branch, spans> {
    static constexpr const char* name = "sta-spans-branch";
};
/// Each layout with the default dispatch.
struct sta_cursor : pool_family<default_policy, cursor> {
    static constexpr const char* name = "sta-cursor";
};
struct sta_spans : pool_family<default_policy, spans> {
    static constexpr const char* name = "sta-spans";
};
/// The span layout in threads::one_owner, the seed's mode: the default dispatch, and
/// inline_branch (what the per-thread pool's owner test costs, counted beside it).
struct sta_spans_seed : pool_family<default_policy, spans, sta::threads::one_owner> {
    static constexpr const char* name = "sta-spans-seed";
};
struct sta_spans_branch_seed : pool_family<branch, spans, sta::threads::one_owner> {
    static constexpr const char* name = "sta-spans-branch-seed";
};
/// sta-spans with its pages settings: huge pages (madvise) and prefaulted spans.
struct sta_spans_thp : sta_spans {
    static constexpr const char* name = "sta-spans+thp";
    template <class Pool>
    static void prepare() {
        Pool::set_huge_pages(true);
    }
};
struct sta_spans_prefault : sta_spans {
    static constexpr const char* name = "sta-spans+prefault";
    template <class Pool>
    static void prepare() {
        Pool::set_prefault(true);
    }
};

} // namespace pools

/// The tag of a program's pools where one will do (each program is a process of its own).
struct program_tag {};

/// The pool of a family with a program's tag.
template <class Family, class Tag = program_tag>
using pool_of = typename Family::template pool<Tag>;

/// The pool as a row: the pool of (Family, Tag) in the Peer shape (peers.hpp), with its
/// compile-time size path alloc<N>() / free<N>(p) and a std allocator over it.
template <class Family, class Tag = program_tag>
struct pool_peer {
    using pool = pool_of<Family, Tag>;
    template <class T>
    using std_allocator = sta::allocator_adapter<T, pool>;
    static constexpr const char* name = Family::name;
    static constexpr bool reuses = true;
    static constexpr bool single_size = false;
    static constexpr bool compile_time = true;
    static bool available() { return true; }
    static void prepare() {
        if constexpr (requires { Family::template prepare<pool>(); })
            Family::template prepare<pool>();
    }
    /// A per-thread family gives the thread its pool here, before any measurement: the
    /// one-time adoption (mapping the state, the thread-exit key) is not an allocation.
    explicit pool_peer(std::size_t) { (void)pool::detail_state(); }
    void* alloc(std::size_t bytes) { return pool::alloc(bytes); }
    void free(void* p, std::size_t bytes) { pool::free(p, bytes); }
    template <std::uint32_t Bytes>
    void* alloc() {
        return pool::template alloc<Bytes>();
    }
    template <std::uint32_t Bytes>
    void free(void* p) {
        pool::template free<Bytes>(p);
    }
    void release_all() {} // pool memory is kept until the process ends, by design
};

// ---------------------------------------------------------------------------------
// The call by name.
// ---------------------------------------------------------------------------------

/// The rows a program takes by name.
template <class First, class... Rest>
struct allocators {
    /// These rows and more.
    template <class... More>
    using with = allocators<First, Rest..., More...>;

    /// f.template operator()<Row>() for the row called `name`, after Row::prepare() when
    /// the row has one; its result, or std::nullopt when no row has that name. Every
    /// row's call returns the same type.
    template <class F>
    static auto call(std::string_view name, F&& f) {
        std::optional<decltype(f.template operator()<First>())> result;
        (void)((name == First::name && (run<First>(f, result), true)) ||
               ((name == Rest::name && (run<Rest>(f, result), true)) || ...));
        return result;
    }

    /// f.template operator()<Row>() for every row, in order.
    template <class F>
    static void each(F&& f) {
        f.template operator()<First>();
        (f.template operator()<Rest>(), ...);
    }

    /// The names, `separator` between them (for a usage line).
    static std::string names(std::string_view separator = "|") {
        std::string out = First::name;
        ((out.append(separator).append(Rest::name)), ...);
        return out;
    }

  private:
    static constexpr bool distinct_names() {
        const std::string_view names[] = {First::name, Rest::name...};
        for (std::size_t i = 0; i < std::size(names); ++i)
            for (std::size_t j = i + 1; j < std::size(names); ++j)
                if (names[i] == names[j])
                    return false;
        return true;
    }
    static_assert(distinct_names(), "two rows of one name: call() would reach the first only");

    template <class Row, class F, class Result>
    static void run(F& f, Result& result) {
        if constexpr (requires { Row::prepare(); })
            Row::prepare();
        result.emplace(f.template operator()<Row>());
    }
};

/// Each layout with the default dispatch beside the process's heap and mimalloc: the rows
/// of the measurements that compare the layouts in whole processes (the waves, the
/// traversal).
using layout_rows = allocators<pool_peer<pools::sta_cursor>, pool_peer<pools::sta_spans>,
                               malloc_peer, mimalloc_dl_peer>;

} // namespace bench
