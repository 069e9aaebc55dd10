// sta-pool: slots_benchmark — sta::lazy_slot and sta::local_ptr against what people
// use today (issue 9).
//
// Calls (names slot/<variant>): one call through a resolved "factory" {context, fn}
// whose target adds one to its argument; the result feeds the next call, so the loop
// measures latency, as a constructor chain does.
//   direct        a global {context, fn} filled before the loop: the floor.
//   lazy_slot     sta::lazy_slot, resolved by its first call before the loop.
//   local_static  a function-local static {context, fn}: the guard check every call.
//   call_once     std::call_once on a global flag, then the call.
//   null_checked  "if (!fn) resolve();" then the call (the cppwinrt-style cache,
//                 without its atomics).
//   virtual       a cached factory pointer, null-checked, then a virtual call: the load
//                 chain pointer -> vtable -> fn the seed removes.
//
// Shared owners (names owner/<variant>): copy one pointer and destroy the copy.
//   local_ptr                    sta::local_ptr (non-atomic count in the pool block)
//   boost_local_shared_ptr       boost::local_shared_ptr (non-atomic)
//   shared_ptr                   std::shared_ptr after the process started a thread:
//                                libstdc++ uses lock-prefixed adds from then on
//   shared_ptr_single_threaded   std::shared_ptr before any thread was started:
//                                glibc's __libc_single_threaded lets libstdc++ skip
//                                the atomics (runs first; skipped if a thread exists)
//
// Instruction counts: `slots_benchmark --callgrind-phases` runs every call variant
// twice (small and large call counts) with callgrind collection on only inside the
// loops; bench/slots_callgrind.sh turns the dumps into instructions per call.
#include "sta/lazy_slot.hpp"
#include "sta/local_ptr.hpp"

#include <benchmark/benchmark.h>
#include <boost/smart_ptr/local_shared_ptr.hpp>
#include <boost/smart_ptr/make_local_shared.hpp>
#include <valgrind/callgrind.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <sys/single_threaded.h>
#include <thread>

namespace {

// ---------------------------------------------------------------------------------
// The target and the resolvers.
// ---------------------------------------------------------------------------------

struct factory_state {
    int step = 1;
};
factory_state the_factory;

STA_NOINLINE int add_step(void* context, int x) {
    return x + static_cast<factory_state*>(context)->step;
}

using int_slot = sta::lazy_slot<int(int)>;

/// A resolver the optimiser cannot see through (as a dlsym or RoGetActivationFactory).
STA_NOINLINE int_slot::target resolve_target() {
    benchmark::ClobberMemory();
    return {&the_factory, &add_step};
}
int_slot::target resolve_for_slot(const char*, void*) {
    return resolve_target();
}

// direct: filled in main, before any benchmark runs.
int_slot::target direct_target;

// lazy_slot: constant-initialised, resolved by the first call.
constinit int_slot lazy{&resolve_for_slot, "add_step"};

// local_static.
STA_FORCE_INLINE int call_through_local_static(int x) {
    static const int_slot::target t = resolve_target();
    return t.fn(t.context, x);
}

// call_once.
std::once_flag once_flag;
int_slot::target once_target;
STA_FORCE_INLINE int call_through_call_once(int x) {
    std::call_once(once_flag, [] { once_target = resolve_target(); });
    return once_target.fn(once_target.context, x);
}

// null_checked.
int_slot::target checked_target;
STA_NOINLINE void resolve_checked() {
    checked_target = resolve_target();
}
STA_FORCE_INLINE int call_through_null_check(int x) {
    if (checked_target.fn == nullptr) [[unlikely]]
        resolve_checked();
    return checked_target.fn(checked_target.context, x);
}

// virtual: the COM-style factory interface behind a cached pointer.
struct activation_factory {
    virtual int activate(int x) = 0;

  protected:
    ~activation_factory() = default;
};
struct add_step_factory final : activation_factory {
    int activate(int x) override { return add_step(&the_factory, x); }
};
add_step_factory concrete_factory;
activation_factory* cached_factory = nullptr;
STA_NOINLINE void resolve_factory() {
    benchmark::ClobberMemory();
    cached_factory = &concrete_factory;
}
STA_FORCE_INLINE int call_through_virtual(int x) {
    if (cached_factory == nullptr) [[unlikely]]
        resolve_factory();
    return cached_factory->activate(x);
}

// ---------------------------------------------------------------------------------
// The call variants, shared by the benchmarks and the callgrind phases.
// ---------------------------------------------------------------------------------

struct via_direct {
    static constexpr const char* name = "direct";
    STA_FORCE_INLINE static int call(int x) { return direct_target.fn(direct_target.context, x); }
};
struct via_lazy_slot {
    static constexpr const char* name = "lazy_slot";
    STA_FORCE_INLINE static int call(int x) { return lazy(x); }
};
struct via_local_static {
    static constexpr const char* name = "local_static";
    STA_FORCE_INLINE static int call(int x) { return call_through_local_static(x); }
};
struct via_call_once {
    static constexpr const char* name = "call_once";
    STA_FORCE_INLINE static int call(int x) { return call_through_call_once(x); }
};
struct via_null_checked {
    static constexpr const char* name = "null_checked";
    STA_FORCE_INLINE static int call(int x) { return call_through_null_check(x); }
};
struct via_virtual {
    static constexpr const char* name = "virtual";
    STA_FORCE_INLINE static int call(int x) { return call_through_virtual(x); }
};
/// The loop alone (callgrind baseline): no call at all.
struct via_nothing {
    static constexpr const char* name = "nothing";
    STA_FORCE_INLINE static int call(int x) { return x + 1; }
};

template <class Via>
void slot_call(benchmark::State& state) {
    int x = Via::call(0); // resolves on the first call, outside the timed loop
    for (auto _ : state) {
        x = Via::call(x);
        benchmark::DoNotOptimize(x);
    }
    if (x == 0)
        state.SkipWithError("the target did not run");
}

// ---------------------------------------------------------------------------------
// Shared owners: copy + destroy.
// ---------------------------------------------------------------------------------

struct payload {
    int value = 7;
};

bool process_is_single_threaded() {
    return __libc_single_threaded != 0;
}

/// Start (and join) one thread, once: from then on the process is multi-threaded
/// for good, as any program that has ever started a thread.
void make_process_multi_threaded() {
    static const bool started = [] {
        std::thread([] {}).join();
        return true;
    }();
    (void)started;
}

template <class Ptr>
long owners_of(const Ptr& p) {
    return p.use_count();
}
template <class T>
long owners_of(const boost::local_shared_ptr<T>& p) {
    return p.local_use_count();
}

template <class Ptr>
void copy_and_destroy(benchmark::State& state, const Ptr& p) {
    for (auto _ : state) {
        Ptr copy = p;
        benchmark::DoNotOptimize(copy);
    }
    if (owners_of(p) != 1)
        state.SkipWithError("a copy outlived its iteration");
}

void owner_shared_ptr_single_threaded(benchmark::State& state) {
    if (!process_is_single_threaded()) {
        state.SkipWithError("a thread was started already: run this row first");
        return;
    }
    copy_and_destroy(state, std::make_shared<payload>());
}
void owner_shared_ptr(benchmark::State& state) {
    make_process_multi_threaded();
    if (process_is_single_threaded()) {
        state.SkipWithError("the process is still single-threaded: no atomics to measure");
        return;
    }
    copy_and_destroy(state, std::make_shared<payload>());
}
void owner_boost_local_shared_ptr(benchmark::State& state) {
    copy_and_destroy(state, boost::make_local_shared<payload>());
}
void owner_local_ptr(benchmark::State& state) {
    copy_and_destroy(state, sta::make_local<payload>());
}

// ---------------------------------------------------------------------------------
// Callgrind phases: each variant, `small` then `large` calls, collection on only
// inside the loop; each phase ends with a dump named "<variant>/<calls>".
// ---------------------------------------------------------------------------------

template <class Via>
STA_NOINLINE int callgrind_phase(int calls) {
    int x = Via::call(0);
    CALLGRIND_ZERO_STATS;
    CALLGRIND_TOGGLE_COLLECT; // on (the run starts with --collect-atstart=no)
    for (int i = 0; i < calls; ++i) {
        x = Via::call(x);
        benchmark::DoNotOptimize(x);
    }
    CALLGRIND_TOGGLE_COLLECT; // off
    char name[64];
    std::snprintf(name, sizeof name, "%s/%d", Via::name, calls);
    CALLGRIND_DUMP_STATS_AT(name);
    return x;
}

template <class... Via>
int run_callgrind_phases() {
    int sink = 0;
    for (int calls : {1000, 11000})
        ((sink += callgrind_phase<Via>(calls)), ...);
    return sink;
}

} // namespace

// Registration order is run order: the single-threaded shared_ptr row must run before
// the row that starts a thread.
BENCHMARK(owner_shared_ptr_single_threaded)->Name("owner/shared_ptr_single_threaded");
BENCHMARK(owner_local_ptr)->Name("owner/local_ptr");
BENCHMARK(owner_boost_local_shared_ptr)->Name("owner/boost_local_shared_ptr");
BENCHMARK(owner_shared_ptr)->Name("owner/shared_ptr");
BENCHMARK(slot_call<via_direct>)->Name("slot/direct");
BENCHMARK(slot_call<via_lazy_slot>)->Name("slot/lazy_slot");
BENCHMARK(slot_call<via_local_static>)->Name("slot/local_static");
BENCHMARK(slot_call<via_call_once>)->Name("slot/call_once");
BENCHMARK(slot_call<via_null_checked>)->Name("slot/null_checked");
BENCHMARK(slot_call<via_virtual>)->Name("slot/virtual");

int main(int argc, char** argv) {
    direct_target = resolve_target();
    if (argc == 2 && std::strcmp(argv[1], "--callgrind-phases") == 0) {
        const int sink =
            run_callgrind_phases<via_nothing, via_direct, via_lazy_slot, via_local_static,
                                 via_call_once, via_null_checked, via_virtual>();
        return sink == 0 ? 1 : 0;
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
