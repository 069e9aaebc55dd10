// Per-thread pools (threads::per_thread, home/per_thread.hpp): every thread allocates from a
// pool of its own; a block freed by another thread goes to its owner's inbox and back
// to the owner's lists when the owner drains (refill); a pool whose thread ended is
// parked and adopted by the next thread that needs one. The seed's thread rule
// (threads::one_owner) is tested in thread_rule_test.cpp.
//
// Every test is deterministic: threads hand blocks over through joins, latches and
// locked queues, never through sleeps or timing. Checks that read a pool's state run on
// the thread that owns that pool (detail_state() is the calling thread's pool), after
// it has taken back what other threads sent it; they end with the accounting checker.
#define STA_POOL_C_IMPLEMENTATION
#include "sta/pool.h"

#include "support/block_pattern.hpp"
#include "support/pool_test_support.hpp"

#include "sta/containers.hpp"
#include "sta/detail/c_api/span_heap.hpp"
#include "sta/detail/os/windows.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#if defined(__MINGW32__) && !defined(__clang__)
#include <cxxabi.h>
extern "C" void* __dso_handle;
namespace {
/// mingw-w64 g++ (GCC bug 80816): libstdc++ runs thread_local destructors from one
/// winpthreads key and emulated TLS frees a thread's thread_local storage from another,
/// and winpthreads runs keys in the order they were made. When the emulated-TLS key is
/// the older (any thread_local touched before the first destructor is registered makes
/// it so), a destructor can read freed memory (seen under wine). Registering a
/// thread-exit destructor before any thread_local is touched makes libstdc++'s key the
/// older, so AThreadLocalContainerFreesAtExit tests the pool's order, not the
/// toolchain's.
int thread_exit_destructors_first_anchor = 0;
const int thread_exit_destructors_first =
    (__cxxabiv1::__cxa_thread_atexit([](void*) {}, &thread_exit_destructors_first_anchor,
                                     &__dso_handle),
     0);
} // namespace
#endif

namespace {

/// std::latch's count_down / wait / arrive_and_wait over a mutex and a condition
/// variable: libstdc++'s std::latch and std::barrier (atomic waits) lose wake-ups under
/// mingw-w64 + wine, which left a thread waiting forever in the Windows build.
class count_latch {
  public:
    explicit count_latch(int count) : count_(count) {}
    void count_down() {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            --count_;
        }
        zero_.notify_all();
    }
    void wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        zero_.wait(lock, [this] { return count_ <= 0; });
    }
    void arrive_and_wait() {
        count_down();
        wait();
    }

  private:
    std::mutex mutex_;
    std::condition_variable zero_;
    int count_;
};
using namespace sta_test;
using sta::detail::check_accounting;
using sta::detail::held_block;
using sta::detail::max_class_bytes;
using sta::detail::span_of;

template <class Variant>
class PerThread : public ::testing::Test {};
TYPED_TEST_SUITE(PerThread, per_thread_variants, variant_names);

// ---- helpers --------------------------------------------------------------------------

/// A block in flight between threads.
struct sent_block {
    void* p;
    std::size_t bytes;
    std::size_t index;
};

/// Take back every block other threads sent to the calling thread's pool: refill
/// drains the inbox, and the 32 KiB class refills every few blocks (a span holds two).
/// True when the inbox is empty afterwards.
template <class Pool>
bool take_back_sent_blocks() {
    auto& inbox = Pool::detail_state().inbox.head;
    std::vector<void*> taken;
    for (int i = 0; i < 64 && inbox.load(sta::detail::memory_order_acquire) != nullptr; ++i)
        taken.push_back(Pool::alloc(max_class_bytes));
    for (void* p : taken)
        Pool::free(p, max_class_bytes);
    return inbox.load(sta::detail::memory_order_acquire) == nullptr;
}

/// What the calling thread's pool says after taking back what was sent to it.
struct pool_report {
    bool inbox_drained = false;
    std::string checker = "not run";
    std::size_t bytes_in_use = ~std::size_t{0};
};
template <class Pool>
pool_report report_after_taking_back() {
    pool_report r;
    r.inbox_drained = take_back_sent_blocks<Pool>();
    r.checker = check_accounting<Pool>(std::vector<held_block>{});
    r.bytes_in_use = Pool::stats().bytes_in_use;
    return r;
}
/// Every block is back with its owner and no span is damaged.
void expect_all_back(const pool_report& r) {
    EXPECT_TRUE(r.inbox_drained);
    EXPECT_EQ(r.checker, "");
    EXPECT_EQ(r.bytes_in_use, 0u);
}
/// The report of a pool adopted by a new thread (the most recently parked one).
template <class Pool>
pool_report report_on_a_new_thread() {
    pool_report r;
    std::thread([&r] { r = report_after_taking_back<Pool>(); }).join();
    return r;
}

/// The owner of a heap-tier block (NT1 in pool/next_tiers.hpp: the 16 bytes before it).
sta::detail::pool_state* heap_owner_of(const void* p) {
    sta::detail::pool_state* owner;
    std::memcpy(&owner, static_cast<const std::byte*>(p) - 16, sizeof owner);
    return owner;
}
template <class Pool>
sta::detail::pool_state* own_state() {
    return &Pool::detail_state();
}

/// Every pooled class of the set, at its size and one byte above the class below (its
/// smallest request): 8 B .. 32 KiB.
template <class Classes>
std::vector<std::size_t> pooled_sizes() {
    std::vector<std::size_t> out;
    std::size_t below = 0;
    for (std::uint32_t ordinal = 0; ordinal < Classes::count; ++ordinal) {
        const std::size_t c = Classes::bytes_of_slot(Classes::slot_of_ordinal(ordinal));
        out.push_back(c);
        if (below + 1 != c)
            out.push_back(below + 1);
        below = c;
    }
    return out;
}

/// Blocks handed from a producer to consumers in batches, under a lock.
class block_queue {
  public:
    void put(std::vector<sent_block> batch) {
        {
            const std::lock_guard<std::mutex> hold(lock_);
            batches_.push_back(std::move(batch));
        }
        ready_.notify_one();
    }
    void close() {
        {
            const std::lock_guard<std::mutex> hold(lock_);
            closed_ = true;
        }
        ready_.notify_all();
    }
    /// The next batch; false once the queue is closed and empty.
    bool take(std::vector<sent_block>& out) {
        std::unique_lock<std::mutex> hold(lock_);
        ready_.wait(hold, [this] { return closed_ || !batches_.empty(); });
        if (batches_.empty())
            return false;
        out = std::move(batches_.front());
        batches_.pop_front();
        return true;
    }

  private:
    std::mutex lock_;
    std::condition_variable ready_;
    std::deque<std::vector<sent_block>> batches_;
    bool closed_ = false;
};

// ---- the tests ------------------------------------------------------------------------

// Guards remote frees under load: blocks of every class and of both tiers above, made
// on one thread and checked and freed on two others while it keeps allocating, all come
// back to the producer's pool intact, and each consumer (which only frees) takes a state
// that holds nothing for its frees (for_frees), parked when it ends.
TYPED_TEST(PerThread, ProducerConsumer) {
    FRESH_POOL;
    block_queue queue;
    std::atomic<std::size_t> checked{0}, damaged{0};
    auto consume = [&] {
        std::vector<sent_block> batch;
        while (queue.take(batch))
            for (const sent_block& b : batch) {
                if (!pattern_intact(b.p, b.bytes, b.index))
                    damaged.fetch_add(1, std::memory_order_relaxed);
                checked.fetch_add(1, std::memory_order_relaxed);
                pool::free(b.p, b.bytes);
            }
    };
    std::thread consumers[] = {std::thread(consume), std::thread(consume)};

    // The main thread produces: it owns nothing in this family before.
    std::vector<std::size_t> sizes = pooled_sizes<typename pool::classes>();
    sizes.insert(sizes.end(), {40000, 300000, 600000}); // private heap, private heap, malloc
    std::size_t made = 0;
    std::vector<sent_block> batch;
    for (int round = 0; round < 8; ++round)
        for (std::size_t bytes : sizes) {
            const std::size_t count = std::max<std::size_t>(1, 16384 / bytes);
            for (std::size_t i = 0; i < count; ++i) {
                void* p = pool::alloc(bytes);
                if (p == nullptr) { // no ASSERT here: the consumers must still be joined
                    ADD_FAILURE() << "alloc(" << bytes << ") gave nullptr";
                    continue;
                }
                fill_pattern(p, bytes, made);
                batch.push_back({p, bytes, made++});
                if (batch.size() == 128)
                    queue.put(std::exchange(batch, {}));
            }
        }
    queue.put(std::move(batch));
    queue.close();
    for (std::thread& t : consumers)
        t.join();

    EXPECT_EQ(checked.load(), made);
    EXPECT_EQ(damaged.load(), 0u);
    expect_all_back(report_after_taking_back<pool>());
    const auto family = pool::thread_pools();
    EXPECT_LE(family.pools_made, 3u); // the producer's, and a consumer's for its frees
    EXPECT_EQ(family.pools_parked, family.pools_made - 1); // the consumers' ended
}

// Guards the way home: a block another thread freed waits in its owner's inbox (still
// in use to the owner) and, when the owner refills, goes back to its span's bitmap (free
// there; the release checks of a later free test that bit).
TYPED_TEST(PerThread, ABlockFreedElsewhereGoesBackToItsOwner) {
    FRESH_POOL;
    constexpr std::size_t bytes = 4096;
    std::vector<void*> span_blocks{pool::alloc(bytes)}; // the whole current span
    while (span_blocks.size() < span_of(span_blocks.front())->capacity)
        span_blocks.push_back(pool::alloc(bytes));
    void* const x = span_blocks[2];
    const std::size_t in_use = pool::stats().bytes_in_use;

    std::thread([x] { pool::free(x, bytes); }).join();
    EXPECT_EQ(pool::detail_state().inbox.head.load(), x);
    EXPECT_EQ(pool::stats().bytes_in_use, in_use); // not back until the owner drains

    void* const again = pool::alloc(bytes); // the span is spent: refill drains first
    EXPECT_EQ(pool::detail_state().inbox.head.load(), nullptr);
    EXPECT_EQ(pool::engine::core::free_list_class_of(x), bytes); // its bit is set
    EXPECT_EQ(pool::stats().bytes_in_use, in_use);               // x back, `again` out
    pool::free(again, bytes);
    for (void* p : span_blocks)
        if (p != x)
            pool::free(p, bytes);
    expect_all_back(report_after_taking_back<pool>());
}

/// Blocks on a chain linked through their first words (an inbox's, an outbox way's).
std::size_t chain_length(void* head) {
    std::size_t n = 0;
    for (void* b = head; b != nullptr && n < 100000; b = sta::detail::hooks::load_link(b))
        ++n;
    return n;
}

// Guards the batch (S13): a thread with a pool of its own holds the blocks it frees for
// another pool in its outbox and sends them home together: nothing reaches the owner's
// inbox until the way holds a batch, then the whole batch at once; the rest goes home
// at the thread's end.
TYPED_TEST(PerThread, BlocksFreedElsewhereGoHomeABatchAtATime) {
    FRESH_POOL;
    constexpr std::size_t bytes = 64;
    constexpr std::size_t batch = sta::detail::remote_outbox::batch_blocks;
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < batch + 3; ++i)
        blocks.push_back(pool::alloc(bytes));
    auto& inbox = pool::detail_state().inbox.head;
    count_latch short_of_a_batch(1), looked(1), all_freed(1), looked_again(1);
    std::size_t held_short = 0, held_after = 0;
    std::string checker_short = "not run";
    std::thread freer([&] {
        pool::free(pool::alloc(bytes), bytes); // a pool of its own
        for (std::size_t i = 0; i + 1 < batch; ++i)
            pool::free(blocks[i], bytes);
        held_short = pool::detail_state().outbox.held;
        checker_short = check_accounting<pool>(std::vector<held_block>{});
        short_of_a_batch.count_down();
        looked.wait();
        for (std::size_t i = batch - 1; i < blocks.size(); ++i)
            pool::free(blocks[i], bytes);
        held_after = pool::detail_state().outbox.held;
        all_freed.count_down();
        looked_again.wait();
    });
    short_of_a_batch.wait();
    EXPECT_EQ(inbox.load(), nullptr);
    EXPECT_EQ(held_short, batch - 1);
    EXPECT_EQ(checker_short, ""); // S13 over a way one short of a batch
    looked.count_down();
    all_freed.wait();
    EXPECT_EQ(chain_length(inbox.load()), batch);
    EXPECT_EQ(held_after, 3u);
    looked_again.count_down();
    freer.join();
    EXPECT_EQ(chain_length(inbox.load()), batch + 3); // the rest, sent at the freer's end
    expect_all_back(report_after_taking_back<pool>());
}

// Guards the ways (S13): one thread frees blocks of more owners than its outbox has
// ways, in turn; a block whose way holds another owner's sends that way home first, so
// some blocks are home before any way fills, the outbox holds one chain a way, and
// after trim sends the rest every owner takes back all of its blocks.
TYPED_TEST(PerThread, MoreOwnersThanWaysAllGetTheirBlocksBack) {
    FRESH_POOL;
    constexpr std::size_t owners = sta::detail::remote_outbox::ways + 1;
    constexpr std::size_t per_owner = 3;
    constexpr std::size_t bytes = 128;
    std::vector<std::vector<void*>> blocks(owners);
    std::vector<sta::detail::atomic<void*>*> inboxes(owners);
    std::vector<pool_report> reports(owners);
    count_latch allocated(static_cast<int>(owners)), freed(1);
    std::vector<std::thread> threads;
    for (std::size_t o = 0; o < owners; ++o)
        threads.emplace_back([&, o] {
            for (std::size_t i = 0; i < per_owner; ++i)
                blocks[o].push_back(pool::alloc(bytes));
            inboxes[o] = &pool::detail_state().inbox.head;
            allocated.count_down();
            freed.wait();
            reports[o] = report_after_taking_back<pool>();
        });
    allocated.wait();
    std::size_t held = 0, held_after_trim = 1, home_before_trim = 0;
    std::string checker = "not run";
    std::thread([&] {
        pool::free(pool::alloc(bytes), bytes); // a pool of its own
        for (std::size_t i = 0; i < per_owner; ++i)
            for (std::size_t o = 0; o < owners; ++o)
                pool::free(blocks[o][i], bytes);
        held = pool::detail_state().outbox.held;
        checker = check_accounting<pool>(std::vector<held_block>{});
        for (sta::detail::atomic<void*>* inbox : inboxes)
            home_before_trim += chain_length(inbox->load());
        (void)pool::trim();
        held_after_trim = pool::detail_state().outbox.held;
    }).join();
    EXPECT_EQ(checker, "");
    EXPECT_GT(home_before_trim, 0u); // two owners share a way
    EXPECT_EQ(held + home_before_trim, owners * per_owner);
    EXPECT_EQ(held_after_trim, 0u);
    freed.count_down();
    for (std::thread& t : threads)
        t.join();
    for (const pool_report& r : reports)
        expect_all_back(r);
}

// Guards thread exit with blocks still live: the pool is parked, its blocks are freed
// by other threads (one of them while the owner is ending, through a state it takes for
// its frees), and the next thread adopts that pool (no new one) with every block back and
// every span intact.
TYPED_TEST(PerThread, ThreadExitWithLiveBlocks) {
    FRESH_POOL;
    std::vector<std::size_t> sizes = pooled_sizes<typename pool::classes>();
    sizes.insert(sizes.end(), {40000, 300000});
    std::vector<sent_block> for_worker, for_main;
    count_latch handed_over(1);
    std::size_t damaged = 0;
    std::thread owner([&] {
        std::size_t index = 0;
        for (int round = 0; round < 4; ++round)
            for (std::size_t bytes : sizes) {
                void* p = pool::alloc(bytes);
                fill_pattern(p, bytes, index);
                (index % 2 == 0 ? for_worker : for_main).push_back({p, bytes, index});
                ++index;
            }
        handed_over.count_down(); // and ends: the worker frees while this thread exits
    });
    std::thread worker([&] {
        handed_over.wait();
        for (const sent_block& b : for_worker) {
            damaged += pattern_intact(b.p, b.bytes, b.index) ? 0 : 1;
            pool::free(b.p, b.bytes);
        }
    });
    owner.join();
    worker.join();
    EXPECT_EQ(pool::thread_pools().pools_parked, 2u); // the owner's, and the worker's
    for (const sent_block& b : for_main) {            // the main thread has no pool in this family
        damaged += pattern_intact(b.p, b.bytes, b.index) ? 0 : 1;
        pool::free(b.p, b.bytes);
    }
    EXPECT_EQ(damaged, 0u);

    expect_all_back(report_on_a_new_thread<pool>());
    const auto family = pool::thread_pools();
    EXPECT_EQ(family.pools_made, 2u);   // the owner's, and the worker's for its frees, which
    EXPECT_EQ(family.pools_parked, 1u); // the main thread took next; the new thread adopted
                                        // the owner's
}

// Guards parking and adoption: blocks other threads freed into a pool while its owner
// lived, and that the owner never drained, are back on the pool's lists by the time a
// new thread has adopted it: nothing in flight, every byte free, before it allocates.
TYPED_TEST(PerThread, BlocksSentHomeBeforeExitAreBackOnAdoption) {
    FRESH_POOL;
    std::vector<sent_block> blocks;
    count_latch allocated(1), freed(1);
    std::thread owner([&] {
        for (std::size_t i = 0; i < 64; ++i)
            blocks.push_back({pool::alloc(64), 64, i});
        blocks.push_back({pool::alloc(40000), 40000, 64});
        allocated.count_down();
        freed.wait(); // ends without allocating again: no refill drains its inbox
    });
    allocated.wait();
    for (const sent_block& b : blocks)
        pool::free(b.p, b.bytes); // the main thread has no pool here: all go home
    freed.count_down();
    owner.join();

    pool_report r;
    std::thread([&r] {
        r.inbox_drained = pool::detail_state().inbox.head.load() == nullptr; // adopts
        r.checker = check_accounting<pool>(std::vector<held_block>{});
        r.bytes_in_use = pool::stats().bytes_in_use;
    }).join();
    expect_all_back(r);
    EXPECT_EQ(pool::thread_pools().pools_made, 2u); // and the main thread's, for its frees
}

// Guards adoption by a thread's first allocation (refill adopts): the class serves the
// list and bump range the parked pool had, and no block of its current span is lost.
TYPED_TEST(PerThread, AnAdoptedPoolKeepsItsClassLists) {
    FRESH_POOL;
    void* kept = nullptr;
    void* spare = nullptr;
    std::thread([&] {
        kept = pool::alloc(32);
        spare = pool::alloc(32);
        pool::free(spare, 32); // on the class's list when the thread ends
    }).join();
    void* got = nullptr;
    pool_report r;
    std::thread([&] {
        got = pool::alloc(32); // the thread's first call: it adopts the parked pool
        pool::free(got, 32);
        pool::free(kept, 32);
        r = report_after_taking_back<pool>();
    }).join();
    EXPECT_EQ(got, spare);
    expect_all_back(r);
    EXPECT_EQ(pool::thread_pools().pools_made, 1u);
}

// Guards reuse across short-lived threads: a thousand threads one after another, each
// freeing what the previous one left, share one pool and a bounded amount of memory: each
// takes a state that holds nothing for its first frees (for_frees) and the parked pool at
// its first refill (for_refill), so the family has two.
// Nothing is purged (purge_never, set by the first thread for its pool, which the others
// adopt): a segment given back after the delay and mapped again would count twice in
// segments_mapped, and how many delays pass depends on the clock (under wine the thousand
// threads take seconds). Purging is span_life_test's.
TYPED_TEST(PerThread, ThousandThreadsInSequenceShareOnePool) {
    FRESH_POOL;
    constexpr std::size_t sizes[] = {8, 24, 100, 1000, 4096, 20000, 32768, 40000};
    std::vector<sent_block> left; // by the previous thread, for the next
    std::size_t damaged = 0;
    for (std::size_t t = 0; t < 1000; ++t)
        std::thread([&, t] {
            if (t == 0)
                pool::set_purge_delay(pool::purge_never); // makes the thread's pool
            for (const sent_block& b : left) {
                damaged += pattern_intact(b.p, std::min<std::size_t>(b.bytes, 64), b.index) ? 0 : 1;
                pool::free(b.p, b.bytes);
            }
            left.clear();
            for (std::size_t bytes : sizes)
                for (std::size_t i = 0; i < 3; ++i) {
                    void* p = pool::alloc(bytes);
                    fill_pattern(p, std::min<std::size_t>(bytes, 64), t + i);
                    if (i == 0)
                        pool::free(p, bytes);
                    else
                        left.push_back({p, bytes, t + i});
                }
        }).join();
    EXPECT_EQ(damaged, 0u);
    const auto family = pool::thread_pools();
    EXPECT_EQ(family.pools_made, 2u);
    EXPECT_EQ(family.pools_parked, 2u);
    EXPECT_LE(family.segments_mapped, 2u);

    for (const sent_block& b : left) // the last thread's blocks, freed by the main thread
        pool::free(b.p, b.bytes);
    expect_all_back(report_on_a_new_thread<pool>());
}

// Guards reuse with remote frees: a thousand threads two at a time, each pair freeing
// each other's blocks, share two pools and a bounded amount of memory; both pools end
// with every block back. Nothing is purged, as in ThousandThreadsInSequenceShareOnePool
// (the first pair's threads set it for their pools).
TYPED_TEST(PerThread, ThousandThreadsInPairsShareTwoPools) {
    FRESH_POOL;
    constexpr std::size_t sizes[] = {8, 24, 100, 1000, 4096, 20000, 32768, 40000};
    std::size_t damaged[2] = {0, 0};
    for (std::size_t pair = 0; pair < 500; ++pair) {
        std::vector<sent_block> made[2];
        count_latch sync(2);
        auto body = [&](int me) {
            if (pair == 0)
                pool::set_purge_delay(pool::purge_never); // makes the thread's pool
            for (std::size_t bytes : sizes)
                for (std::size_t i = 0; i < 2; ++i) {
                    void* p = pool::alloc(bytes);
                    const std::size_t index = pair * 4 + static_cast<std::size_t>(me) * 2 + i;
                    fill_pattern(p, std::min<std::size_t>(bytes, 64), index);
                    made[me].push_back({p, bytes, index});
                }
            sync.arrive_and_wait();
            for (const sent_block& b : made[1 - me]) {
                damaged[me] +=
                    pattern_intact(b.p, std::min<std::size_t>(b.bytes, 64), b.index) ? 0 : 1;
                pool::free(b.p, b.bytes);
            }
        };
        std::thread a(body, 0), b(body, 1);
        a.join();
        b.join();
    }
    EXPECT_EQ(damaged[0] + damaged[1], 0u);
    const auto family = pool::thread_pools();
    EXPECT_EQ(family.pools_made, 2u);
    EXPECT_EQ(family.pools_parked, 2u);
    EXPECT_LE(family.segments_mapped, 4u);

    // Two threads at once adopt the two parked pools and report on them.
    pool_report reports[2];
    count_latch both_adopted(2);
    auto check = [&](int me) {
        (void)pool::detail_state(); // adopt
        both_adopted.arrive_and_wait();
        reports[me] = report_after_taking_back<pool>();
    };
    std::thread c(check, 0), d(check, 1);
    c.join();
    d.join();
    expect_all_back(reports[0]);
    expect_all_back(reports[1]);
    EXPECT_EQ(pool::thread_pools().pools_made, 2u);
}

// Guards the C API on per-thread pools (c_span_heap): blocks malloc'd on one thread,
// pooled, poor fits (private heap; only the seed's powers of two have them) and above
// 32 KiB, freed or reallocated on another keep their content and all go home.
TYPED_TEST(PerThread, CApiAcrossThreads) {
    FRESH_POOL;
    using heap = sta::detail::c_span_heap<pool>;
    struct resize {
        std::size_t from, to;
    };
    constexpr resize resizes[] = {{1, 200},        {16, 4300},     {100, 8},
                                  {1000, 5000},    {4300, 4400},   {6000, 100},
                                  {32768, 40000},  {40000, 4300},  {300000, 320000},
                                  {700000, 32768}, {4300, 700000}, {40000, 41000}};
    std::vector<sent_block> to_free, to_realloc;
    std::size_t index = 0;
    for (const resize& r : resizes) {
        for (std::vector<sent_block>* list : {&to_free, &to_realloc}) {
            void* p = heap::malloc(r.from);
            ASSERT_NE(p, nullptr);
            fill_pattern(p, r.from, index);
            list->push_back({p, r.from, index++});
        }
    }
    ASSERT_EQ(heap::poor_fit(4300), heap::has_poor_fits); // 4300 B is one where there are any

    std::vector<sent_block> moved; // reallocated on the other thread, freed back here
    std::size_t damaged = 0, short_blocks = 0;
    std::thread([&] {
        for (const sent_block& b : to_free) {
            damaged += pattern_intact(b.p, b.bytes, b.index) ? 0 : 1;
            heap::free(b.p);
        }
        for (std::size_t i = 0; i < to_realloc.size(); ++i) {
            const sent_block& b = to_realloc[i];
            const std::size_t to = resizes[i].to;
            void* q = heap::realloc(b.p, to);
            if (q == nullptr) {
                ++damaged;
                continue;
            }
            damaged += pattern_intact(q, std::min(b.bytes, to), b.index) ? 0 : 1;
            short_blocks += heap::usable_size(q) >= to ? 0 : 1;
            moved.push_back({q, std::min(b.bytes, to), b.index}); // the bytes kept
        }
    }).join();
    EXPECT_EQ(damaged, 0u);
    EXPECT_EQ(short_blocks, 0u);
    for (const sent_block& b : moved) { // into the other thread's parked pool, or here
        EXPECT_TRUE(pattern_intact(b.p, b.bytes, b.index));
        heap::free(b.p);
    }
    expect_all_back(report_after_taking_back<pool>());
    expect_all_back(report_on_a_new_thread<pool>()); // the other thread's pool
    EXPECT_EQ(pool::thread_pools().pools_made, 2u);
}

// Guards containers over a per-thread pool crossing threads: built on one thread that
// then ends, destroyed on another that has no pool (it takes one that holds nothing for
// its frees); the parked pool gets it all back.
TYPED_TEST(PerThread, ContainersCrossThreads) {
    FRESH_POOL;
    using string =
        std::basic_string<char, std::char_traits<char>, sta::allocator_adapter<char, pool>>;
    using strings = std::vector<string, sta::allocator_adapter<string, pool>>;
    using table = std::map<int, string, std::less<int>,
                           sta::allocator_adapter<std::pair<const int, string>, pool>>;
    struct built {
        strings names;
        table by_number;
    };
    built* made = nullptr;
    std::thread([&made] {
        made = new built;
        for (int i = 0; i < 2000; ++i) {
            made->names.emplace_back("a name long enough for the heap, number " +
                                     std::to_string(i));
            made->by_number.emplace(i, string(static_cast<std::size_t>(i % 300), 'x'));
        }
    }).join();
    bool same = true;
    std::thread([&] { // reads and destroys; allocates nothing (std::string temporaries)
        for (int i = 0; i < 2000; ++i) {
            const auto u = static_cast<std::size_t>(i);
            const std::string name = "a name long enough for the heap, number " + std::to_string(i);
            same = same && made->names[u].c_str() == name &&
                   made->by_number.at(i).c_str() ==
                       std::string(static_cast<std::size_t>(i % 300), 'x');
        }
        delete made;
    })
        .join();
    EXPECT_TRUE(same);
    expect_all_back(report_on_a_new_thread<pool>());
    EXPECT_EQ(pool::thread_pools().pools_made, 2u);
}

// Guards realloc of another thread's block: between classes or within the tiers above
// 32 KiB it moves into the caller's pool with its content; within its class it stays.
TYPED_TEST(PerThread, ReallocMovesAnotherThreadsBlockIntoTheCallersPool) {
    FRESH_POOL;
    struct resize {
        std::size_t from, to;
        bool stays;
    };
    // Within a class: 100 B to the top of its class (128 B in powers of two, 112 B in
    // quarter classes).
    constexpr std::size_t class100 = sta::detail::bytes_of_size<typename pool::classes>(100);
    constexpr resize resizes[] = {{100, 3000, false},     {100, class100, true},
                                  {40000, 60000, false},  {40000, 600000, false},
                                  {600000, 50000, false}, {40000, 1000, false}};
    std::vector<sent_block> blocks;
    for (std::size_t i = 0; i < std::size(resizes); ++i) {
        void* p = pool::alloc(resizes[i].from);
        ASSERT_NE(p, nullptr);
        fill_pattern(p, resizes[i].from, i);
        blocks.push_back({p, resizes[i].from, i});
    }
    sta::detail::pool_state* const mine = own_state<pool>();
    std::vector<std::string> wrong;
    std::thread([&] {
        sta::detail::pool_state* const theirs = own_state<pool>();
        for (std::size_t i = 0; i < blocks.size(); ++i) {
            const resize& r = resizes[i];
            void* q = pool::realloc(blocks[i].p, r.from, r.to);
            const std::string what = std::to_string(r.from) + " -> " + std::to_string(r.to);
            if (q == nullptr) {
                wrong.push_back(what + ": nullptr");
                continue;
            }
            if (!pattern_intact(q, std::min(r.from, r.to), i))
                wrong.push_back(what + ": content changed");
            if (r.stays != (q == blocks[i].p))
                wrong.push_back(what + (r.stays ? ": moved" : ": stayed"));
            sta::detail::pool_state* const owner =
                sta::detail::is_pooled_size(r.to)
                    ? static_cast<sta::detail::pool_state*>(sta::detail::owner_of(q))
                : r.to <= pool::page_bytes() / 2 ? heap_owner_of(q)
                                                 : nullptr;
            if (owner != nullptr && owner != (r.stays ? mine : theirs))
                wrong.push_back(what + ": owned by the wrong pool");
            pool::free(q, r.to);
        }
    }).join();
    EXPECT_EQ(wrong, std::vector<std::string>{});
    expect_all_back(report_after_taking_back<pool>());
    expect_all_back(report_on_a_new_thread<pool>());
}

// Guards the heap tier's way home: a thread whose (32 KiB, page/2] blocks are all freed
// by other threads gets them back in its heap, which so does not grow without bound.
TYPED_TEST(PerThread, HeapBlocksFreedElsewhereAreReusedByTheirOwner) {
    FRESH_POOL;
    constexpr std::size_t bytes = 40000;
    std::set<void*> seen;
    for (int i = 0; i < 200; ++i) {
        void* p = pool::alloc(bytes);
        ASSERT_NE(p, nullptr);
        seen.insert(p);
        std::thread([p] { pool::free(p, bytes); }).join();
    }
    // A standard heap chunk (4 MiB) holds about a hundred such blocks: a heap that gets
    // its blocks back needs no more than one.
    EXPECT_LE(seen.size(), (std::size_t{4} << 20) / bytes);
    expect_all_back(report_after_taking_back<pool>());
}

// Guards thread exit order: a thread_local container frees into its own pool before
// that pool is parked (the exit hook runs after thread_local destructors:
// os/thread_exit.hpp).
TYPED_TEST(PerThread, AThreadLocalContainerFreesAtExit) {
    FRESH_POOL;
    using ints = std::vector<int, sta::allocator_adapter<int, pool>>;
    /// Its destructor notes whether the thread's pool was parked already; then its
    /// member frees.
    struct numbers_at_exit {
        ints numbers;
        sta::detail::pool_state* state = nullptr;
        bool* parked_first = nullptr;
        ~numbers_at_exit() {
            if (parked_first != nullptr)
                *parked_first = state->parked.load();
        }
    };
    bool parked_first = true;
    std::thread([&parked_first] {
        thread_local numbers_at_exit at_exit;
        for (int i = 0; i < 100000; ++i)
            at_exit.numbers.push_back(i);
        at_exit.state = own_state<pool>();
        at_exit.parked_first = &parked_first;
    }).join();
    EXPECT_FALSE(parked_first) << "the pool was parked before the thread_local destructor ran";
    const pool_report r = report_on_a_new_thread<pool>();
    expect_all_back(r);
    EXPECT_EQ(pool::thread_pools().pools_made, 1u);
}

#if defined(_WIN32)
// Guards thread exit on a thread that Windows made (CreateThread), not std::thread
// (pthread_create under mingw-w64): its pool too is parked, after its thread_local
// destructors, and adopted by the next thread (os/thread_exit.hpp).
TYPED_TEST(PerThread, ACreateThreadThreadIsParkedAfterItsThreadLocals) {
    FRESH_POOL;
    using ints = std::vector<int, sta::allocator_adapter<int, pool>>;
    struct numbers_at_exit {
        ints numbers;
        sta::detail::pool_state* state = nullptr;
        bool* parked_first = nullptr;
        ~numbers_at_exit() {
            if (parked_first != nullptr)
                *parked_first = state->parked.load();
        }
    };
    bool parked_first = true;
    const HANDLE thread = ::CreateThread(
        nullptr, 0,
        [](void* flag) -> DWORD {
            thread_local numbers_at_exit at_exit;
            for (int i = 0; i < 100000; ++i)
                at_exit.numbers.push_back(i);
            at_exit.state = own_state<pool>();
            at_exit.parked_first = static_cast<bool*>(flag);
            return 0;
        },
        &parked_first, 0, nullptr);
    ASSERT_NE(thread, nullptr);
    ::WaitForSingleObject(thread, INFINITE);
    ::CloseHandle(thread);
    EXPECT_FALSE(parked_first) << "the pool was parked before the thread_local destructor ran";
    EXPECT_EQ(pool::thread_pools().pools_parked, 1u);
    expect_all_back(report_on_a_new_thread<pool>());
    EXPECT_EQ(pool::thread_pools().pools_made, 1u);
}

// Guards the thread slot of a family whose TLS index is 64 or more (mingw-w64 g++ reads it
// from TEB.TlsExpansionSlots, os/thread_slot.hpp): each thread keeps finding its own pool,
// and a thread's pool is parked at its end and adopted.
TYPED_TEST(PerThread, ASlotPastTheSixtyFourDirectOnesKeepsItsPool) {
    FRESH_POOL;
    std::vector<DWORD> taken; // the free indices below 64, and the first one past them
    for (DWORD i = 0; i < 64;) {
        i = ::TlsAlloc();
        ASSERT_NE(i, TLS_OUT_OF_INDEXES);
        taken.push_back(i);
    }
    ::TlsFree(taken.back()); // the family's slot takes it
    taken.pop_back();
    sta::detail::pool_state* const mine = own_state<pool>();
    std::vector<void*> blocks;
    for (int i = 0; i < 1000; ++i)
        blocks.push_back(pool::alloc(48));
    EXPECT_EQ(own_state<pool>(), mine);
    sta::detail::pool_state* theirs = nullptr;
    bool same = true;
    std::thread([&] {
        theirs = own_state<pool>();
        for (int i = 0; i < 1000; ++i) {
            pool::free(pool::alloc(48), 48);
            same = same && own_state<pool>() == theirs;
        }
    }).join();
    EXPECT_TRUE(same);
    EXPECT_NE(theirs, mine);
    EXPECT_EQ(pool::thread_pools().pools_parked, 1u);
    for (void* p : blocks)
        pool::free(p, 48);
    expect_all_back(report_after_taking_back<pool>());
    expect_all_back(report_on_a_new_thread<pool>());
    EXPECT_EQ(pool::thread_pools().pools_made, 2u);
    for (DWORD i : taken)
        ::TlsFree(i);
}
#endif

// Guards a thread that only frees (for_frees): freeing another thread's blocks, of every
// tier, it takes a state that holds no memory and keeps it so, and not a parked one that
// holds memory (an ended thread's, whose free spans its purges give back); its blocks go
// home batched, and all come back.
TYPED_TEST(PerThread, AThreadThatOnlyFreesTakesAStateThatHoldsNothing) {
    FRESH_POOL;
    std::vector<sent_block> blocks;
    for (std::size_t bytes : {std::size_t{0}, std::size_t{48}, std::size_t{32768},
                              std::size_t{40000}, std::size_t{600000}})
        blocks.push_back({pool::alloc(bytes), bytes, 0});
    std::thread([] { pool::free(pool::alloc(64), 64); }).join(); // parked, holding memory
    bool took_for_frees = false, holds_segments = true;
    std::thread([&] {
        for (const sent_block& b : blocks)
            pool::free(b.p, b.bytes);
        took_for_frees = pool::detail_state().taken_for_frees;
        holds_segments = pool::detail_state().segments != nullptr;
    }).join();
    EXPECT_TRUE(took_for_frees);
    EXPECT_FALSE(holds_segments);
    const auto family = pool::thread_pools();
    EXPECT_EQ(family.pools_made, 3u);   // the main thread's, the ended one's, the freeing one's
    EXPECT_EQ(family.pools_parked, 2u); // the ended one's was not taken
    expect_all_back(report_after_taking_back<pool>());
}

// Guards for_refill: a thread whose first call is a free takes a state that holds nothing,
// and at its first refill exchanges it for the parked one that holds memory: it maps no
// segment of its own, and the empty state goes back to the parked list.
TYPED_TEST(PerThread, AThreadsFirstRefillTakesAParkedPoolAfterItsFrees) {
    FRESH_POOL;
    void* const mine = pool::alloc(48);
    std::thread([] { pool::free(pool::alloc(64), 64); }).join(); // parked, holding memory
    const std::size_t mapped = pool::thread_pools().segments_mapped;
    bool exchanged = false;
    std::thread([&] {
        pool::free(mine, 48); // another thread's block: a state for the frees
        const bool took = pool::detail_state().taken_for_frees;
        void* const p = pool::alloc(64); // the first refill
        exchanged = took && !pool::detail_state().taken_for_frees &&
                    pool::detail_state().segments != nullptr;
        pool::free(p, 64);
    }).join();
    EXPECT_TRUE(exchanged);
    const auto family = pool::thread_pools();
    EXPECT_EQ(family.segments_mapped, mapped);
    EXPECT_EQ(family.pools_made, 3u);
    EXPECT_EQ(family.pools_parked, 2u);
    expect_all_back(report_on_a_new_thread<pool>());
}

// Guards the std containers on sta::memory_pool itself (sta::vector, sta::string,
// sta::map) built on one thread and destroyed on another.
TEST(PerThreadDefaultPool, StaContainersCrossThreads) {
    static_assert(sta::memory_pool::per_thread, "sta::memory_pool is per thread on spans");
    auto* names = new sta::vector<sta::string>;
    auto* by_number = new sta::map<int, sta::string>;
    std::thread([&] {
        for (int i = 0; i < 3000; ++i) {
            names->emplace_back(static_cast<std::size_t>(20 + i % 500),
                                static_cast<char>('a' + i % 26));
            by_number->emplace(i, sta::string(static_cast<std::size_t>(i % 100 + 16), 'n'));
        }
    }).join();
    bool same = true;
    std::thread([&] {
        for (int i = 0; i < 3000; ++i) {
            const sta::string& s = (*names)[static_cast<std::size_t>(i)];
            same = same && s.size() == static_cast<std::size_t>(20 + i % 500) &&
                   s.find_first_not_of(static_cast<char>('a' + i % 26)) == sta::string::npos &&
                   by_number->at(i).size() == static_cast<std::size_t>(i % 100 + 16);
        }
        delete names;
        delete by_number;
    }).join();
    EXPECT_TRUE(same);
}

// Guards sta/pool.h's functions on sta::memory_pool across threads: malloc on one
// thread, realloc and free on another, pooled, poor fit and above 32 KiB.
TEST(PerThreadDefaultPool, CFunctionsCrossThreads) {
    constexpr std::size_t sizes[] = {24, 4300, 40000, 700000};
    void* blocks[std::size(sizes)];
    std::thread([&] {
        for (std::size_t i = 0; i < std::size(sizes); ++i) {
            blocks[i] = sta_malloc(sizes[i]);
            fill_pattern(blocks[i], sizes[i], i);
        }
    }).join();
    std::size_t damaged = 0;
    std::thread([&] {
        for (std::size_t i = 0; i < std::size(sizes); ++i) {
            void* q = sta_realloc(blocks[i], sizes[i] + 3000);
            damaged += q != nullptr && pattern_intact(q, sizes[i], i) ? 0 : 1;
            damaged += sta_usable_size(q) >= sizes[i] + 3000 ? 0 : 1;
            sta_free(q);
        }
    }).join();
    EXPECT_EQ(damaged, 0u);
}

} // namespace
