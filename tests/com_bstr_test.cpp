// sta/com_bstr.hpp: sta::CComBSTR against ATL's documented results and HRESULTs, on
// two variants (see support/bstr_test_support.hpp): Linux: the system and pool heaps, each
// wrapped in a counting heap that can refuse memory (the fixture fails a test that
// leaks a block); Windows: oleaut32 (neither counted nor refusable) and the pool heap.
// Narrow strings are UTF-8 on Linux and the ANSI code page on Windows, and comparisons
// are ordinal on Linux and VarBstrCmp's (linguistic) on Windows: the tests say which.
#include "sta/com_bstr.hpp"
#include "support/bstr_test_support.hpp"

#include <climits>
#include <memory>
#include <string>

namespace {
using namespace sta_test;
using sta::BSTR;
using sta::HRESULT;
using sta::OLECHAR;
#if !defined(_WIN32) // on Windows these are the SDK's macros
using sta::E_INVALIDARG;
using sta::E_OUTOFMEMORY;
using sta::E_POINTER;
using sta::ERROR_ARITHMETIC_OVERFLOW;
using sta::HRESULT_FROM_WIN32;
using sta::S_OK;
using sta::TRUE;
#endif

template <class F>
class ComBstr : public bstr_fixture<F> {};
TYPED_TEST_SUITE(ComBstr, bstr_variants, bstr_variant_names);

#define SETUP                                                                                      \
    using F = TypeParam;                                                                           \
    using heap = typename F::heap;                                                                 \
    using S = sta::basic_com_bstr<F>;                                                              \
    static_assert(sizeof(S) == sizeof(BSTR));                                                      \
    (void)sizeof(heap)

template <class S>
ostring str(const S& s) {
    return text(s.m_str, s.Length());
}
template <class S>
std::string bytes(const S& s) {
    return s.m_str == nullptr ? std::string()
                              : std::string(reinterpret_cast<const char*>(s.m_str), s.ByteLength());
}

/// The HRESULT a throwing member threw, or S_OK.
template <class Fn>
HRESULT thrown(Fn&& fn) {
    try {
        fn();
    } catch (const sta::CAtlException& e) {
        return e;
    }
    return S_OK;
}

const HRESULT arithmetic_overflow = HRESULT_FROM_WIN32(ERROR_ARITHMETIC_OVERFLOW);

// Guards the drop-in size: code that casts CComBSTR* to BSTR* relies on it.
TYPED_TEST(ComBstr, IsExactlyOneBstr) {
    SETUP;
    static_assert(sizeof(S) == sizeof(BSTR));
    static_assert(sizeof(sta::CComBSTR) == sizeof(BSTR));
    S s(OL("x"));
    EXPECT_EQ(*reinterpret_cast<BSTR*>(std::addressof(s)), s.m_str);
}

// Guards the NULL constructors: default, 0, (0, ptr) and a NULL source all give NULL.
TYPED_TEST(ComBstr, ConstructorsThatGiveNull) {
    SETUP;
    EXPECT_EQ(S().m_str, nullptr);
    EXPECT_EQ(S(0).m_str, nullptr);
    EXPECT_EQ(S(0, OL("abc")).m_str, nullptr);
    EXPECT_EQ(S(0, "abc").m_str, nullptr);
    EXPECT_EQ(S(static_cast<sta::LPCOLESTR>(nullptr)).m_str, nullptr);
    EXPECT_EQ(S(static_cast<sta::LPCSTR>(nullptr)).m_str, nullptr);
    EXPECT_EQ(S(nullptr).m_str, nullptr);
    if constexpr (counted<F>) {
        EXPECT_EQ(heap::allocs, 0);
    }
}

// Guards NULL versus empty: an empty literal gives a non-NULL empty string.
TYPED_TEST(ComBstr, EmptyLiteralGivesEmptyNotNull) {
    SETUP;
    S a(OL(""));
    S b("");
    ASSERT_NE(a.m_str, nullptr);
    ASSERT_NE(b.m_str, nullptr);
    EXPECT_EQ(a.Length(), 0u);
    EXPECT_EQ(b.ByteLength(), 0u);
}

// Guards CComBSTR(int): n characters, and E_INVALIDARG for a negative size.
TYPED_TEST(ComBstr, SizeConstructor) {
    SETUP;
    S s(5);
    EXPECT_EQ(s.Length(), 5u);
    EXPECT_EQ(layout_problem(s.m_str, 10), "");
    EXPECT_EQ(thrown([] { S bad(-1); }), E_INVALIDARG);
    EXPECT_EQ(thrown([] { S bad(-1, OL("x")); }), E_INVALIDARG);
    EXPECT_EQ(thrown([] { S bad(-1, "x"); }), E_INVALIDARG);
}

// Guards CComBSTR(int, LPCOLESTR): exactly n characters, embedded NULs included.
TYPED_TEST(ComBstr, CountedConstructorKeepsEmbeddedNuls) {
    SETUP;
    const OLECHAR src[] = {u'a', 0, u'b', u'c'};
    S s(4, src);
    EXPECT_EQ(str(s), ostring(src, 4));
#if !defined(_WIN32)
    S t(2, "h\xC3\xA9llo"); // the first two bytes of UTF-8: 'h' and a cut sequence
    EXPECT_EQ(str(t), OL("h\uFFFD"));
#else
    S t(2, "hello"); // the ANSI code page: ASCII is the same everywhere
    EXPECT_EQ(str(t), OL("he"));
#endif
}

// Guards the narrow constructor: UTF-8 to UTF-16, surrogate pairs, bad bytes to U+FFFD.
// (Windows: the ANSI code page, as ATL; see NarrowStringIsAnsiOnWindows.)
TYPED_TEST(ComBstr, NarrowStringIsUtf8) {
    SETUP;
#if defined(_WIN32)
    GTEST_SKIP() << "Windows converts narrow strings from the ANSI code page, not UTF-8";
#endif
    S s("h\xC3\xA9llo \xE2\x82\xAC\xF0\x9D\x84\x9E");
    EXPECT_EQ(str(s), OL("h\u00E9llo \u20AC\U0001D11E"));
    S bad("a\xFF"
          "b\xC0\xAF"
          "c\xED\xA0\x80");
    EXPECT_EQ(str(bad), OL("a\uFFFDb\uFFFD\uFFFDc\uFFFD")); // a surrogate: one U+FFFD
}

#if defined(_WIN32)
// Guards the narrow constructor on Windows: MultiByteToWideChar(CP_ACP), as ATL.
TYPED_TEST(ComBstr, NarrowStringIsAnsiOnWindows) {
    SETUP;
    EXPECT_EQ(str(S("plain ASCII")), OL("plain ASCII"));
    if (::GetACP() != 1252)
        GTEST_SKIP() << "the rest assumes code page 1252 (this machine has " << ::GetACP() << ")";
    EXPECT_EQ(str(S("h\xE9llo \x80")), OL("h\u00E9llo \u20AC")); // 0x80 is the euro in 1252
}
#endif

// Guards the copy constructor: an independent copy with the same byte length, odd too.
TYPED_TEST(ComBstr, CopyKeepsTheByteLength) {
    SETUP;
    S odd;
    odd.Attach(F::SysAllocStringByteLen("abc", 3));
    S copy(odd);
    EXPECT_NE(copy.m_str, odd.m_str);
    EXPECT_EQ(copy.ByteLength(), 3u);
    EXPECT_EQ(bytes(copy), "abc");
    S null_copy{S()};
    EXPECT_EQ(null_copy.m_str, nullptr);
}

// Guards the throwing members under out-of-memory: E_OUTOFMEMORY as ATL.
TYPED_TEST(ComBstr, ConstructorsThrowOutOfMemory) {
    SETUP;
    SKIP_UNLESS_COUNTED("out-of-memory cannot be injected into its allocator");
    S src(OL("source"));
    heap::grants_left = 0;
    EXPECT_EQ(thrown([] { S s(OL("x")); }), E_OUTOFMEMORY);
    EXPECT_EQ(thrown([] { S s("x"); }), E_OUTOFMEMORY);
    EXPECT_EQ(thrown([] { S s(3); }), E_OUTOFMEMORY);
    EXPECT_EQ(thrown([&] { S s(src); }), E_OUTOFMEMORY);
}

// Guards the move operations: ownership moves, the source becomes NULL, no copy.
TYPED_TEST(ComBstr, MoveTransfersOwnership) {
    SETUP;
    S a(OL("moved"));
    BSTR p = a.m_str;
    S b(std::move(a));
    EXPECT_EQ(b.m_str, p);
    EXPECT_EQ(a.m_str, nullptr);
    S c(OL("old"));
    c = std::move(b);
    EXPECT_EQ(c.m_str, p);
    EXPECT_EQ(b.m_str, nullptr);
    if constexpr (counted<F>) {
        EXPECT_EQ(heap::allocs, 2);
    }
}

// Guards copy assignment: same contents, self-assignment harmless, NULL gives NULL,
// and an assignment that fits reuses the block where the heap's shrink keeps it.
TYPED_TEST(ComBstr, CopyAssignment) {
    SETUP;
    S a(OL("a fairly long string"));
    S b(OL("short"));
    BSTR block = a.m_str;
    a = b;
    EXPECT_EQ(str(a), OL("short"));
    if constexpr (shrink_keeps_pointer<F>) {
        EXPECT_EQ(a.m_str, block);
    }
    S& alias = a;
    a = alias;
    EXPECT_EQ(str(a), OL("short"));
    a = S();
    EXPECT_EQ(a.m_str, nullptr);
}

// Guards the strong guarantee: a failed assignment throws and leaves the old string.
TYPED_TEST(ComBstr, FailedAssignmentKeepsTheOldString) {
    SETUP;
    SKIP_UNLESS_COUNTED("out-of-memory cannot be injected into its allocator");
    S a(OL("old"));
    S big(2000);
    heap::grants_left = 0;
    EXPECT_EQ(thrown([&] { a = big; }), E_OUTOFMEMORY);
    EXPECT_EQ(str(a), OL("old"));
    EXPECT_EQ(thrown([&] { a = OL("a string longer than the block"); }), E_OUTOFMEMORY);
    EXPECT_EQ(str(a), OL("old"));
    EXPECT_EQ(thrown([&] { a = "a narrow string longer than the block"; }), E_OUTOFMEMORY);
    EXPECT_EQ(str(a), OL("old"));
    EXPECT_EQ(a.AssignBSTR(big.m_str), E_OUTOFMEMORY);
    EXPECT_EQ(str(a), OL("old"));
}

// Guards assignment from a pointer: NULL empties, its own tail works (ATL frees first).
TYPED_TEST(ComBstr, AssignFromPointer) {
    SETUP;
    S s(OL("0123456789"));
    s = s.m_str + 4;
    EXPECT_EQ(str(s), OL("456789"));
    s = s.m_str;
    EXPECT_EQ(str(s), OL("456789"));
#if !defined(_WIN32)
    s = "na\xC3\xAFve";
    EXPECT_EQ(str(s), OL("na\u00EFve"));
#else
    s = "naive"; // the ANSI code page
    EXPECT_EQ(str(s), OL("naive"));
#endif
    s = static_cast<sta::LPCOLESTR>(nullptr);
    EXPECT_EQ(s.m_str, nullptr);
    s = "";
    ASSERT_NE(s.m_str, nullptr);
    EXPECT_EQ(s.Length(), 0u);
    s = nullptr;
    EXPECT_EQ(s.m_str, nullptr);
}

// Guards AssignBSTR: byte-exact (odd length kept), NULL gives NULL, S_OK.
TYPED_TEST(ComBstr, AssignBstrIsByteExact) {
    SETUP;
    S odd;
    odd.Attach(F::SysAllocStringByteLen("hello", 5));
    S s(OL("x"));
    EXPECT_EQ(s.AssignBSTR(odd.m_str), S_OK);
    EXPECT_EQ(bytes(s), "hello");
    EXPECT_EQ(layout_problem(s.m_str, 5), "");
    EXPECT_EQ(s.AssignBSTR(nullptr), S_OK);
    EXPECT_EQ(s.m_str, nullptr);
}

// Guards Append(p, n)'s edge results: NULL source, negative length, zero length on NULL
// (makes it empty) and on non-NULL (no change).
TYPED_TEST(ComBstr, AppendCountedEdgeCases) {
    SETUP;
    S s;
    EXPECT_EQ(s.Append(static_cast<sta::LPCOLESTR>(nullptr), 5), S_OK);
    EXPECT_EQ(s.m_str, nullptr);
    EXPECT_EQ(s.Append(OL("abc"), -1), E_INVALIDARG);
    EXPECT_EQ(s.m_str, nullptr);
    EXPECT_EQ(s.Append(OL("abc"), 0), S_OK);
    ASSERT_NE(s.m_str, nullptr);
    EXPECT_EQ(s.Length(), 0u);
    BSTR p = s.m_str;
    EXPECT_EQ(s.Append(OL("abc"), 0), S_OK);
    EXPECT_EQ(s.m_str, p);
    const OLECHAR nul_inside[] = {u'x', 0, u'y'};
    EXPECT_EQ(s.Append(nul_inside, 3), S_OK);
    EXPECT_EQ(str(s), ostring(nul_inside, 3));
}

// Guards the zero-terminated overloads: NULL and "" leave a NULL string NULL, OL("") does
// not (it goes through Append(p, 0)).
TYPED_TEST(ComBstr, AppendZeroTerminated) {
    SETUP;
    S s;
    EXPECT_EQ(s.Append(static_cast<sta::LPCOLESTR>(nullptr)), S_OK);
    EXPECT_EQ(s.Append(static_cast<sta::LPCSTR>(nullptr)), S_OK);
    EXPECT_EQ(s.Append(""), S_OK);
    EXPECT_EQ(s.m_str, nullptr);
    EXPECT_EQ(s.Append(OL("")), S_OK);
    EXPECT_NE(s.m_str, nullptr);
    EXPECT_EQ(s.Append(OL("wide ")), S_OK);
#if !defined(_WIN32)
    EXPECT_EQ(s.Append("n\xC3\xA4rrow"), S_OK);
    EXPECT_EQ(str(s), OL("wide n\u00E4rrow"));
#else
    EXPECT_EQ(s.Append("narrow"), S_OK); // the ANSI code page
    EXPECT_EQ(str(s), OL("wide narrow"));
#endif
}

// Guards the character overloads: char widens as ATL (sign and all); on Linux wchar_t
// encodes a code point (a surrogate pair above U+FFFF), on Windows it is OLECHAR.
TYPED_TEST(ComBstr, AppendCharacters) {
    SETUP;
    S s;
    EXPECT_EQ(s.Append('a'), S_OK);
    EXPECT_EQ(s.Append(static_cast<OLECHAR>(u'b')), S_OK);
    EXPECT_EQ(s.Append(static_cast<char>(0xE9)), S_OK);
#if !defined(_WIN32)
    EXPECT_EQ(s.Append(L'\U0001F600'), S_OK);
    EXPECT_EQ(s.Append(L'\u00FC'), S_OK);
    EXPECT_EQ(str(s), OL("ab\uFFE9\U0001F600\u00FC"));
#else
    EXPECT_EQ(s.Append(L'\u00FC'), S_OK);
    EXPECT_EQ(str(s), OL("ab\uFFE9\u00FC"));
#endif
}

// Guards AppendBSTR: byte-wise (odd lengths kept), and a BSTR with no whole character
// (NULL, empty, 1 byte) appends nothing, as ATL.
TYPED_TEST(ComBstr, AppendBstrIsByteWise) {
    SETUP;
    S s(OL("ab"));
    S one_byte;
    one_byte.Attach(F::SysAllocStringByteLen("z", 1));
    EXPECT_EQ(s.AppendBSTR(nullptr), S_OK);
    EXPECT_EQ(s.AppendBSTR(S(OL("")).m_str), S_OK);
    EXPECT_EQ(s.AppendBSTR(one_byte.m_str), S_OK);
    EXPECT_EQ(s.ByteLength(), 4u);
    S three;
    three.Attach(F::SysAllocStringByteLen("xyz", 3));
    EXPECT_EQ(s.AppendBSTR(three.m_str), S_OK);
    EXPECT_EQ(s.ByteLength(), 7u);
    EXPECT_EQ(bytes(s), std::string("a\0b\0xyz", 7));
    EXPECT_EQ(layout_problem(s.m_str, 7), "");
    S empty;
    EXPECT_EQ(empty.Append(three), S_OK);
    EXPECT_EQ(bytes(empty), "xyz");
}

// Guards AppendBytes: NULL / 0 do nothing, negative is E_INVALIDARG, odd lengths kept.
TYPED_TEST(ComBstr, AppendBytes) {
    SETUP;
    S s;
    EXPECT_EQ(s.AppendBytes(nullptr, 3), S_OK);
    EXPECT_EQ(s.AppendBytes("abc", 0), S_OK);
    EXPECT_EQ(s.m_str, nullptr);
    EXPECT_EQ(s.AppendBytes("abc", -2), E_INVALIDARG);
    EXPECT_EQ(s.AppendBytes("abc", 3), S_OK);
    EXPECT_EQ(s.AppendBytes("d\0e", 3), S_OK);
    EXPECT_EQ(bytes(s), std::string("abcd\0e", 6));
    EXPECT_EQ(s.AppendBytes("f", 1), S_OK);
    EXPECT_EQ(layout_problem(s.m_str, 7), "");
    EXPECT_EQ(s.Length(), 3u);
}

// Guards the counted overloads against sizes that overflow ATL's arithmetic: the
// HRESULTs of AtlAdd / AtlMultiply, and of the allocation beyond the maximum.
TYPED_TEST(ComBstr, LengthsThatOverflowFailCleanly) {
    SETUP;
    S s(OL("abc"));
    EXPECT_EQ(s.Append(OL("x"), INT_MAX), arithmetic_overflow);
    EXPECT_EQ(str(s), OL("abc"));
    S null_string;
    EXPECT_EQ(null_string.Append(OL("x"), INT_MAX), E_OUTOFMEMORY);
    EXPECT_EQ(null_string.m_str, nullptr);
    EXPECT_EQ(s.AppendBytes("x", INT_MAX), E_OUTOFMEMORY);
    EXPECT_EQ(str(s), OL("abc"));
    EXPECT_EQ(s.SetLength(UINT_MAX), E_OUTOFMEMORY);
    EXPECT_EQ(str(s), OL("abc"));
    if constexpr (counted<F>) {
        EXPECT_EQ(heap::reallocs, 0);
    }
}

// Guards every append flavour under out-of-memory: E_OUTOFMEMORY (or a throw of it)
// and the string exactly as it was (ATL would have freed nothing either, but through
// allocate + copy + free).
TYPED_TEST(ComBstr, FailedAppendLeavesTheStringUnchanged) {
    SETUP;
    SKIP_UNLESS_COUNTED("out-of-memory cannot be injected into its allocator");
    S s(OL("kept"));
    S long_src(4096);
    BSTR before = s.m_str;
    heap::grants_left = 0;
    const ostring more(4000, u'm');
    EXPECT_EQ(s.Append(more.c_str()), E_OUTOFMEMORY);
    EXPECT_EQ(s.Append(more.c_str(), 4000), E_OUTOFMEMORY);
    EXPECT_EQ(s.Append(long_src), E_OUTOFMEMORY);
    EXPECT_EQ(s.AppendBSTR(long_src.m_str), E_OUTOFMEMORY);
    EXPECT_EQ(s.AppendBytes(reinterpret_cast<const char*>(long_src.m_str), 8191), E_OUTOFMEMORY);
    EXPECT_EQ(s.Append(std::string(5000, 'n').c_str()), E_OUTOFMEMORY);
    EXPECT_EQ(s.SetLength(5000), E_OUTOFMEMORY);
    EXPECT_EQ(thrown([&] { s += more.c_str(); }), E_OUTOFMEMORY);
    EXPECT_EQ(thrown([&] { s += long_src; }), E_OUTOFMEMORY);
    EXPECT_EQ(s.m_str, before);
    EXPECT_EQ(str(s), OL("kept"));
    EXPECT_EQ(layout_problem(s.m_str, 8), "");
}

// Guards the seed's point: appends grow the one block by reallocation, never
// allocate + copy + free.
TYPED_TEST(ComBstr, AppendsReallocateTheOneBlock) {
    SETUP;
    S s;
    ostring model;
    for (int xy = 3000; xy > 0; --xy) {
        const OLECHAR* piece = xy % 2 == 0 ? OL("hiya") : OL("bye");
        ASSERT_EQ(s.Append(piece), S_OK);
        model += piece;
    }
    s += OL("!");
    ASSERT_EQ(s.AppendBytes("!\0", 2), S_OK);
    ASSERT_EQ(s.Append(S(OL("?"))), S_OK);
    model += OL("!!?");
    EXPECT_EQ(str(s), model);
    if constexpr (counted<F>) {
        EXPECT_EQ(heap::allocs, 2); // the string, and the temporary S(OL("?"))
    }
    if constexpr (counted<F>) {
        EXPECT_EQ(heap::frees, 1); // the temporary
    }
}

// Guards s.Append(s) over many doublings: the source is the block being grown.
TYPED_TEST(ComBstr, SelfAppendDoublesAgainstTheModel) {
    SETUP;
    S s(OL("ab\u00E9"));
    ostring model = OL("ab\u00E9");
    for (int i = 0; i < 15; ++i) { // 3 * 2^15 characters: well past 32 KiB
        ASSERT_EQ(s.Append(s), S_OK);
        model += model;
        ASSERT_EQ(str(s), model) << "doubling " << i;
    }
    EXPECT_EQ(layout_problem(s.m_str, static_cast<std::uint32_t>(model.size() * 2)), "");
}

// Guards s += s.m_str over many doublings (the zero-terminated overload, inside source).
TYPED_TEST(ComBstr, SelfPlusEqualsDoublesAgainstTheModel) {
    SETUP;
    S s(OL("xyz"));
    ostring model = OL("xyz");
    for (int i = 0; i < 15; ++i) {
        s += s.m_str;
        model += model;
        ASSERT_EQ(str(s), model) << "doubling " << i;
    }
}

// Guards s.AppendBytes((char*)s.m_str, s.ByteLength()) over doublings, odd length too.
TYPED_TEST(ComBstr, SelfAppendBytesDoublesAgainstTheModel) {
    SETUP;
    S s;
    s.Attach(F::SysAllocStringByteLen("odd", 3));
    std::string model = "odd";
    for (int i = 0; i < 15; ++i) {
        ASSERT_EQ(
            s.AppendBytes(reinterpret_cast<const char*>(s.m_str), static_cast<int>(s.ByteLength())),
            S_OK);
        model += model;
        ASSERT_EQ(bytes(s), model) << "doubling " << i;
    }
    EXPECT_EQ(layout_problem(s.m_str, static_cast<std::uint32_t>(model.size())), "");
}

// Guards appends of a part of the string itself (not the whole): offsets survive the move.
TYPED_TEST(ComBstr, AppendOfOwnMiddle) {
    SETUP;
    S s(OL("0123456789"));
    ostring model = OL("0123456789");
    for (int i = 0; i < 12; ++i) {
        const std::size_t from = model.size() / 3;
        const std::size_t n = model.size() / 2;
        ASSERT_EQ(s.Append(s.m_str + from, static_cast<int>(n)), S_OK);
        model += model.substr(from, n);
        ASSERT_EQ(str(s), model) << "round " << i;
    }
    ASSERT_EQ(s.AppendBSTR(s.m_str), S_OK);
    model += model;
    EXPECT_EQ(str(s), model);
}

// Guards appends from inside the string asked for more than is left after the source:
// what the old string had from there to its terminator is appended, nothing is read
// past it, and the string keeps its length and layout.
TYPED_TEST(ComBstr, AppendOfOwnTailLongerThanTheRest) {
    SETUP;
    S s(OL("0123456789"));
    ASSERT_EQ(s.Append(s.m_str + 6, 20), S_OK);
    EXPECT_EQ(s.Length(), 30u);
    EXPECT_EQ(layout_problem(s.m_str, 60), "");
    EXPECT_EQ(text(s.m_str, 15), ostring(OL("01234567896789\0"), 15));
    for (int k = 15; k < 30; ++k) // the part the source didn't have: the caller's to fill
        s.m_str[k] = static_cast<OLECHAR>(u'a' + k);
    const ostring before = str(s);
    ASSERT_EQ(s.Append(s.m_str, 100000), S_OK); // the whole string and far more
    EXPECT_EQ(s.Length(), 100030u);
    EXPECT_EQ(layout_problem(s.m_str, 200060), "");
    EXPECT_EQ(text(s.m_str, 61), before + before + OLECHAR(0)); // its terminator came too

    S b;
    b.Attach(F::SysAllocStringByteLen("abcde", 5));
    ASSERT_EQ(b.AppendBytes(reinterpret_cast<const char*>(b.m_str) + 2, 1001), S_OK);
    EXPECT_EQ(b.ByteLength(), 1006u);
    EXPECT_EQ(layout_problem(b.m_str, 1006), "");
    EXPECT_EQ(bytes(b).substr(0, 11), std::string("abcdecde\0\0\0", 11));
}

// Guards SysReAllocStringLen(&s, s, n) on a CComBSTR's own string (through operator&
// and the BSTR conversion) with n past its end: the content stays, and the string goes
// on growing with its members.
TYPED_TEST(ComBstr, ReAllocOfOwnStringThroughItsAddressKeepsIt) {
    SETUP;
    S s(OL("Test"));
    ASSERT_EQ(F::SysReAllocStringLen(&s, s, 100000), TRUE);
    EXPECT_EQ(s.Length(), 100000u);
    EXPECT_EQ(text(s.m_str, 4), OL("Test"));
    EXPECT_EQ(layout_problem(s.m_str, 200000), "");
    ASSERT_EQ(s.Append(OL("!")), S_OK);
    EXPECT_EQ(s.Length(), 100001u);
    EXPECT_EQ(s.m_str[100000], OLECHAR('!'));
    EXPECT_EQ(text(s.m_str, 4), OL("Test"));
}

// Guards the Win64 alignment through CComBSTR's growth: after every append (characters
// and odd byte counts) and SetLength the string is aligned to sizeof(void*).
TYPED_TEST(ComBstr, AppendsKeepTheStringPointerAligned) {
    SETUP;
    S s;
    std::uint32_t n = 0;
    for (int i = 0; i < 3000; ++i) {
        if (i % 3 == 0) {
            ASSERT_EQ(s.AppendBytes("xyz", 3), S_OK);
            n += 3;
        } else {
            ASSERT_EQ(s.Append(OL("ab"), 2), S_OK);
            n = n / 2 * 2 + 4; // whole characters: an odd byte is dropped
        }
        ASSERT_EQ(layout_problem(s.m_str, n), "") << "append " << i;
    }
    for (unsigned len = 20000; len > 0; len /= 3) {
        ASSERT_EQ(s.SetLength(len), S_OK);
        ASSERT_EQ(layout_problem(s.m_str, len * 2), "") << "SetLength " << len;
    }
}

// Guards Attach / Detach: ownership in and out, attaching the own pointer is harmless.
TYPED_TEST(ComBstr, AttachAndDetach) {
    SETUP;
    S s(OL("first"));
    s.Attach(F::SysAllocString(OL("second"))); // frees "first"
    EXPECT_EQ(str(s), OL("second"));
    s.Attach(s.m_str);
    EXPECT_EQ(str(s), OL("second"));
    BSTR raw = s.Detach();
    EXPECT_EQ(s.m_str, nullptr);
    EXPECT_EQ(text(raw, 6), OL("second"));
    F::SysFreeString(raw);
}

// Guards Copy / CopyTo: a new BSTR, NULL for NULL, E_POINTER, E_OUTOFMEMORY.
TYPED_TEST(ComBstr, CopyAndCopyTo) {
    SETUP;
    S s(OL("copy me"));
    BSTR c = s.Copy();
    EXPECT_NE(c, s.m_str);
    EXPECT_EQ(text(c, 7), OL("copy me"));
    F::SysFreeString(c);
    EXPECT_EQ(s.CopyTo(static_cast<BSTR*>(nullptr)), E_POINTER);
    BSTR out = reinterpret_cast<BSTR>(std::addressof(s)); // garbage to be overwritten
    EXPECT_EQ(S().CopyTo(&out), S_OK);
    EXPECT_EQ(out, nullptr);
    EXPECT_EQ(S().Copy(), nullptr);
    SKIP_UNLESS_COUNTED("out-of-memory cannot be injected into its allocator");
    heap::grants_left = 0;
    EXPECT_EQ(s.CopyTo(&out), E_OUTOFMEMORY);
    EXPECT_EQ(out, nullptr);
}

// Guards Empty, Length and ByteLength on NULL and non-NULL strings.
TYPED_TEST(ComBstr, EmptyAndLengths) {
    SETUP;
    S s(OL("four"));
    EXPECT_EQ(s.Length(), 4u);
    EXPECT_EQ(s.ByteLength(), 8u);
    s.Empty();
    EXPECT_EQ(s.m_str, nullptr);
    EXPECT_EQ(s.Length(), 0u);
    EXPECT_EQ(s.ByteLength(), 0u);
}

// Guards ToLower / ToUpper: the whole length (past embedded NULs), S_OK on NULL.
TYPED_TEST(ComBstr, CaseConversion) {
    SETUP;
    const OLECHAR src[] = {u'M', u'i', 0, u'X', u'e', u'D', u'1'};
    S s(7, src);
    EXPECT_EQ(s.ToLower(), S_OK);
    EXPECT_EQ(str(s), ostring(OL("mi\0xed1"), 7));
    EXPECT_EQ(s.ToUpper(), S_OK);
    EXPECT_EQ(str(s), ostring(OL("MI\0XED1"), 7));
    S null_string;
    EXPECT_EQ(null_string.ToLower(), S_OK);
    EXPECT_EQ(null_string.ToUpper(), S_OK);
}

// Guards equality: NULL equals empty (VarBstrCmp), embedded NULs count, NULL checks
// compare the pointer.
TYPED_TEST(ComBstr, Equality) {
    SETUP;
    S null_string;
    S empty(OL(""));
    EXPECT_TRUE(null_string == empty);
    EXPECT_FALSE(null_string != empty);
    EXPECT_TRUE(null_string == 0);
    EXPECT_TRUE(null_string == nullptr);
    EXPECT_FALSE(empty == 0);
    EXPECT_TRUE(empty != nullptr);
    EXPECT_TRUE(S(OL("abc")) == OL("abc"));
    EXPECT_TRUE(S(OL("abc")) == "abc");
    EXPECT_TRUE(S(OL("abc")) != OL("abd"));
#if !defined(_WIN32)
    EXPECT_TRUE(S(OL("\u00E9")) == "\xC3\xA9"); // UTF-8
#endif
    const OLECHAR with_nul[] = {u'a', 0, u'b'};
    EXPECT_TRUE(S(3, with_nul) != S(OL("a")));
    EXPECT_TRUE(S(3, with_nul) == S(3, with_nul));
}

// Guards ordering: a prefix sorts first, NULL is empty; ordinal by code unit on Linux,
// linguistic on Windows (VarBstrCmp in the user's locale, as ATL).
TYPED_TEST(ComBstr, Ordering) {
    SETUP;
    EXPECT_TRUE(S(OL("abc")) < S(OL("abd")));
    EXPECT_TRUE(S(OL("ab")) < S(OL("abc")));
    EXPECT_TRUE(S(OL("abd")) > OL("abc"));
    EXPECT_TRUE(S() < OL("a"));
    EXPECT_FALSE(S() < S(OL("")));
    EXPECT_FALSE(S() > S(OL("")));
#if !defined(_WIN32)
    EXPECT_TRUE(S(OL("B")) < OL("a")); // ordinal, not linguistic
#else
    EXPECT_TRUE(S(OL("B")) > OL("a")); // linguistic: a before B
#endif
}

// Guards the pointer operators: !, &, and the conversion to BSTR.
TYPED_TEST(ComBstr, PointerOperators) {
    SETUP;
    S s;
    EXPECT_TRUE(!s);
    BSTR* where = &s;
    EXPECT_EQ(where, &s.m_str);
    *where = F::SysAllocString(OL("out param"));
    EXPECT_FALSE(!s);
    const BSTR raw = s;
    EXPECT_EQ(raw, s.m_str);
    EXPECT_EQ(F::SysStringLen(s), 9u);
}

// Guards the seed's SetLength: grows keeping the characters, shrinks (in place where
// the heap keeps the pointer), works on NULL.
TYPED_TEST(ComBstr, SetLength) {
    SETUP;
    S s(OL("keep this"));
    EXPECT_EQ(s.SetLength(2000), S_OK);
    EXPECT_EQ(s.Length(), 2000u);
    EXPECT_EQ(text(s.m_str, 9), OL("keep this"));
    BSTR grown = s.m_str;
    EXPECT_EQ(s.SetLength(4), S_OK);
    if constexpr (shrink_keeps_pointer<F>) {
        EXPECT_EQ(s.m_str, grown);
    }
    EXPECT_EQ(str(s), OL("keep"));
    S n;
    EXPECT_EQ(n.SetLength(3), S_OK);
    EXPECT_EQ(n.Length(), 3u);
    EXPECT_EQ(S::_SetLength(&n.m_str, 0), S_OK);
    EXPECT_EQ(n.Length(), 0u);
    EXPECT_NE(n.m_str, nullptr);
}

// The seed's program: 10,000 appends alternating "hiya" and "bye", against the model.
TYPED_TEST(ComBstr, SeedProgram) {
    SETUP;
    S append_play;
    ostring model;
    for (int xy = 10000; xy > 0; xy--) {
        const OLECHAR* zy = xy % 2 == 0 ? OL("hiya") : OL("bye");
        ASSERT_EQ(append_play.Append(zy), S_OK);
        model += zy;
    }
    EXPECT_EQ(str(append_play), model);
    EXPECT_EQ(append_play.Length(), 35000u);
}

#if defined(_WIN32)
// ---------------------------------------------------------------------------------
// The Windows-only members, on both variants.
// ---------------------------------------------------------------------------------

// Guards ATL's stream format: a ULONG count (data + terminator, 0 for NULL), the data
// and a 0 OLECHAR; NULL, empty and odd byte lengths come back as they went.
TYPED_TEST(ComBstr, StreamRoundTripOnWindows) {
    SETUP;
    IStream* raw = nullptr;
    ASSERT_EQ(::CreateStreamOnHGlobal(nullptr, TRUE, &raw), S_OK);
    const std::unique_ptr<IStream, void (*)(IStream*)> stream(raw,
                                                              [](IStream* p) { p->Release(); });
    S text_string(OL("stream me"));
    S null_string;
    S empty(OL(""));
    S odd;
    odd.Attach(F::SysAllocStringByteLen("abc", 3));
    EXPECT_EQ(text_string.GetStreamSize(), 4u + 18u + 2u);
    EXPECT_EQ(null_string.GetStreamSize(), 4u);
    EXPECT_EQ(odd.GetStreamSize(), 4u + 3u + 2u);
    for (S* s : {std::addressof(text_string), std::addressof(null_string), std::addressof(empty),
                 std::addressof(odd)}) // (operator& gives the BSTR*, as ATL)
        ASSERT_EQ(s->WriteToStream(raw), S_OK);
    const LARGE_INTEGER zero{};
    ASSERT_EQ(raw->Seek(zero, STREAM_SEEK_SET, nullptr), S_OK);
    S a(OL("overwritten"));
    S b(OL("overwritten"));
    S c;
    S d;
    EXPECT_EQ(a.ReadFromStream(raw), S_OK);
    EXPECT_EQ(str(a), OL("stream me"));
    EXPECT_EQ(b.ReadFromStream(raw), S_OK);
    EXPECT_EQ(b.m_str, nullptr);
    EXPECT_EQ(c.ReadFromStream(raw), S_OK);
    ASSERT_NE(c.m_str, nullptr);
    EXPECT_EQ(c.Length(), 0u);
    EXPECT_EQ(d.ReadFromStream(raw), S_OK);
    EXPECT_EQ(bytes(d), "abc");
    EXPECT_EQ(layout_problem(d.m_str, 3), "");
    // At the end: nothing to read is E_FAIL, the string NULL, the stream where it was.
    S e(OL("x"));
    EXPECT_EQ(e.ReadFromStream(raw), E_FAIL);
    EXPECT_EQ(e.m_str, nullptr);
    EXPECT_EQ(S().WriteToStream(nullptr), E_INVALIDARG);
    EXPECT_EQ(e.ReadFromStream(nullptr), E_INVALIDARG);
}

// Guards ReadFromStream against a missing terminator: E_FAIL, NULL, stream rewound.
TYPED_TEST(ComBstr, StreamWithoutTerminatorFailsOnWindows) {
    SETUP;
    IStream* raw = nullptr;
    ASSERT_EQ(::CreateStreamOnHGlobal(nullptr, TRUE, &raw), S_OK);
    const std::unique_ptr<IStream, void (*)(IStream*)> stream(raw,
                                                              [](IStream* p) { p->Release(); });
    const ULONG cb = 6; // "ab" and a terminator that is not 0
    const OLECHAR data[] = {L'a', L'b', L'!'};
    ASSERT_EQ(raw->Write(&cb, sizeof cb, nullptr), S_OK);
    ASSERT_EQ(raw->Write(data, sizeof data, nullptr), S_OK);
    const LARGE_INTEGER zero{};
    ASSERT_EQ(raw->Seek(zero, STREAM_SEEK_SET, nullptr), S_OK);
    S s;
    EXPECT_EQ(s.ReadFromStream(raw), E_FAIL);
    EXPECT_EQ(s.m_str, nullptr);
    ULARGE_INTEGER where{};
    ASSERT_EQ(raw->Seek(zero, STREAM_SEEK_CUR, &where), S_OK);
    EXPECT_EQ(where.QuadPart, 0u);
}

// Guards CopyTo(VARIANT*): VT_BSTR with oleaut32's copy (VariantClear frees it), NULL
// for NULL, E_POINTER.
TYPED_TEST(ComBstr, CopyToVariantOnWindows) {
    SETUP;
    S s(OL("variant"));
    VARIANT v;
    ::VariantInit(&v);
    EXPECT_EQ(s.CopyTo(&v), S_OK);
    EXPECT_EQ(v.vt, VT_BSTR);
    EXPECT_NE(v.bstrVal, s.m_str);
    EXPECT_EQ(text(v.bstrVal, ::SysStringLen(v.bstrVal)), OL("variant"));
    EXPECT_EQ(::VariantClear(&v), S_OK);
    EXPECT_EQ(S().CopyTo(&v), S_OK);
    EXPECT_EQ(v.vt, VT_BSTR);
    EXPECT_EQ(v.bstrVal, nullptr);
    EXPECT_EQ(s.CopyTo(static_cast<VARIANT*>(nullptr)), E_POINTER);
}

// Guards BSTRToArray / ArrayToBSTR: the bytes (odd lengths too) through a VT_UI1
// SAFEARRAY and back.
TYPED_TEST(ComBstr, SafeArrayRoundTripOnWindows) {
    SETUP;
    S odd;
    odd.Attach(F::SysAllocStringByteLen("hello", 5));
    SAFEARRAY* array = nullptr;
    ASSERT_EQ(odd.BSTRToArray(&array), S_OK);
    ASSERT_NE(array, nullptr);
    EXPECT_EQ(array->rgsabound[0].cElements, 5u);
    S back(OL("previous contents"));
    EXPECT_EQ(back.ArrayToBSTR(array), S_OK);
    EXPECT_EQ(bytes(back), "hello");
    EXPECT_EQ(layout_problem(back.m_str, 5), "");
    EXPECT_EQ(::SafeArrayDestroy(array), S_OK);
    EXPECT_EQ(odd.BSTRToArray(nullptr), E_POINTER);
    EXPECT_EQ(back.ArrayToBSTR(nullptr), E_INVALIDARG);
}

// Guards the GUID constructor: StringFromGUID2's text, braces and all.
TYPED_TEST(ComBstr, GuidConstructorOnWindows) {
    SETUP;
    const GUID guid = {
        0x12345678, 0x9ABC, 0xDEF0, {0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF}};
    S s(guid);
    EXPECT_EQ(str(s), OL("{12345678-9ABC-DEF0-0123-456789ABCDEF}"));
}

// Guards LoadString without the resource: false, and the string empty (NULL). (The test
// programs carry no string table.)
TYPED_TEST(ComBstr, LoadStringOfMissingResourceOnWindows) {
    SETUP;
    S s(OL("before"));
    EXPECT_FALSE(s.LoadString(12345));
    EXPECT_EQ(s.m_str, nullptr);
    EXPECT_FALSE(s.LoadString(::GetModuleHandleW(nullptr), 12345));
}
#endif

// Guards the default alias: sta::CComBSTR works over the default functions (this file
// is built twice: STA_BSTR_POOL=0 and =1).
TEST(ComBstrDefault, AliasWorks) {
    sta::CComBSTR s(STA_OLESTR("Hello "));
    s += STA_OLESTR("World!");
    EXPECT_TRUE(s == STA_OLESTR("Hello World!"));
    sta::CComBSTR t;
    EXPECT_EQ(s.CopyTo(&t), S_OK);
    EXPECT_TRUE(t == s);
    EXPECT_EQ(t.Append(t), S_OK);
    EXPECT_EQ(t.Length(), 24u);
}

} // namespace
