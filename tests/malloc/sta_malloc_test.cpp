// libsta_malloc.so linked into a program (the second way to use it, beside LD_PRELOAD):
// this program's malloc, free, ... and operator new / delete are the library's. Each
// test names one promise of detail/c_api/malloc_heap.hpp: glibc's and POSIX's results and
// errno for the edge cases, alignment, zeroing, sizes kept across realloc, blocks
// freed on another thread, fork in a threaded program.
#include "../support/smaps.hpp"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

bool aligned_to(const void* p, std::size_t alignment) {
    return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

// Before any library's constructor: an executable's .preinit_array runs before the
// initialisers of every shared object, libsta_malloc's included. What it allocates
// there is served and freed like anything later.
bool served_before_init = false;
void allocate_before_init(int, char**, char**) {
    void* small = std::malloc(40);
    void* big = std::malloc(3 << 20);
    auto* s = new std::string(500, 'p');
    served_before_init = small != nullptr && big != nullptr && s->size() == 500 &&
                         malloc_usable_size(small) == STA_TEST_CLASS_OF_40; // 40 B's class
    delete s;
    std::free(big);
    std::free(small);
}
__attribute__((section(".preinit_array"),
               used)) void (*const preinit_entry)(int, char**, char**) = &allocate_before_init;

/// Calls through a volatile function pointer: g++ may not fold or elide them.
void* (*volatile malloc_fn)(std::size_t) = &std::malloc;
void* (*volatile calloc_fn)(std::size_t, std::size_t) = &std::calloc;
void* (*volatile realloc_fn)(void*, std::size_t) = &std::realloc;
void* (*volatile reallocarray_fn)(void*, std::size_t, std::size_t) = &::reallocarray;
/// (clang also checks a literal alignment given to memalign: the odd ones are the test)
void* (*volatile memalign_fn)(std::size_t, std::size_t) = &::memalign;

// The symbols this program calls are the library's, not glibc's.
TEST(StaMalloc, TheProgramsMallocIsTheLibrarys) {
    Dl_info info{};
    ASSERT_NE(dladdr(reinterpret_cast<void*>(malloc_fn), &info), 0);
    EXPECT_NE(std::string(info.dli_fname).find("libsta_malloc"), std::string::npos)
        << info.dli_fname;
    void* p = malloc_fn(20);
    EXPECT_EQ(malloc_usable_size(p), 32u) << "a 20-byte request takes the 32-byte class";
    std::free(p);
}

TEST(StaMalloc, AllocationsBeforeTheLibrarysConstructorAreServed) {
    EXPECT_TRUE(served_before_init);
}

TEST(StaMalloc, MallocZeroGivesAUniqueBlock) {
    void* a = malloc_fn(0);
    void* b = malloc_fn(0);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_NE(a, b);
    EXPECT_GE(malloc_usable_size(a), 1u);
    std::free(a);
    std::free(b);
}

TEST(StaMalloc, HugeRequestsFailWithEnomem) {
    for (std::size_t n : {SIZE_MAX, SIZE_MAX / 2, static_cast<std::size_t>(PTRDIFF_MAX)}) {
        errno = 0;
        EXPECT_EQ(malloc_fn(n), nullptr) << n;
        EXPECT_EQ(errno, ENOMEM) << n;
    }
}

TEST(StaMalloc, EveryBlockIs16AlignedAndHoldsItsSize) {
    std::vector<void*> blocks;
    for (std::size_t n = 1; n < 300000; n = n * 3 / 2 + 1) {
        void* p = malloc_fn(n);
        ASSERT_NE(p, nullptr) << n;
        EXPECT_TRUE(aligned_to(p, 16)) << n;
        EXPECT_GE(malloc_usable_size(p), n);
        std::memset(p, 0xab, n);
        blocks.push_back(p);
    }
    for (void* p : blocks)
        std::free(p);
}

TEST(StaMalloc, CallocZeroesReusedMemory) {
    for (std::size_t n : {24u, 1000u, 5000u, 40000u, 3000000u}) {
        void* dirty = malloc_fn(n);
        std::memset(dirty, 0xff, n);
        std::free(dirty);
        auto* p = static_cast<unsigned char*>(calloc_fn(1, n));
        ASSERT_NE(p, nullptr);
        std::size_t nonzero = 0;
        for (std::size_t i = 0; i < n; ++i)
            nonzero += p[i] != 0;
        EXPECT_EQ(nonzero, 0u) << n;
        std::free(p);
    }
}

/// Pages of [p, p + bytes) resident now (mincore); an unmapped page counts as not.
std::size_t resident_pages(const void* p, std::size_t bytes) {
    const auto start = reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{4095};
    const std::size_t length = reinterpret_cast<std::uintptr_t>(p) + bytes - start;
    std::vector<unsigned char> residency((length + 4095) / 4096);
    if (::mincore(reinterpret_cast<void*>(start), length, residency.data()) != 0)
        return 0;
    std::size_t n = 0;
    for (const unsigned char r : residency)
        n += r & 1u;
    return n;
}

// Guards malloc_trim (glibc's signature and answer): memory freed goes back to the OS at
// once, whatever the purge delay, and the call says so with 1; a second call finds
// nothing to give and says 0.
TEST(StaMalloc, MallocTrimGivesBackAtOnce) {
    std::vector<void*> blocks;
    for (int i = 0; i < 4096; ++i) { // 4 MiB: spans of their own, most not current
        void* p = malloc_fn(1024);
        std::memset(p, 1, 1024);
        blocks.push_back(p);
    }
    std::size_t before = 0;
    for (void* p : blocks)
        before += resident_pages(p, 1024) != 0;
    ASSERT_EQ(before, blocks.size());
    for (void* p : blocks)
        std::free(p);
    EXPECT_EQ(::malloc_trim(0), 1);
    std::size_t after = 0;
    for (void* p : blocks)
        after += resident_pages(p, 1024) != 0;
    EXPECT_LT(after, blocks.size() / 10) << "freed blocks still resident after malloc_trim";
    EXPECT_EQ(::malloc_trim(0), 0);
}

// A big block's mapping is kept after its free (detail/heaps/retained_mappings.hpp): the next
// request of its size gets it back without a page fault, and calloc clears it.
TEST(StaMalloc, ABigBlockFreedIsReusedAndCallocClearsIt) {
    const std::size_t n = (std::size_t{2} << 20) + 5;
    auto* p = static_cast<unsigned char*>(malloc_fn(n));
    ASSERT_NE(p, nullptr);
    std::memset(p, 0xab, n);
    std::free(p);
    auto* q = static_cast<unsigned char*>(malloc_fn(n));
    EXPECT_EQ(q, p); // the kept mapping
    std::memset(q, 0xcd, n);
    std::free(q);
    auto* z = static_cast<unsigned char*>(calloc_fn(n, 1));
    EXPECT_EQ(z, p);
    std::size_t nonzero = 0;
    for (std::size_t i = 0; i < n; ++i)
        nonzero += z[i] != 0;
    EXPECT_EQ(nonzero, 0u);
    std::free(z);
}

// realloc of a big block grows it in place into kept pages that follow it.
TEST(StaMalloc, ABigBlockGrowsInPlaceIntoTheKeptPagesAfterIt) {
    const std::size_t mib = std::size_t{1} << 20;
    (void)::malloc_trim(0); // nothing kept from the tests before: the 8 MiB are the range
    void* big = malloc_fn(8 * mib);
    ASSERT_NE(big, nullptr);
    std::free(big); // its pages are kept
    auto* p = static_cast<unsigned char*>(malloc_fn(mib));
    std::memset(p, 0x5a, mib);
    auto* q = static_cast<unsigned char*>(realloc_fn(p, 4 * mib));
    EXPECT_EQ(q, p); // in place: the kept pages followed it
    std::size_t kept = 0;
    for (std::size_t i = 0; i < mib; ++i)
        kept += q[i] == 0x5a;
    EXPECT_EQ(kept, mib);
    std::memset(q, 1, 4 * mib);
    auto* r = static_cast<unsigned char*>(realloc_fn(q, 2 * mib)); // the tail is kept
    EXPECT_EQ(r, q);
    EXPECT_EQ(r[2 * mib - 1], 1);
    std::free(r);
}

// A big block of 2 MiB or more lies in a mapping aligned to 2 MiB with the advice of huge
// pages (os_map_big_pages): a vector of 4 MiB filled costs 2 faults, not 1,024.
TEST(StaMalloc, ABigBlockOfTwoMiBOrMoreIsOnHugePages) {
    (void)::malloc_trim(0); // no kept mapping serves them
    auto* small = static_cast<unsigned char*>(malloc_fn(std::size_t{1} << 20)); // below 2 MiB
    ASSERT_NE(small, nullptr);
    EXPECT_FALSE(sta_test::advised_huge(small));
    const std::size_t n = std::size_t{4} << 20;
    auto* p = static_cast<unsigned char*>(malloc_fn(n));
    ASSERT_NE(p, nullptr);
    const auto mapping = reinterpret_cast<std::uintptr_t>(p) - 16; // the block's header
    EXPECT_EQ(mapping % (std::size_t{2} << 20), 0u);
    EXPECT_TRUE(sta_test::advised_huge(p));
    std::memset(p, 7, n);
    EXPECT_EQ(p[n - 1], 7);
    std::free(p);
    std::free(small);
}

TEST(StaMalloc, CallocOverflowFailsWithEnomem) {
    errno = 0;
    EXPECT_EQ(calloc_fn(SIZE_MAX / 2 + 1, 2), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(calloc_fn(3, SIZE_MAX / 3 + 1), nullptr);
    EXPECT_EQ(errno, ENOMEM);
}

// realloc keeps the bytes across every tier: class to class, into the private heap,
// into the big tier (mremap) and back down.
TEST(StaMalloc, ReallocKeepsTheContentsAcrossTiers) {
    std::size_t n = 10;
    auto* p = static_cast<unsigned char*>(malloc_fn(n));
    for (std::size_t i = 0; i < n; ++i)
        p[i] = static_cast<unsigned char>(i * 7);
    for (std::size_t next : {100u, 3000u, 20000u, 50000u, 400000u, 5000000u, 70000u, 64u}) {
        p = static_cast<unsigned char*>(realloc_fn(p, next));
        ASSERT_NE(p, nullptr) << next;
        const std::size_t kept = n < next ? n : next;
        for (std::size_t i = 0; i < kept; ++i)
            ASSERT_EQ(p[i], static_cast<unsigned char>(i * 7)) << next << " at " << i;
        for (std::size_t i = kept; i < next; ++i)
            p[i] = static_cast<unsigned char>(i * 7);
        n = next;
    }
    std::free(p);
}

TEST(StaMalloc, ReallocEdgeCasesFollowGlibc) {
    void* p = realloc_fn(nullptr, 40);
    ASSERT_NE(p, nullptr) << "realloc(NULL, n) is malloc(n)";
    EXPECT_EQ(realloc_fn(p, 0), nullptr) << "realloc(p, 0) frees p (glibc)";
    void* q = realloc_fn(nullptr, 0);
    EXPECT_NE(q, nullptr) << "realloc(NULL, 0) is malloc(0)";
    std::free(q);
    void* r = malloc_fn(100);
    errno = 0;
    EXPECT_EQ(realloc_fn(r, SIZE_MAX - 8), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    std::memset(r, 1, 100); // still ours after the failure
    std::free(r);
}

TEST(StaMalloc, ReallocarrayChecksTheProduct) {
    void* p = malloc_fn(16);
    errno = 0;
    EXPECT_EQ(reallocarray_fn(p, SIZE_MAX / 4, 8), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    p = reallocarray_fn(p, 100, 8);
    ASSERT_NE(p, nullptr);
    EXPECT_GE(malloc_usable_size(p), 800u);
    std::free(p);
}

TEST(StaMalloc, PosixMemalignRefusesBadAlignmentsWithEinval) {
    void* out = reinterpret_cast<void*>(0x1234);
    for (std::size_t a : {0u, 1u, 2u, 4u, 12u, 24u, 48u, 4097u}) {
        errno = 0;
        EXPECT_EQ(posix_memalign(&out, a, 16), EINVAL) << a;
        EXPECT_EQ(out, reinterpret_cast<void*>(0x1234)) << "*out untouched on failure";
        EXPECT_EQ(errno, 0) << "posix_memalign reports through its result";
    }
    EXPECT_EQ(posix_memalign(&out, 64, SIZE_MAX - 100), ENOMEM);
    EXPECT_EQ(out, reinterpret_cast<void*>(0x1234));
}

// Every power-of-two alignment from 8 to 1 MiB, for sizes in each tier.
TEST(StaMalloc, AlignedBlocksAreAlignedUsableAndFreeable) {
    for (std::size_t a = 8; a <= (std::size_t{1} << 20); a *= 2)
        for (std::size_t n : {0u, 1u, 17u, 100u, 4096u, 33000u, 700000u}) {
            void* p = nullptr;
            ASSERT_EQ(posix_memalign(&p, a, n), 0) << a << " " << n;
            EXPECT_TRUE(aligned_to(p, a)) << a << " " << n;
            EXPECT_GE(malloc_usable_size(p), n);
            std::memset(p, 0x5a, n);
            void* q = memalign(a, n);
            EXPECT_TRUE(aligned_to(q, a)) << a << " " << n;
            void* r = aligned_alloc(a, n);
            EXPECT_TRUE(aligned_to(r, a)) << a << " " << n;
            r = realloc_fn(r, n + 10); // an aligned block resized keeps its bytes
            ASSERT_NE(r, nullptr);
            std::free(p);
            std::free(q);
            std::free(r);
        }
}

TEST(StaMalloc, MemalignRoundsAnOddAlignmentUpAndRefusesAHugeOne) {
    void* p = memalign_fn(48, 10); // glibc: 64
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(aligned_to(p, 64));
    std::free(p);
    errno = 0;
    EXPECT_EQ(memalign_fn(SIZE_MAX / 2 + 2, 10), nullptr);
    EXPECT_EQ(errno, EINVAL);
}

TEST(StaMalloc, VallocAndPvallocArePageAligned) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    void* v = valloc(10);
    EXPECT_TRUE(aligned_to(v, page));
    void* pv = pvalloc(page + 1);
    EXPECT_TRUE(aligned_to(pv, page));
    EXPECT_GE(malloc_usable_size(pv), 2 * page) << "pvalloc rounds the size up to pages";
    void* p0 = pvalloc(0);
    EXPECT_GE(malloc_usable_size(p0), page);
    std::free(v);
    std::free(pv);
    std::free(p0);
}

// glibc's dynamic linker allocates the message of a failed dlsym with malloc and frees
// it on the next dlerror: both through the library, and the message is intact.
TEST(StaMalloc, DlsymAndDlerrorAllocateThroughIt) {
    for (int i = 0; i < 100; ++i) {
        EXPECT_EQ(dlsym(RTLD_DEFAULT, "sta_no_such_symbol_anywhere"), nullptr);
        const char* message = dlerror();
        ASSERT_NE(message, nullptr);
        EXPECT_NE(std::string(message).find("sta_no_such_symbol_anywhere"), std::string::npos);
    }
}

TEST(StaMalloc, UsableSizeOfNullIsZero) {
    EXPECT_EQ(malloc_usable_size(nullptr), 0u);
}

// ---- options while the program runs, mallopt ---------------------------------------

} // namespace
extern "C" int sta_malloc_option(const char* name, long long* old_value,
                                 const long long* new_value);
namespace {

long long option_now(const char* name) {
    long long value = -2;
    EXPECT_EQ(sta_malloc_option(name, &value, nullptr), 0) << name;
    return value;
}
void set_option(const char* name, long long value) {
    ASSERT_EQ(sta_malloc_option(name, nullptr, &value), 0) << name << " " << value;
}

// Each option reads back what was set; an unknown name, NULL and a value out of range
// are refused with EINVAL and change nothing; the old value comes back with the set.
TEST(StaMallocOptions, EachOptionReadsBackWhatWasSet) {
    const struct {
        const char* name;
        long long value, bad;
    } options[] = {{"purge_delay_ms", 250, -2}, {"purge_delay_ms", -1, -5}, {"huge_pages", 0, 3},
                   {"huge_pages", 1, -1},       {"prefault", 1, 2},         {"checks", 0, 7},
                   {"retain_mib", 16, -1},      {"limit_mib", 4096, -3}};
    for (const auto& o : options) {
        const long long before = option_now(o.name);
        long long old = -9;
        ASSERT_EQ(sta_malloc_option(o.name, &old, &o.value), 0) << o.name;
        EXPECT_EQ(old, before) << o.name;
        EXPECT_EQ(option_now(o.name), o.value) << o.name;
        EXPECT_EQ(sta_malloc_option(o.name, nullptr, &o.bad), EINVAL) << o.name;
        EXPECT_EQ(option_now(o.name), o.value) << o.name << ": a refused value changed it";
        set_option(o.name, before);
    }
    long long value = 1;
    EXPECT_EQ(sta_malloc_option("no_such_option", &value, nullptr), EINVAL);
    EXPECT_EQ(sta_malloc_option(nullptr, &value, nullptr), EINVAL);
    EXPECT_EQ(option_now("huge_pages"), 2) << "the default: where they pay";
}

// limit_mib set while running: a request past it fails with ENOMEM, and succeeds once
// the limit is lifted.
TEST(StaMallocOptions, ALimitSetWhileRunningRefusesAtOnce) {
    const long long before = option_now("limit_mib");
    set_option("limit_mib", 1);
    errno = 0;
    EXPECT_EQ(malloc_fn(std::size_t{8} << 20), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    set_option("limit_mib", before);
    void* p = malloc_fn(std::size_t{8} << 20);
    EXPECT_NE(p, nullptr);
    std::free(p);
}

// The purge delay set by one thread reaches another thread's running pool: that thread
// kept its clean spans under `never`, and gives them back at its next slow-path check
// once the delay is 0.
TEST(StaMallocOptions, APurgeDelayReachesAnotherThreadsPool) {
    using sized_json = std::size_t (*)(char*, std::size_t);
    const auto json = reinterpret_cast<sized_json>(dlsym(RTLD_DEFAULT, "sta_malloc_stats_json"));
    ASSERT_NE(json, nullptr);
    const auto clean_bytes = [&] {
        static char text[65536];
        json(text, sizeof text);
        const char* at = std::strstr(text, "\"clean\": ");
        return at != nullptr ? std::strtoull(at + 9, nullptr, 10) : 0ull;
    };
    const long long before = option_now("purge_delay_ms");
    set_option("purge_delay_ms", -1);
    std::atomic<int> step{0};
    std::thread worker([&] {
        std::vector<void*> blocks;
        for (int i = 0; i < 40000; ++i)
            blocks.push_back(malloc_fn(256));
        for (void* p : blocks)
            std::free(p);
        step = 1;
        while (step != 2)
            std::this_thread::yield();
        for (int i = 0; i < 20000; ++i) // slow-path checks: refills, flushes
            std::free(malloc_fn(64 + i % 512));
        step = 3;
        while (step != 4)
            std::this_thread::yield();
    });
    while (step != 1)
        std::this_thread::yield();
    const unsigned long long kept = clean_bytes();
    EXPECT_GE(kept, std::size_t{4} << 20) << "never: the worker's clean spans stay";
    set_option("purge_delay_ms", 0);
    step = 2;
    while (step != 3)
        std::this_thread::yield();
    const unsigned long long after = clean_bytes();
    step = 4;
    worker.join();
    set_option("purge_delay_ms", before);
    EXPECT_LT(after, kept / 4) << "the worker took the new delay and gave its spans back";
}

// mallopt: M_CHECK_ACTION turns the release checks off and on; glibc's tuning of its
// arenas is accepted and changes nothing; M_PERTURB is not done.
TEST(StaMallocOptions, MalloptMapsWhatHasAMeaningHere) {
    EXPECT_EQ(mallopt(M_CHECK_ACTION, 0), 1);
    EXPECT_EQ(option_now("checks"), 0);
    EXPECT_EQ(mallopt(M_CHECK_ACTION, 3), 1);
    EXPECT_EQ(option_now("checks"), 1);
    EXPECT_EQ(mallopt(M_ARENA_MAX, 2), 1);
    EXPECT_EQ(mallopt(M_MMAP_THRESHOLD, 1 << 20), 1);
    EXPECT_EQ(mallopt(M_PERTURB, 0x5a), 0);
    EXPECT_EQ(mallopt(12345, 1), 0);
}

// ---- C23's sized frees, malloc_good_size ------------------------------------------

} // namespace
// Declared here: glibc 2.36's <stdlib.h> has neither (the library exports them).
extern "C" void free_sized(void* p, std::size_t bytes);
extern "C" void free_aligned_sized(void* p, std::size_t alignment, std::size_t bytes);
extern "C" std::size_t malloc_good_size(std::size_t bytes);
namespace {

// Every tier's block freed by free_sized with the size it was asked for — malloc(0)'s,
// pooled, the private heap's, a big one, one a realloc resized — is freed: the pooled
// one is the next of its size handed out (its class's cache), the others leave no
// refusal behind. (The refusals of wrong sizes: tests/malloc/CMakeLists.txt.)
TEST(StaMallocC23, FreeSizedFreesEveryTiersBlock) {
    void* pooled = malloc_fn(100);
    free_sized(pooled, 100);
    EXPECT_EQ(malloc_fn(100), pooled) << "the block went back to its class";
    free_sized(pooled, 100);
    free_sized(nullptr, 12); // nothing, like free(NULL)
    free_sized(malloc_fn(0), 0);
    for (std::size_t n :
         {std::size_t{4300}, std::size_t{40000}, std::size_t{100000}, std::size_t{3} << 20}) {
        void* p = malloc_fn(n);
        std::memset(p, 1, n);
        free_sized(p, n);
    }
    void* grown = realloc_fn(malloc_fn(100000), 150000);
    free_sized(grown, 150000);
    void* shrunk = realloc_fn(malloc_fn(100), 90); // the same class: kept in place
    free_sized(shrunk, 90);
    void* zeroed = calloc_fn(10, 30);
    free_sized(zeroed, 300);
}

// aligned_alloc's blocks, pooled (alignment up to 4 KiB) and of their own mapping,
// freed by free_aligned_sized with aligned_alloc's arguments.
TEST(StaMallocC23, FreeAlignedSizedFreesAlignedBlocks) {
    for (std::size_t a : {16u, 64u, 4096u, 65536u})
        for (std::size_t n : {1u, 100u, 5000u, 70000u}) {
            void* p = aligned_alloc(a, n);
            ASSERT_NE(p, nullptr);
            std::memset(p, 2, n);
            free_aligned_sized(p, a, n);
        }
    void* p = aligned_alloc(64, 256);
    free_aligned_sized(p, 64, 256);
    EXPECT_EQ(aligned_alloc(64, 256), p) << "the block went back to its class";
    free_aligned_sized(p, 64, 256);
}

// malloc_good_size(n) is the usable size of malloc(n)'s block, in every tier.
TEST(StaMallocC23, MallocGoodSizeIsTheUsableSizeOfMallocsBlock) {
    for (std::size_t n = 0; n <= 70000; n += n < 2048 ? 1 : 97) {
        void* p = malloc_fn(n);
        EXPECT_EQ(malloc_good_size(n), malloc_usable_size(p)) << n;
        EXPECT_GE(malloc_good_size(n), n);
        std::free(p);
    }
}

// ---- operator new / delete -------------------------------------------------------

struct alignas(64) wide {
    char bytes[64];
};

TEST(StaMallocNew, EveryFormPairsWithItsDelete) {
    auto* a = new int(5);
    delete a; // sized delete: the pool's sized path
    auto* b = new int[100];
    delete[] b;
    auto* c = new (std::nothrow) char[3000];
    ASSERT_NE(c, nullptr);
    delete[] c;
    auto* w = new wide;
    EXPECT_TRUE(aligned_to(w, 64));
    delete w;
    auto* ws = new wide[7];
    EXPECT_TRUE(aligned_to(ws, 64));
    delete[] ws;
    void* raw = ::operator new (100, std::align_val_t{4096});
    EXPECT_TRUE(aligned_to(raw, 4096));
    ::operator delete (raw, 100, std::align_val_t{4096});
    void* n0 = ::operator new(0);
    EXPECT_NE(n0, nullptr);
    ::operator delete (n0, std::size_t{0});
}

int handler_calls = 0;
void counting_handler() {
    if (++handler_calls == 3)
        std::set_new_handler(nullptr);
}

TEST(StaMallocNew, TheNewHandlerRunsUntilItGivesUpThenBadAlloc) {
    handler_calls = 0;
    std::set_new_handler(&counting_handler);
    volatile std::size_t huge = SIZE_MAX / 2;
    EXPECT_THROW((void)::operator new(huge), std::bad_alloc);
    EXPECT_EQ(handler_calls, 3);
    EXPECT_EQ(::operator new(huge, std::nothrow), nullptr);
}

// ---- threads and fork -------------------------------------------------------------

// Each round a new producer thread allocates and a new consumer thread frees it all:
// the producer adopts the parked pool the blocks belong to and takes them back from its
// inbox, so later rounds reuse the first round's spans instead of growing. (Spans, not
// addresses: a span whose blocks all came back may serve another class next round, at
// other offsets.)
// Issue 41: the headers at a segment's start (2 MiB-aligned, layout/span_types.hpp S1) lie
// above a page of no access, so a write running past whatever lies below stops there.
TEST(StaMallocHardening, ASegmentHasAGuardPageBelowItsHeaders) {
    void* const p = std::malloc(48);
    ASSERT_NE(p, nullptr);
    const auto base = reinterpret_cast<std::uintptr_t>(p) & ~((std::uintptr_t{2} << 20) - 1);
    EXPECT_EQ(sta_test::permissions_at(reinterpret_cast<void*>(base)), "rw-p");
    EXPECT_EQ(sta_test::permissions_at(reinterpret_cast<void*>(base - 1)), "---p");
    std::free(p);
}

TEST(StaMallocThreads, BlocksFreedOnAnotherThreadAreReused) {
    constexpr std::uintptr_t span_bytes = 64 * 1024; // detail/layout/span_types.hpp
    const auto span_of = [](void* p) { return reinterpret_cast<std::uintptr_t>(p) / span_bytes; };
    std::vector<void*> blocks(20000);
    std::set<std::uintptr_t> first_round;
    for (int round = 0; round < 5; ++round) {
        std::thread producer([&] {
            for (std::size_t i = 0; i < blocks.size(); ++i)
                blocks[i] = malloc_fn(16 + i % 500);
        });
        producer.join();
        if (round == 0) {
            for (void* p : blocks)
                first_round.insert(span_of(p));
        } else {
            std::size_t reused = 0;
            for (void* p : blocks)
                reused += first_round.count(span_of(p));
            EXPECT_GE(reused, blocks.size() / 2) << "round " << round;
        }
        std::thread consumer([&] {
            for (void* p : blocks)
                std::free(p);
        });
        consumer.join();
    }
}

// The pages [p, p + bytes) that are resident, or -1 when some are not mapped at all.
long resident_pages(void* p, std::size_t bytes) {
    void* const first =
        reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{4095});
    std::vector<unsigned char> residency(bytes / 4096);
    if (::mincore(first, bytes, residency.data()) != 0)
        return -1;
    long n = 0;
    for (const unsigned char r : residency)
        n += r & 1;
    return n;
}

// A byte written in every page of [p, p + bytes): volatile stores, which the compiler keeps
// before a free (a memset it may drop as dead).
void touch_pages(void* p, std::size_t bytes) {
    auto* const b = static_cast<volatile unsigned char*>(p);
    for (std::size_t at = 0; at < bytes; at += 4096)
        b[at] = 1;
}

// A thread's pool keeps the pages of the big blocks it frees for its next requests; when
// the thread ends they stay with its parked pool, like its clean spans: the next thread
// adopts the pool and takes them resident, with no page fault (mimalloc-bench's mstress
// starts a thread a round: 35,700 page faults a run when they were unmapped at the
// thread's end, 2,900 with this rule); malloc_trim gives them back.
TEST(StaMallocThreads, AThreadThatEndsLeavesItsBigBlocksPagesToTheNextThread) {
    const std::size_t bytes = std::size_t{4} << 20;
    (void)::malloc_trim(0); // nothing kept from the tests before
    std::thread([&] {
        void* p = malloc_fn(bytes);
        ASSERT_NE(p, nullptr);
        touch_pages(p, bytes);
        std::free(p);
    }).join();
    void* where = nullptr;
    long resident = 0;
    std::thread([&] {
        where = malloc_fn(bytes); // the parked pool's kept pages, before any write
        resident = resident_pages(where, bytes);
        std::free(where);
    }).join();
    ASSERT_NE(where, nullptr);
    EXPECT_GE(resident, static_cast<long>(bytes / 4096) - 1) << "a fresh mapping: nothing kept";
    EXPECT_EQ(::malloc_trim(0), 1);
    EXPECT_EQ(resident_pages(where, bytes), -1) << "malloc_trim left them mapped";
}

// What a parked pool keeps for big blocks goes back once the purge delay has passed,
// given back by another thread's slow-path checks, as its clean spans are.
TEST(StaMallocThreads, AParkedPoolsKeptBigPagesGoBackAfterThePurgeDelay) {
    const std::size_t bytes = std::size_t{4} << 20;
    const long long before = option_now("purge_delay_ms");
    set_option("purge_delay_ms", 0);
    void* where = nullptr;
    std::thread([&] {
        where = malloc_fn(bytes);
        touch_pages(where, bytes);
        std::free(where); // kept: a delay of 0 gives it back at a later check, not here
    }).join();
    ASSERT_NE(where, nullptr);
    long resident = 0;
    for (int i = 0; i < 2000 && (resident = resident_pages(where, bytes)) != -1; ++i) {
        for (int j = 0; j < 2000; ++j) // slow-path checks: refills, flushes
            std::free(malloc_fn(64 + static_cast<std::size_t>(j) % 2048));
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    set_option("purge_delay_ms", before);
    EXPECT_EQ(resident, -1) << "the parked pool still keeps the pages";
}

// A child forked while other threads allocate can allocate, free and start threads.
TEST(StaMallocThreads, ForkInAThreadedProgramLeavesTheChildUsable) {
    std::atomic<bool> stop{false};
    std::vector<std::thread> busy;
    for (int t = 0; t < 2; ++t)
        busy.emplace_back([&] {
            while (!stop.load()) {
                std::vector<std::string> v(100, std::string(50, 'x'));
                (void)v;
            }
        });
    for (int child = 0; child < 20; ++child) {
        const pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            std::vector<void*> ps;
            for (int i = 0; i < 1000; ++i)
                ps.push_back(malloc_fn(static_cast<std::size_t>(i) * 37 % 70000 + 1));
            for (void* p : ps)
                std::free(p);
            std::thread([] { std::free(malloc_fn(100)); }).join();
            _exit(0);
        }
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << child;
    }
    stop = true;
    for (auto& t : busy)
        t.join();
}

} // namespace
