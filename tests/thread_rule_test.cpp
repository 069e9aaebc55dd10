// The seed's thread rule (threads::one_owner): a pool belongs to the first thread that
// calls it. Checked builds (STA_POOL_CHECKS) abort on a call from any other thread with
// a message that names both threads; release builds compile the check away, so these
// tests skip there. Per-thread pools have no such rule: threads_test.cpp.
#include "support/pool_test_support.hpp"

#include <thread>

namespace {
using namespace sta_test;

template <class Dispatch>
class ThreadRule : public ::testing::Test {
  protected:
    void SetUp() override {
#if !STA_POOL_CHECKS
        GTEST_SKIP() << "STA_POOL_CHECKS is off in this build: the owner check compiles away";
#endif
        GTEST_FLAG_SET(death_test_style, "threadsafe");
    }
};
TYPED_TEST_SUITE(ThreadRule, one_owner_variants, variant_names);

constexpr const char* names_both_threads = "called from thread .*, but the pool belongs to thread ";

// Guards the owner check on alloc: a second thread must be stopped, not corrupt lists.
TYPED_TEST(ThreadRule, AllocFromASecondThreadAbortsNamingBothThreads) {
    struct tag {};
    using pool = fresh_pool<TypeParam, tag>;
    EXPECT_DEATH(
        {
            void* mine = pool::alloc(32);
            std::thread([] { (void)pool::alloc(32); }).join();
            pool::free(mine, 32);
        },
        names_both_threads);
}

// Guards free and realloc too: every entry point checks, not just alloc.
TYPED_TEST(ThreadRule, FreeFromASecondThreadAborts) {
    struct tag {};
    using pool = fresh_pool<TypeParam, tag>;
    EXPECT_DEATH(
        {
            void* mine = pool::alloc(64);
            std::thread([mine] { pool::free(mine, 64); }).join();
        },
        names_both_threads);
}

// Guards "the first caller owns it": a pool first used by a worker belongs to the worker.
TYPED_TEST(ThreadRule, TheFirstCallerOwnsThePool) {
    struct tag {};
    using pool = fresh_pool<TypeParam, tag>;
    EXPECT_DEATH(
        {
            std::thread([] { (void)pool::alloc(16); }).join();
            (void)pool::stats();
        },
        names_both_threads);
}

// The same thread may call as often as it likes: no false alarm.
TYPED_TEST(ThreadRule, TheOwnerIsNeverStopped) {
    struct tag {};
    using pool = fresh_pool<TypeParam, tag>;
    void* p = pool::alloc(16);
    p = pool::realloc(p, 16, 200);
    pool::free(p, 200);
#if STA_POOL_CHECKS // the owner mark is empty in a release build (and the test skipped)
    EXPECT_EQ(pool::detail_state().owner.number, sta::detail::thread_number());
#endif
}

} // namespace
