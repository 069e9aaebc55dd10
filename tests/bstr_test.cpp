// sta/bstr.hpp: the OLE Automation string functions, checked against Microsoft's
// documented behaviour. Every typed test runs on two variants (support/bstr_test_support.hpp):
// on Linux the system and pool heaps, each wrapped in a counting heap that can refuse
// memory (the fixture fails a test that leaks a block); on Windows oleaut32 (through
// sta::oleaut32_bstr_functions; not counted, cannot be made to fail: those tests skip)
// and the pool heap.
#include "support/bstr_test_support.hpp"
#include "support/pool_test_support.hpp"

#include <algorithm>
#include <climits>
#include <random>
#include <vector>

namespace {
using namespace sta_test;
using sta::BSTR;
using sta::OLECHAR;
#if !defined(_WIN32) // on Windows these are the SDK's macros
using sta::FALSE;
using sta::TRUE;
#endif

template <class F>
class Bstr : public bstr_fixture<F> {};
TYPED_TEST_SUITE(Bstr, bstr_variants, bstr_variant_names);

#define FUNCTIONS                                                                                  \
    using F = TypeParam;                                                                           \
    using heap = typename F::heap;                                                                 \
    (void)sizeof(heap)

// Guards the NULL rule of SysAllocString: a NULL source gives NULL, not an empty string.
TYPED_TEST(Bstr, AllocStringOfNullIsNull) {
    FUNCTIONS;
    EXPECT_EQ(F::SysAllocString(nullptr), nullptr);
    if constexpr (counted<F>) {
        EXPECT_EQ(heap::allocs, 0);
    }
}

// Guards NULL versus empty: OL("") gives a real, empty, terminated string.
TYPED_TEST(Bstr, AllocStringOfEmptyIsEmptyNotNull) {
    FUNCTIONS;
    BSTR b = F::SysAllocString(OL(""));
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(F::SysStringLen(b), 0u);
    EXPECT_EQ(F::SysStringByteLen(b), 0u);
    EXPECT_EQ(layout_problem(b, 0), "");
    F::SysFreeString(b);
}

// Guards the layout: uint32 byte count before the pointer, NUL OLECHAR after the data.
TYPED_TEST(Bstr, AllocStringHasWindowsLayout) {
    FUNCTIONS;
    BSTR b = F::SysAllocString(OL("hiya"));
    EXPECT_EQ(layout_problem(b, 8), "");
    EXPECT_EQ(F::SysStringLen(b), 4u);
    EXPECT_EQ(F::SysStringByteLen(b), 8u);
    EXPECT_EQ(text(b, 4), OL("hiya"));
    F::SysFreeString(b);
}

// Guards SysAllocStringLen against stopping at an embedded NUL.
TYPED_TEST(Bstr, AllocStringLenKeepsEmbeddedNuls) {
    FUNCTIONS;
    const OLECHAR src[] = {u'a', 0, u'b', 0, u'c'};
    BSTR b = F::SysAllocStringLen(src, 5);
    EXPECT_EQ(layout_problem(b, 10), "");
    EXPECT_EQ(text(b, 5), ostring(src, 5));
    F::SysFreeString(b);
}

// Guards SysAllocStringLen(NULL, n): a string of n characters (zeroed here).
TYPED_TEST(Bstr, AllocStringLenOfNullGivesRequestedLength) {
    FUNCTIONS;
    BSTR b = F::SysAllocStringLen(nullptr, 7);
    EXPECT_EQ(layout_problem(b, 14), "");
    EXPECT_EQ(F::SysStringLen(b), 7u);
    for (int i = 0; i < 7; ++i)
        EXPECT_EQ(b[i], 0);
    F::SysFreeString(b);
}

// Guards the odd byte length: the byte after the data and the next OLECHAR are zero,
// and SysStringLen rounds down.
TYPED_TEST(Bstr, AllocStringByteLenOddLengthHasTheExtraZero) {
    FUNCTIONS;
    BSTR b = F::SysAllocStringByteLen("abc", 3);
    EXPECT_EQ(layout_problem(b, 3), "");
    EXPECT_EQ(F::SysStringByteLen(b), 3u);
    EXPECT_EQ(F::SysStringLen(b), 1u);
    EXPECT_EQ(std::memcmp(b, "abc", 4), 0); // "abc" and the extra zero
    F::SysFreeString(b);
}

// Guards SysAllocStringByteLen with binary data: embedded zero bytes and no terminator.
TYPED_TEST(Bstr, AllocStringByteLenCopiesBinaryData) {
    FUNCTIONS;
    const char bytes[] = {'\x01', '\0', '\xFF', '\0', '\x7F', '\x80'};
    BSTR b = F::SysAllocStringByteLen(bytes, 6);
    EXPECT_EQ(layout_problem(b, 6), "");
    EXPECT_EQ(std::memcmp(b, bytes, 6), 0);
    F::SysFreeString(b);
    BSTR z = F::SysAllocStringByteLen(nullptr, 5);
    EXPECT_EQ(layout_problem(z, 5), "");
    F::SysFreeString(z);
}

// Guards the documented NULL handling of the length and free functions.
TYPED_TEST(Bstr, NullStringHasZeroLengthAndFreesAsNoOp) {
    FUNCTIONS;
    EXPECT_EQ(F::SysStringLen(nullptr), 0u);
    EXPECT_EQ(F::SysStringByteLen(nullptr), 0u);
    F::SysFreeString(nullptr);
    if constexpr (counted<F>) {
        EXPECT_EQ(heap::frees, 0);
    }
}

// Guards the maximum lengths: too long fails with NULL / FALSE before any arithmetic
// can wrap, and nothing reaches the heap.
TYPED_TEST(Bstr, LengthsAboveTheMaximumFailCleanly) {
    FUNCTIONS;
    EXPECT_EQ(F::SysAllocStringLen(nullptr, sta::max_bstr_chars + 1), nullptr);
    EXPECT_EQ(F::SysAllocStringLen(nullptr, UINT_MAX), nullptr);
    EXPECT_EQ(F::SysAllocStringLen(nullptr, 0x80000000u), nullptr); // * 2 wraps to 0
    EXPECT_EQ(F::SysAllocStringByteLen(nullptr, sta::max_bstr_bytes + 1), nullptr);
    EXPECT_EQ(F::SysAllocStringByteLen(nullptr, UINT_MAX), nullptr);
    BSTR b = F::SysAllocString(OL("keep"));
    EXPECT_EQ(F::SysReAllocStringLen(&b, nullptr, UINT_MAX), FALSE);
    EXPECT_EQ(F::SysReAllocStringLen(&b, nullptr, 0x80000000u), FALSE);
    EXPECT_EQ(F::SysReAllocStringByteLen(&b, nullptr, UINT_MAX), FALSE);
    EXPECT_EQ(text(b, F::SysStringLen(b)), OL("keep"));
    if constexpr (counted<F>) {
        EXPECT_EQ(heap::allocs, 1);
    }
    if constexpr (counted<F>) {
        EXPECT_EQ(heap::reallocs, 0);
    }
    F::SysFreeString(b);
}

// Guards the exact limit: the longest allowed string reaches the heap with the right,
// unwrapped block size, a pointer-sized header included (the heap refuses it here).
TYPED_TEST(Bstr, TheMaximumLengthIsAskedOfTheHeap) {
    FUNCTIONS;
    SKIP_UNLESS_COUNTED("out-of-memory cannot be injected into its allocator");
    heap::grants_left = 0;
    EXPECT_EQ(F::SysAllocStringLen(nullptr, sta::max_bstr_chars), nullptr);
    EXPECT_EQ(heap::last_request, sizeof(void*) + sta::max_bstr_bytes + 2);
    EXPECT_EQ(F::SysAllocStringByteLen(nullptr, sta::max_bstr_bytes - 1), nullptr);
    EXPECT_EQ(heap::last_request, sizeof(void*) + sta::max_bstr_bytes + 2);
}

// Guards injected out-of-memory: allocation returns NULL and nothing leaks.
TYPED_TEST(Bstr, RefusedAllocationGivesNull) {
    FUNCTIONS;
    SKIP_UNLESS_COUNTED("out-of-memory cannot be injected into its allocator");
    heap::grants_left = 0;
    EXPECT_EQ(F::SysAllocString(OL("x")), nullptr);
    EXPECT_EQ(F::SysAllocStringLen(OL("x"), 1), nullptr);
    EXPECT_EQ(F::SysAllocStringByteLen("x", 1), nullptr);
    BSTR b = nullptr;
    EXPECT_EQ(F::SysReAllocString(&b, OL("x")), FALSE);
    EXPECT_EQ(b, nullptr);
}

// Guards SysReAllocString: the string gets the new contents and layout.
TYPED_TEST(Bstr, ReAllocStringReplacesTheContents) {
    FUNCTIONS;
    BSTR b = F::SysAllocString(OL("Hello"));
    EXPECT_EQ(F::SysReAllocString(&b, OL("bye")), TRUE);
    EXPECT_EQ(layout_problem(b, 6), "");
    EXPECT_EQ(text(b, 3), OL("bye"));
    EXPECT_EQ(F::SysReAllocString(&b, OL("a longer string than before")), TRUE);
    EXPECT_EQ(text(b, F::SysStringLen(b)), OL("a longer string than before"));
    F::SysFreeString(b);
}

// Guards SysReAllocString(&b, NULL): an empty string, not a crash or NULL.
TYPED_TEST(Bstr, ReAllocStringOfNullSourceGivesEmpty) {
    FUNCTIONS;
    BSTR b = F::SysAllocString(OL("text"));
    EXPECT_EQ(F::SysReAllocString(&b, nullptr), TRUE);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(layout_problem(b, 0), "");
    F::SysFreeString(b);
}

// Guards reallocating a NULL BSTR: it is allocated.
TYPED_TEST(Bstr, ReAllocOfNullStringAllocates) {
    FUNCTIONS;
    BSTR b = nullptr;
    EXPECT_EQ(F::SysReAllocStringLen(&b, OL("abc"), 2), TRUE);
    EXPECT_EQ(layout_problem(b, 4), "");
    EXPECT_EQ(text(b, 2), OL("ab"));
    F::SysFreeString(b);
}

// Guards a NULL pbstr: FALSE (Windows would crash), nothing allocated.
TYPED_TEST(Bstr, ReAllocWithNullPbstrFails) {
    FUNCTIONS;
    EXPECT_EQ(F::SysReAllocString(nullptr, OL("x")), FALSE);
    EXPECT_EQ(F::SysReAllocStringLen(nullptr, OL("x"), 1), FALSE);
    if constexpr (counted<F>) {
        EXPECT_EQ(heap::allocs, 0);
    }
}

// Guards the shrink contract: the kept prefix is intact, and the pointer stays where
// the heap promises it (on spans, only within the class: 10 characters move).
TYPED_TEST(Bstr, ShrinkKeepsThePointer) {
    FUNCTIONS;
    SKIP_UNLESS_COUNTED("Microsoft doesn't promise that a shrunk string keeps its address");
    ostring big(5000, u'x');
    for (std::size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<OLECHAR>(u'a' + i % 26);
    BSTR b = F::SysAllocStringLen(big.data(), 5000);
    BSTR before = b;
    EXPECT_EQ(F::SysReAllocStringLen(&b, nullptr, 4500), TRUE); // 9 KiB, the same class
    EXPECT_EQ(b, before);
    EXPECT_EQ(F::SysReAllocStringLen(&b, nullptr, 10), TRUE);
    if constexpr (shrink_keeps_pointer<F>) {
        EXPECT_EQ(b, before);
    } else {
        EXPECT_NE(b, before);
    }
    EXPECT_EQ(layout_problem(b, 20), "");
    EXPECT_EQ(text(b, 10), big.substr(0, 10));
    F::SysFreeString(b);
}

// Guards that a shrink never fails, even when the heap refuses all memory.
TYPED_TEST(Bstr, ShrinkSucceedsWithoutMemory) {
    FUNCTIONS;
    SKIP_UNLESS_COUNTED("out-of-memory cannot be injected into its allocator");
    BSTR b = F::SysAllocString(OL("abcdefghijklmnopqrstuvwxyz"));
    heap::grants_left = 0;
    EXPECT_EQ(F::SysReAllocStringLen(&b, nullptr, 4), TRUE);
    EXPECT_EQ(text(b, F::SysStringLen(b)), OL("abcd"));
    EXPECT_EQ(F::SysReAllocString(&b, OL("xy")), TRUE);
    EXPECT_EQ(text(b, F::SysStringLen(b)), OL("xy"));
    F::SysFreeString(b);
}

// Guards SysReAllocStringLen(&b, NULL, n): growth keeps the old characters (SetLength
// relies on it) and terminates at the new length.
TYPED_TEST(Bstr, ReAllocWithNullSourceKeepsOldContents) {
    FUNCTIONS;
    BSTR b = F::SysAllocString(OL("prefix"));
    EXPECT_EQ(F::SysReAllocStringLen(&b, nullptr, 1000), TRUE);
    EXPECT_EQ(F::SysStringLen(b), 1000u);
    EXPECT_EQ(text(b, 6), OL("prefix"));
    EXPECT_EQ(b[1000], 0);
    F::SysFreeString(b);
}

// Guards a failed growth: FALSE, and the old string untouched (pointer and bytes).
TYPED_TEST(Bstr, FailedGrowthLeavesTheStringUntouched) {
    FUNCTIONS;
    SKIP_UNLESS_COUNTED("out-of-memory cannot be injected into its allocator");
    BSTR b = F::SysAllocString(OL("unchanged"));
    BSTR before = b;
    heap::grants_left = 0;
    EXPECT_EQ(F::SysReAllocStringLen(&b, nullptr, 100000), FALSE);
    EXPECT_EQ(F::SysReAllocString(&b, OL("a string that needs a larger block")), FALSE);
    EXPECT_EQ(F::SysReAllocStringByteLen(&b, nullptr, 4097), FALSE);
    EXPECT_EQ(b, before);
    EXPECT_EQ(layout_problem(b, 18), "");
    EXPECT_EQ(text(b, 9), OL("unchanged"));
    F::SysFreeString(b);
}

// Guards a source inside the string being reallocated: the substring, not garbage
// from a freed block (Microsoft warns of "unexpected results"; here it works).
TYPED_TEST(Bstr, ReAllocFromInsideTheStringGivesTheSubstring) {
    FUNCTIONS;
    BSTR b = F::SysAllocString(OL("0123456789"));
    EXPECT_EQ(F::SysReAllocStringLen(&b, b + 3, 4), TRUE);
    EXPECT_EQ(text(b, F::SysStringLen(b)), OL("3456"));
    EXPECT_EQ(F::SysReAllocString(&b, b + 1), TRUE);
    EXPECT_EQ(text(b, F::SysStringLen(b)), OL("456"));
    EXPECT_EQ(F::SysReAllocString(&b, b), TRUE);
    EXPECT_EQ(text(b, F::SysStringLen(b)), OL("456"));
    EXPECT_EQ(layout_problem(b, 6), "");
    F::SysFreeString(b);
}

// Guards an inside source that reads the old terminator too (length + 1 from the
// start): the block must not be freed before the copy.
TYPED_TEST(Bstr, ReAllocFromInsideIncludingTheTerminator) {
    FUNCTIONS;
    BSTR b = F::SysAllocString(OL("abc"));
    EXPECT_EQ(F::SysReAllocStringLen(&b, b, 4), TRUE);
    EXPECT_EQ(F::SysStringLen(b), 4u);
    EXPECT_EQ(text(b, 4), ostring(OL("abc\0"), 4));
    F::SysFreeString(b);
}

// Guards SysReAllocStringLen(&b, b, n) with n far past the string: the content stays,
// as on Windows, and n characters are not copied from a 4-character string.
TYPED_TEST(Bstr, ReAllocOfItselfToALongerLengthKeepsTheContent) {
    FUNCTIONS;
    BSTR b = F::SysAllocString(OL("Test"));
    ASSERT_EQ(F::SysReAllocStringLen(&b, b, 1000000), TRUE);
    EXPECT_EQ(F::SysStringLen(b), 1000000u);
    EXPECT_EQ(text(b, 4), OL("Test"));
    EXPECT_EQ(layout_problem(b, 2000000), "");
    ASSERT_EQ(F::SysReAllocString(&b, b), TRUE); // the zero-terminated twin: up to the NUL
    EXPECT_EQ(text(b, F::SysStringLen(b)), OL("Test"));
    F::SysFreeString(b);
}

// Guards the same-pointer rule across the heaps' size classes and tiers, growing and
// shrinking: every character that was there (up to the new length) stays.
TYPED_TEST(Bstr, ReAllocOfItselfKeepsTheContentAtEveryLength) {
    FUNCTIONS;
    BSTR b = F::SysAllocString(OL("seed"));
    ostring model = OL("seed");
    const unsigned lengths[] = {5,     7,      27,     28,    100,   1000, 16379, 16380, 20000,
                                70000, 300000, 100000, 20000, 16379, 3000, 10,    0,     6};
    for (const unsigned n : lengths) {
        ASSERT_EQ(F::SysReAllocStringLen(&b, b, n), TRUE) << n;
        ASSERT_EQ(layout_problem(b, n * 2), "") << n;
        const std::size_t kept = std::min<std::size_t>(model.size(), n);
        ASSERT_EQ(text(b, kept), model.substr(0, kept)) << n;
        model.resize(n);
        for (std::size_t k = kept; k < n; ++k) // the new tail is the caller's to fill
            b[k] = model[k] = static_cast<OLECHAR>(u'A' + k % 26);
    }
    F::SysFreeString(b);
}

// Guards the byte-wise extension with the same pointer: odd lengths, growing and
// shrinking, keep the bytes that were there.
TYPED_TEST(Bstr, ReAllocByteLenOfItselfKeepsTheBytes) {
    FUNCTIONS;
    BSTR b = F::SysAllocStringByteLen("abcde", 5);
    ASSERT_EQ(F::SysReAllocStringByteLen(&b, reinterpret_cast<const char*>(b), 40001), TRUE);
    EXPECT_EQ(layout_problem(b, 40001), "");
    EXPECT_EQ(std::memcmp(b, "abcde", 5), 0);
    ASSERT_EQ(F::SysReAllocStringByteLen(&b, reinterpret_cast<const char*>(b), 3), TRUE);
    EXPECT_EQ(layout_problem(b, 3), "");
    EXPECT_EQ(std::memcmp(b, "abc", 3), 0);
    F::SysFreeString(b);
}

// Guards a source inside the string but past its start, asked for more than is left:
// the bytes from it to the old terminator come first, nothing is read past the old
// block (ASan would see it), on a growth, an in-place shrink and a shrink that moves.
TYPED_TEST(Bstr, ReAllocFromInsideLongerThanTheRestKeepsWhatExists) {
    FUNCTIONS;
    BSTR b = F::SysAllocString(OL("0123456789"));
    ASSERT_EQ(F::SysReAllocStringLen(&b, b + 6, 50), TRUE); // growth
    EXPECT_EQ(layout_problem(b, 100), "");
    EXPECT_EQ(text(b, 5), ostring(OL("6789\0"), 5)); // the old terminator came along
    F::SysFreeString(b);

    ostring big(40000, u'x');
    for (std::size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<OLECHAR>(u'a' + i % 26);
    BSTR c = F::SysAllocStringLen(big.data(), 100);
    ASSERT_EQ(F::SysReAllocStringLen(&c, c + 95, 60), TRUE); // shrink in place
    EXPECT_EQ(layout_problem(c, 120), "");
    EXPECT_EQ(text(c, 6), big.substr(95, 5) + OLECHAR(0));
    F::SysFreeString(c);

    BSTR d = F::SysAllocStringLen(big.data(), 40000); // above 32 KiB: may move on shrink
    ASSERT_EQ(F::SysReAllocStringLen(&d, d + 39990, 20000), TRUE);
    EXPECT_EQ(layout_problem(d, 40000), "");
    EXPECT_EQ(text(d, 11), big.substr(39990, 10) + OLECHAR(0));
    F::SysFreeString(d);

    BSTR e = F::SysAllocStringByteLen("abcdefgh", 8);
    ASSERT_EQ(F::SysReAllocStringByteLen(&e, reinterpret_cast<const char*>(e) + 3, 1001), TRUE);
    EXPECT_EQ(layout_problem(e, 1001), "");
    EXPECT_EQ(std::memcmp(e, "defgh\0\0", 7), 0);
    ASSERT_EQ(F::SysReAllocStringByteLen(&e, reinterpret_cast<const char*>(e) + 1, 4), TRUE);
    EXPECT_EQ(layout_problem(e, 4), "");
    EXPECT_EQ(std::memcmp(e, "efgh", 4), 0);
    F::SysFreeString(e);
}

// Guards the Win64 alignment: every BSTR is aligned to sizeof(void*), for every length
// (character and odd byte lengths, pooled classes and the tiers above), after growth by
// reallocation and after shrinking.
TYPED_TEST(Bstr, EveryLengthIsPointerAligned) {
    FUNCTIONS;
    for (unsigned n = 0; n <= 4100; ++n) {
        BSTR a = F::SysAllocStringLen(nullptr, n);
        ASSERT_EQ(layout_problem(a, n * 2), "") << "SysAllocStringLen " << n;
        F::SysFreeString(a);
    }
    for (unsigned n = 0; n <= 8200; ++n) {
        BSTR a = F::SysAllocStringByteLen(nullptr, n);
        ASSERT_EQ(layout_problem(a, n), "") << "SysAllocStringByteLen " << n;
        F::SysFreeString(a);
    }
    for (const unsigned n : {32767u, 32768u, 40001u, 65536u, 100001u, 1u << 20, (1u << 20) + 3}) {
        BSTR a = F::SysAllocStringByteLen(nullptr, n);
        ASSERT_EQ(layout_problem(a, n), "") << "SysAllocStringByteLen " << n;
        F::SysFreeString(a);
    }
    BSTR b = F::SysAllocString(OL(""));
    for (unsigned n = 1; n <= 9000; ++n)
        ASSERT_EQ(F::SysReAllocStringByteLen(&b, nullptr, n), TRUE) << n;
    ASSERT_EQ(layout_problem(b, 9000), "");
    for (unsigned n = 9000; n-- > 0;) {
        ASSERT_EQ(F::SysReAllocStringByteLen(&b, nullptr, n), TRUE) << n;
        ASSERT_EQ(layout_problem(b, n), "") << "shrunk to " << n;
    }
    for (unsigned n = 1; n <= 5000; ++n) {
        ASSERT_EQ(F::SysReAllocStringLen(&b, nullptr, n * 7), TRUE) << n;
        ASSERT_EQ(layout_problem(b, n * 14), "") << "grown to " << n * 7;
    }
    F::SysFreeString(b);
}

// Guards the growth path: repeated reallocation never allocates a second block.
TYPED_TEST(Bstr, GrowthReallocatesInsteadOfAllocating) {
    FUNCTIONS;
    BSTR b = F::SysAllocString(OL(""));
    for (unsigned n = 1; n <= 3000; ++n) {
        ASSERT_EQ(F::SysReAllocStringLen(&b, nullptr, n), TRUE);
        b[n - 1] = static_cast<OLECHAR>(n);
    }
    if constexpr (counted<F>) {
        EXPECT_EQ(heap::allocs, 1);
    }
    if constexpr (counted<F>) {
        EXPECT_EQ(heap::frees, 0);
    }
    for (unsigned n = 1; n <= 3000; ++n)
        ASSERT_EQ(b[n - 1], static_cast<OLECHAR>(n));
    F::SysFreeString(b);
}

// The backbone: a seeded random walk of every function on several strings, each
// checked against a ostring model (odd byte lengths modelled as bytes).
TYPED_TEST(Bstr, RandomWalkMatchesTheModel) {
    FUNCTIONS;
    std::mt19937 rng(20240605);
    constexpr int strings = 8;
    std::vector<BSTR> s(strings, nullptr);
    std::vector<std::string> model(strings); // bytes
    std::vector<bool> is_null(strings, true);
    auto pick = [&](unsigned n) { return static_cast<unsigned>(rng() % n); };
    auto random_bytes = [&](unsigned n) {
        std::string out(n, '\0');
        for (auto& c : out)
            c = static_cast<char>(pick(4) == 0 ? 0 : 'a' + pick(26));
        return out;
    };
    for (int step = 0; step < 4000; ++step) {
        const unsigned i = pick(strings);
        const unsigned len = pick(5) == 0 ? pick(20000) : pick(40);
        switch (pick(6)) {
        case 0: { // SysAllocStringLen from outside
            const std::string src = random_bytes(len * 2);
            F::SysFreeString(s[i]);
            s[i] = F::SysAllocStringLen(reinterpret_cast<const OLECHAR*>(src.data()), len);
            model[i] = src, is_null[i] = false;
            break;
        }
        case 1: { // SysAllocStringByteLen, odd lengths too
            const std::string src = random_bytes(len);
            F::SysFreeString(s[i]);
            s[i] = F::SysAllocStringByteLen(src.data(), len);
            model[i] = src, is_null[i] = false;
            break;
        }
        case 2: { // SysReAllocStringLen with NULL: keep, grow or shrink
            if (F::SysReAllocStringLen(&s[i], nullptr, len) == FALSE)
                break;
            const std::size_t keep = std::min<std::size_t>(model[i].size(), len * 2);
            std::string next = model[i].substr(0, keep);
            next.resize(len * 2, '\0');
            for (std::size_t k = keep; k < next.size(); ++k)
                reinterpret_cast<char*>(s[i])[k] = next[k] = static_cast<char>('A' + k % 26);
            model[i] = next, is_null[i] = false;
            break;
        }
        case 3: { // from inside itself, the same pointer too, asked for up to `len` more
            if (is_null[i])
                break;
            const std::size_t chars = model[i].size() / 2;
            const std::size_t from = pick(static_cast<unsigned>(chars + 1)); // up to the NUL
            const std::size_t n =
                pick(3) == 0 ? len : pick(static_cast<unsigned>(chars - from + 1));
            ASSERT_EQ(F::SysReAllocStringLen(&s[i], s[i] + from, static_cast<unsigned>(n)), TRUE);
            // What exists from the source on: the data, the pad byte, the terminator.
            std::string old = model[i];
            old.resize(old.size() + (old.size() & 1) + 2, '\0');
            std::string next = old.substr(from * 2, std::min(n * 2, old.size() - from * 2));
            const std::size_t kept = next.size();
            next.resize(n * 2, '\0');
            for (std::size_t k = kept; k < next.size(); ++k) // the uninitialised tail
                reinterpret_cast<char*>(s[i])[k] = next[k] = static_cast<char>('a' + k % 26);
            model[i] = next;
            break;
        }
        case 4: { // SysReAllocStringByteLen from another string
            const unsigned j = pick(strings);
            if (is_null[j] || j == i)
                break;
            ASSERT_EQ(F::SysReAllocStringByteLen(&s[i], reinterpret_cast<const char*>(s[j]),
                                                 F::SysStringByteLen(s[j])),
                      TRUE);
            model[i] = model[j], is_null[i] = false;
            break;
        }
        default:
            F::SysFreeString(s[i]);
            s[i] = nullptr, model[i].clear(), is_null[i] = true;
        }
        ASSERT_EQ(s[i] == nullptr, is_null[i]) << "step " << step;
        if (s[i] != nullptr) {
            const auto bytes = static_cast<std::uint32_t>(model[i].size());
            ASSERT_EQ(layout_problem(s[i], bytes), "") << "step " << step;
            ASSERT_EQ(std::memcmp(s[i], model[i].data(), bytes), 0) << "step " << step;
        }
    }
    for (BSTR b : s)
        F::SysFreeString(b);
}

// ---------------------------------------------------------------------------------
// The pool heap on its own.
// ---------------------------------------------------------------------------------

// Guards that the pool's own out-of-memory (a refused page) reaches the caller as
// FALSE with the string intact.
TEST(BstrPool, RefusedPageLeavesTheStringIntact) {
    struct tag {};
    using pool = sta::basic_memory_pool<sta::dispatch::default_policy, tag>;
    using F = sta::bstr_functions<sta::bstr_heap::pool<pool>>;
    using pages = limited_pages<tag>;
    pages::budget = 1;
    pool::detail_state().map_pages = &pages::map;
    pool::set_page_bytes(256 * 1024);
    BSTR b = F::SysAllocString(OL("intact"));
    void* blocker = pool::alloc(16); // b is no longer the last block bumped
    std::vector<void*> fill;
    while (void* p = pool::alloc(32768)) // until the page source refuses
        fill.push_back(p);
    BSTR before = b;
    EXPECT_EQ(F::SysReAllocStringLen(&b, nullptr, 16000), FALSE); // needs 32 KiB
    EXPECT_EQ(b, before);
    EXPECT_EQ(layout_problem(b, 12), "");
    EXPECT_EQ(text(b, 6), OL("intact"));
    EXPECT_EQ(F::SysReAllocStringLen(&b, nullptr, 2), TRUE); // a shrink still works
    if constexpr (std::is_same_v<pool::layout_policy, sta::layout::shared_cursor>) {
        EXPECT_EQ(b, before);
    }
    F::SysFreeString(b);
    pool::free(blocker, 16);
    for (void* p : fill)
        pool::free(p, 32768);
}

// Guards "no extra header": a pool BSTR's block is exactly the pointer-sized header +
// data + terminator, starting one pointer before the string, so the free with the
// derived size puts it back in the right class.
TEST(BstrPool, FreedBlockComesBackForTheSameSize) {
    struct tag {};
    using pool = sta::basic_memory_pool<sta::dispatch::default_policy, tag>;
    using F = sta::bstr_functions<sta::bstr_heap::pool<pool>>;
    constexpr unsigned chars = (64 - sizeof(void*) - 2) / 2; // header + data + NUL = 64 B
    BSTR a = F::SysAllocStringLen(nullptr, chars);
    void* block = reinterpret_cast<char*>(a) - sizeof(void*);
    F::SysFreeString(a);
    EXPECT_EQ(pool::alloc(64), block);
    pool::free(block, 64);
}

#if defined(_WIN32)
// ---------------------------------------------------------------------------------
// oleaut32 itself (Windows): the documented behaviour the wrapper relies on, and what
// it adds in front of it.
// ---------------------------------------------------------------------------------

// Guards what Microsoft documents for oleaut32's own functions and the wrapper
// forwards untouched: NULL versus empty, the layout, the extra zero of an odd byte
// length (wine 8 agrees on all of it).
TEST(Oleaut32, RawFunctionsFollowTheDocumentation) {
    EXPECT_EQ(::SysAllocString(nullptr), nullptr);
    BSTR empty = ::SysAllocString(L"");
    EXPECT_EQ(layout_problem(empty, 0), "");
    ::SysFreeString(empty);
    BSTR odd = ::SysAllocStringByteLen("abc", 3);
    EXPECT_EQ(layout_problem(odd, 3), "");
    EXPECT_EQ(::SysStringLen(odd), 1u);
    EXPECT_EQ(std::memcmp(odd, "abc", 4), 0);
    ::SysFreeString(odd);
    EXPECT_EQ(::SysStringLen(nullptr), 0u);
    EXPECT_EQ(::SysStringByteLen(nullptr), 0u);
    BSTR b = ::SysAllocString(L"prefix");
    ASSERT_EQ(::SysReAllocStringLen(&b, nullptr, 100), TRUE);
    EXPECT_EQ(text(b, 6), L"prefix"); // a NULL source keeps the old characters
    ::SysFreeString(b);
}

// Guards the oleaut32 rules the portable heaps copy: its own SysReAllocStringLen(&b, b,
// n) keeps the content for n past the end, and its strings are aligned to a pointer at
// every length (the Win64 header: a pad word, then the byte count).
TEST(Oleaut32, RawSamePointerReallocAndAlignment) {
    BSTR b = ::SysAllocString(L"Test");
    ASSERT_EQ(::SysReAllocStringLen(&b, b, 100000), TRUE);
    EXPECT_EQ(layout_problem(b, 200000), "");
    EXPECT_EQ(text(b, 4), L"Test");
    ::SysFreeString(b);
    for (unsigned n = 0; n <= 4100; ++n) {
        BSTR a = ::SysAllocStringByteLen(nullptr, n);
        ASSERT_EQ(layout_problem(a, n), "") << n;
        ::SysFreeString(a);
    }
}

// Guards the wrapper's additions on top of oleaut32, where oleaut32 itself is
// undocumented or breaks: SysReAllocString(&b, NULL) is empty (wine 8's own gives NULL:
// it frees the string and returns SysAllocString(NULL)); a NULL pbstr is FALSE (Windows
// and wine crash); an over-long length is NULL (wine 8's SysAllocStringLen(NULL,
// 0x7FFFFFF8) overflows its size computation and crashes in memset).
TEST(Oleaut32, WrapperAddsTheStaGuarantees) {
    using W = sta::oleaut32_bstr_functions;
    BSTR b = W::SysAllocString(L"text");
    EXPECT_EQ(W::SysReAllocString(&b, nullptr), TRUE);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(layout_problem(b, 0), "");
    EXPECT_EQ(W::SysReAllocString(nullptr, L"x"), FALSE);
    EXPECT_EQ(W::SysAllocStringLen(nullptr, 0x7FFFFFF8u), nullptr);
    EXPECT_EQ(W::SysReAllocStringLen(&b, nullptr, 0x7FFFFFF8u), FALSE);
    W::SysFreeString(b);
    if (under_wine()) {
        // wine 8's own SysReAllocString(&b, NULL): TRUE and NULL (Windows: undocumented).
        BSTR raw = ::SysAllocString(L"text");
        EXPECT_EQ(::SysReAllocString(&raw, nullptr), TRUE);
        EXPECT_EQ(raw, nullptr);
    }
}

// Guards growth from a source inside the string on oleaut32: Microsoft warns of
// "unexpected results", wine 8 reads the source after CoTaskMemRealloc has moved the
// block; the wrapper copies to a new string first.
TEST(Oleaut32, WrapperCopiesAnInsideSourceFirst) {
    using W = sta::oleaut32_bstr_functions;
    BSTR b = W::SysAllocString(L"0123456789");
    ASSERT_EQ(W::SysReAllocStringLen(&b, b + 2, 4000), TRUE);
    EXPECT_EQ(text(b, 8), L"23456789");
    ASSERT_EQ(W::SysReAllocString(&b, b + 1), TRUE);
    EXPECT_EQ(text(b, 7), L"3456789");
    W::SysFreeString(b);
}
#endif

// ---------------------------------------------------------------------------------
// The plain names.
// ---------------------------------------------------------------------------------

// Guards the plain sta::Sys* names: they work and agree with each other (this file is
// built twice: STA_BSTR_POOL=0 and =1).
TEST(BstrDefault, PlainNamesRoundTrip) {
    BSTR b = sta::SysAllocString(OL("plain"));
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(sta::SysStringLen(b), 5u);
    EXPECT_EQ(sta::SysReAllocString(&b, OL("plainer")), TRUE);
    EXPECT_EQ(sta::SysReAllocStringLen(&b, b, 5), TRUE);
    EXPECT_EQ(text(b, sta::SysStringLen(b)), OL("plain"));
    EXPECT_EQ(sta::SysStringByteLen(b), 10u);
    sta::SysFreeString(b);
    BSTR c = sta::SysAllocStringLen(OL("ab"), 1);
    BSTR d = sta::SysAllocStringByteLen("xyz", 3);
    EXPECT_EQ(layout_problem(c, 2), "");
    EXPECT_EQ(layout_problem(d, 3), "");
    sta::SysFreeString(c);
    sta::SysFreeString(d);
#if defined(_WIN32) // oleaut32, whatever STA_BSTR_POOL says
    EXPECT_TRUE((std::is_same_v<sta::default_bstr_functions, sta::oleaut32_bstr_functions>));
#elif STA_BSTR_POOL
    EXPECT_TRUE(
        (std::is_same_v<sta::default_bstr_functions, sta::bstr_functions<sta::bstr_heap::pool<>>>));
#else
    EXPECT_TRUE(
        (std::is_same_v<sta::default_bstr_functions, sta::bstr_functions<sta::bstr_heap::system>>));
#endif
}

} // namespace
