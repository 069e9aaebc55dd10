// sta::lazy_slot: resolution runs exactly once, the slot rewrites itself to the
// target, failures throw sta::unresolved_slot and leave the slot retrying, slots work
// as constinit globals (even from another global's constructor) and as members of
// objects, copies keep their own context, and checked builds enforce the thread rule.
#include "sta/lazy_slot.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

using int_slot = sta::lazy_slot<int(int)>;

/// A resolver's world: how often it ran, what it hands out, whether it fails.
struct fake_registry {
    int resolutions = 0;
    int fail_first = 0; // this many resolutions return "not found" first
    int offset = 100;   // the target adds this
};

int add_offset(void* context, int x) {
    return x + static_cast<fake_registry*>(context)->offset;
}

int_slot::target resolve_from_registry(const char*, void* data) {
    auto* r = static_cast<fake_registry*>(data);
    ++r->resolutions;
    if (r->fail_first > 0) {
        --r->fail_first;
        return {};
    }
    return {r, &add_offset};
}

// ---- a constinit global, called from a global constructor of this translation unit
// that is defined BEFORE the slot: it works only because the slot is constant-initialised.
fake_registry global_registry;
extern int_slot global_slot;
const int value_from_global_constructor = global_slot(1);
constinit int_slot global_slot{&resolve_from_registry, "global", &global_registry};

// Guards constant initialisation: a slot must be usable before dynamic initialisation.
TEST(LazySlot, ConstinitGlobalWorksFromAnEarlierGlobalConstructor) {
    EXPECT_EQ(value_from_global_constructor, 101);
    EXPECT_EQ(global_slot(2), 102);
    EXPECT_EQ(global_registry.resolutions, 1);
}

// Guards "exactly once": the resolver must not run again after the rewrite.
TEST(LazySlot, ResolverRunsExactlyOnce) {
    fake_registry r;
    int_slot slot{&resolve_from_registry, "once", &r};
    EXPECT_EQ(r.resolutions, 0); // construction resolves nothing
    for (int i = 0; i < 10; ++i)
        EXPECT_EQ(slot(i), i + 100);
    EXPECT_EQ(r.resolutions, 1);
}

// Guards the rewrite itself: after the first call the slot's two words are the target.
TEST(LazySlot, FirstCallRewritesTheSlotToTheTarget) {
    fake_registry r;
    int_slot slot{&resolve_from_registry, "rewrite", &r};
    EXPECT_FALSE(slot.resolved());
    EXPECT_EQ(slot.current().context, static_cast<void*>(&slot)); // LS1
    (void)slot(0);
    EXPECT_TRUE(slot.resolved());
    EXPECT_EQ(slot.current().context, static_cast<void*>(&r));
    EXPECT_EQ(slot.current().fn, &add_offset);
}

// Guards the error: a failed resolution throws unresolved_slot naming the slot.
TEST(LazySlot, FailureThrowsUnresolvedSlotWithTheName) {
    fake_registry r;
    r.fail_first = 1;
    int_slot slot{&resolve_from_registry, "Windows.UI.Button", &r};
    try {
        (void)slot(1);
        FAIL() << "no exception";
    } catch (const sta::unresolved_slot& e) {
        EXPECT_STREQ(e.name(), "Windows.UI.Button");
        EXPECT_NE(std::string(e.what()).find("\"Windows.UI.Button\""), std::string::npos);
    }
    EXPECT_FALSE(slot.resolved());
}

// Guards the documented policy: a failure is not cached, the next call retries.
TEST(LazySlot, FailedSlotRetriesOnTheNextCall) {
    fake_registry r;
    r.fail_first = 2;
    int_slot slot{&resolve_from_registry, "retry", &r};
    EXPECT_THROW((void)slot(1), sta::unresolved_slot);
    EXPECT_THROW((void)slot(1), sta::unresolved_slot);
    EXPECT_EQ(slot(1), 101);
    EXPECT_EQ(slot(1), 101);
    EXPECT_EQ(r.resolutions, 3);
}

// Guards exception transparency: the resolver's own exception passes unchanged and
// leaves the slot unresolved (not stuck in the "resolving" state).
TEST(LazySlot, ResolverExceptionPassesThroughAndSlotStaysUnresolved) {
    int calls = 0;
    sta::lazy_slot<int()> slot{[](const char*, void* data) -> sta::lazy_slot<int()>::target {
                                   if (++*static_cast<int*>(data) == 1)
                                       throw std::runtime_error("library not loaded");
                                   return {data, [](void* c) { return *static_cast<int*>(c); }};
                               },
                               "throws", &calls};
    EXPECT_THROW((void)slot(), std::runtime_error);
    EXPECT_FALSE(slot.resolved());
    EXPECT_EQ(slot(), 2); // retried, and the context is the counter after 2 resolutions
}

// Guards re-entrance: a resolver that calls its own slot gets an error, not a stack overflow.
TEST(LazySlot, ResolverCallingItsOwnSlotIsAnError) {
    struct self_calling {
        static sta::lazy_slot<int()>::target resolve(const char*, void* data) {
            auto& slot = *static_cast<sta::lazy_slot<int()>*>(data);
            (void)slot(); // throws unresolved_slot
            return {};
        }
    };
    struct holder { // the slot is the first member: the resolver data is the slot
        sta::lazy_slot<int()> slot{&self_calling::resolve, "reentrant", this};
    } h;
    try {
        (void)h.slot();
        FAIL() << "no exception";
    } catch (const sta::unresolved_slot& e) {
        EXPECT_NE(std::string(e.what()).find("called its own slot"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(h.slot.resolved()); // and not stuck in the "resolving" state
    EXPECT_THROW((void)h.slot(), sta::unresolved_slot);
}

// Guards LS1: a resolver may not hand back the slot itself as the context (the slot
// would read as unresolved forever); it gets a clear error instead.
TEST(LazySlot, ResolverReturningTheSlotAsContextIsAnError) {
    struct holder { // the slot is the first member: `this` of the holder is the slot
        int_slot slot{[](const char*, void* data) -> int_slot::target {
                          return {data, &add_offset};
                      },
                      "points-at-itself", this};
    } h;
    ASSERT_EQ(static_cast<void*>(&h), static_cast<void*>(&h.slot));
    EXPECT_THROW((void)h.slot(1), sta::unresolved_slot);
    EXPECT_FALSE(h.slot.resolved());
}

// Guards explicit resolution: resolve() resolves without calling, and only once.
TEST(LazySlot, ResolveResolvesWithoutCalling) {
    fake_registry r;
    int_slot slot{&resolve_from_registry, "eager", &r};
    slot.resolve();
    slot.resolve();
    EXPECT_TRUE(slot.resolved());
    EXPECT_EQ(r.resolutions, 1);
}

// Guards reset: the slot forgets its target and resolves again (a plugin reloaded).
TEST(LazySlot, ResetMakesTheNextCallResolveAgain) {
    fake_registry r;
    int_slot slot{&resolve_from_registry, "reset", &r};
    EXPECT_EQ(slot(1), 101);
    slot.reset();
    EXPECT_FALSE(slot.resolved());
    r.offset = 200;
    EXPECT_EQ(slot(1), 201);
    EXPECT_EQ(r.resolutions, 2);
}

// ---- slots as members: the seed's pImpl with one lazily cached interface per slot.
struct widget {
    int interface_queries = 0;
    int base = 0;
    explicit widget(int b) : base(b) {}

    static int text_length(void* self, int extra) {
        return static_cast<widget*>(self)->base + extra;
    }
    static int child_count(void* self, int) { return static_cast<widget*>(self)->base * 2; }
    static int_slot::target query(const char* name, void* self) {
        auto* w = static_cast<widget*>(self);
        ++w->interface_queries;
        return {w, std::string(name) == "text" ? &text_length : &child_count};
    }

    int_slot text{&query, "text", this};
    int_slot children{&query, "children", this};
};

// Guards per-object slots: each object resolves its own slots, once each, lazily.
TEST(LazySlot, SlotsInsideObjectsResolvePerObjectAndPerSlot) {
    widget a{1};
    widget b{10};
    EXPECT_EQ(a.text(5), 6);
    EXPECT_EQ(a.text(6), 7);
    EXPECT_EQ(a.interface_queries, 1); // "children" never asked for: never queried
    EXPECT_EQ(b.children(0), 20);
    EXPECT_EQ(b.text(0), 10);
    EXPECT_EQ(b.interface_queries, 2);
    EXPECT_EQ(a.interface_queries, 1);
}

// Guards the copy rule: a copy of an unresolved slot resolves for itself and must not
// write into (or call with the context of) the original.
TEST(LazySlot, CopyOfAnUnresolvedSlotResolvesOnItsOwn) {
    fake_registry r;
    int_slot original{&resolve_from_registry, "copy", &r};
    int_slot copy = original;
    EXPECT_EQ(copy.current().context, static_cast<void*>(&copy));
    EXPECT_EQ(copy(1), 101);
    EXPECT_TRUE(copy.resolved());
    EXPECT_FALSE(original.resolved());
    EXPECT_EQ(original(1), 101);
    EXPECT_EQ(r.resolutions, 2);
}

// Guards the copy rule: a copy of a resolved slot calls the target without resolving.
TEST(LazySlot, CopyOfAResolvedSlotSharesTheTarget) {
    fake_registry r;
    int_slot original{&resolve_from_registry, "copy", &r};
    (void)original(0);
    int_slot copy{nullptr, "other"};
    copy = original;
    EXPECT_TRUE(copy.resolved());
    EXPECT_EQ(copy(3), 103);
    EXPECT_EQ(r.resolutions, 1);
    int_slot& alias = copy;
    copy = alias; // self-assignment keeps the target
    EXPECT_EQ(copy(3), 103);
}

// Guards argument forwarding: references stay references and move-only values move,
// both through the stub (first call) and straight to the target (later calls).
TEST(LazySlot, ForwardsReferencesAndMoveOnlyArguments) {
    using slot_type = sta::lazy_slot<int(int&, std::unique_ptr<int>)>;
    slot_type slot{[](const char*, void*) -> slot_type::target {
                       return {nullptr, [](void*, int& out, std::unique_ptr<int> p) {
                                   out = *p;
                                   return *p * 2;
                               }};
                   },
                   "forward"};
    int out = 0;
    EXPECT_EQ(slot(out, std::make_unique<int>(21)), 42);
    EXPECT_EQ(out, 21);
    EXPECT_EQ(slot(out, std::make_unique<int>(4)), 8);
    EXPECT_EQ(out, 4);
}

// Guards void results: the stub must return nothing and still run the target.
TEST(LazySlot, VoidSignatureRunsTheTarget) {
    int hits = 0;
    sta::lazy_slot<void(int)> slot{
        [](const char*, void* d) -> sta::lazy_slot<void(int)>::target {
            return {d, [](void* c, int n) { *static_cast<int*>(c) += n; }};
        },
        "void", &hits};
    slot(2);
    slot(3);
    EXPECT_EQ(hits, 5);
}

#if STA_POOL_CHECKS
void call_owned_slot_from_two_threads() {
    fake_registry r;
    int_slot slot(&resolve_from_registry, "owned", &r);
    (void)slot(1);
    std::thread([&] { (void)slot(1); }).join();
}
#endif

// Guards the thread rule in checked builds: a second thread is stopped with both ids.
TEST(LazySlotDeathTest, CallFromASecondThreadAbortsInCheckedBuilds) {
#if !STA_POOL_CHECKS
    GTEST_SKIP() << "STA_POOL_CHECKS is off: the owner check compiles away";
#else
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(call_owned_slot_from_two_threads(),
                 "sta::lazy_slot \"owned\": called from thread .*, but it belongs to thread ");
#endif
}

} // namespace
