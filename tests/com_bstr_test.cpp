// sta/com_bstr.hpp: sta::CComBSTR against ATL's documented results and HRESULTs, on
// both Linux heaps (system, pool), each wrapped in a counting heap that can refuse
// memory; the fixture fails a test that leaks a block.
#include "bstr_test_support.hpp"
#include "sta/com_bstr.hpp"

#include <climits>
#include <memory>
#include <string>

namespace {
using namespace sta_test;
using sta::BSTR;
using sta::HRESULT;
using sta::OLECHAR;

template <class F>
class ComBstr : public ::testing::Test {
  protected:
    using heap = typename F::heap;
    void SetUp() override { heap::reset(); }
    void TearDown() override { EXPECT_EQ(heap::live, 0) << "a BSTR leaked"; }
};
TYPED_TEST_SUITE(ComBstr, bstr_variants, bstr_variant_names);

#define SETUP                                                                                      \
    using F = TypeParam;                                                                           \
    using heap = typename F::heap;                                                                 \
    using S = sta::basic_com_bstr<F>;                                                              \
    (void)sizeof(heap)

template <class S>
std::u16string str(const S& s) {
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
    return sta::S_OK;
}

const HRESULT arithmetic_overflow = sta::HRESULT_FROM_WIN32(sta::ERROR_ARITHMETIC_OVERFLOW);

// Guards the drop-in size: code that casts CComBSTR* to BSTR* relies on it.
TYPED_TEST(ComBstr, IsExactlyOneBstr) {
    SETUP;
    static_assert(sizeof(S) == sizeof(BSTR));
    static_assert(sizeof(sta::CComBSTR) == sizeof(BSTR));
    S s(u"x");
    EXPECT_EQ(*reinterpret_cast<BSTR*>(std::addressof(s)), s.m_str);
}

// Guards the NULL constructors: default, 0, (0, ptr) and a NULL source all give NULL.
TYPED_TEST(ComBstr, ConstructorsThatGiveNull) {
    SETUP;
    EXPECT_EQ(S().m_str, nullptr);
    EXPECT_EQ(S(0).m_str, nullptr);
    EXPECT_EQ(S(0, u"abc").m_str, nullptr);
    EXPECT_EQ(S(0, "abc").m_str, nullptr);
    EXPECT_EQ(S(static_cast<sta::LPCOLESTR>(nullptr)).m_str, nullptr);
    EXPECT_EQ(S(static_cast<sta::LPCSTR>(nullptr)).m_str, nullptr);
    EXPECT_EQ(S(nullptr).m_str, nullptr);
    EXPECT_EQ(heap::allocs, 0);
}

// Guards NULL versus empty: an empty literal gives a non-NULL empty string.
TYPED_TEST(ComBstr, EmptyLiteralGivesEmptyNotNull) {
    SETUP;
    S a(u"");
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
    EXPECT_EQ(thrown([] { S bad(-1); }), sta::E_INVALIDARG);
    EXPECT_EQ(thrown([] { S bad(-1, u"x"); }), sta::E_INVALIDARG);
    EXPECT_EQ(thrown([] { S bad(-1, "x"); }), sta::E_INVALIDARG);
}

// Guards CComBSTR(int, LPCOLESTR): exactly n characters, embedded NULs included.
TYPED_TEST(ComBstr, CountedConstructorKeepsEmbeddedNuls) {
    SETUP;
    const OLECHAR src[] = {u'a', 0, u'b', u'c'};
    S s(4, src);
    EXPECT_EQ(str(s), std::u16string(src, 4));
    S t(2, "h\xC3\xA9llo"); // the first two bytes of UTF-8: 'h' and a cut sequence
    EXPECT_EQ(str(t), u"h\uFFFD");
}

// Guards the narrow constructor: UTF-8 to UTF-16, surrogate pairs, bad bytes to U+FFFD.
TYPED_TEST(ComBstr, NarrowStringIsUtf8) {
    SETUP;
    S s("h\xC3\xA9llo \xE2\x82\xAC\xF0\x9D\x84\x9E");
    EXPECT_EQ(str(s), u"h\u00E9llo \u20AC\U0001D11E");
    S bad("a\xFF"
          "b\xC0\xAF"
          "c\xED\xA0\x80");
    EXPECT_EQ(str(bad), u"a\uFFFDb\uFFFD\uFFFDc\uFFFD"); // a surrogate: one U+FFFD
}

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
    S src(u"source");
    heap::grants_left = 0;
    EXPECT_EQ(thrown([] { S s(u"x"); }), sta::E_OUTOFMEMORY);
    EXPECT_EQ(thrown([] { S s("x"); }), sta::E_OUTOFMEMORY);
    EXPECT_EQ(thrown([] { S s(3); }), sta::E_OUTOFMEMORY);
    EXPECT_EQ(thrown([&] { S s(src); }), sta::E_OUTOFMEMORY);
}

// Guards the move operations: ownership moves, the source becomes NULL, no copy.
TYPED_TEST(ComBstr, MoveTransfersOwnership) {
    SETUP;
    S a(u"moved");
    BSTR p = a.m_str;
    S b(std::move(a));
    EXPECT_EQ(b.m_str, p);
    EXPECT_EQ(a.m_str, nullptr);
    S c(u"old");
    c = std::move(b);
    EXPECT_EQ(c.m_str, p);
    EXPECT_EQ(b.m_str, nullptr);
    EXPECT_EQ(heap::allocs, 2);
}

// Guards copy assignment: same contents, self-assignment harmless, NULL gives NULL,
// and an assignment that fits reuses the block.
TYPED_TEST(ComBstr, CopyAssignment) {
    SETUP;
    S a(u"a fairly long string");
    S b(u"short");
    BSTR block = a.m_str;
    a = b;
    EXPECT_EQ(str(a), u"short");
    EXPECT_EQ(a.m_str, block);
    S& alias = a;
    a = alias;
    EXPECT_EQ(str(a), u"short");
    a = S();
    EXPECT_EQ(a.m_str, nullptr);
}

// Guards the strong guarantee: a failed assignment throws and leaves the old string.
TYPED_TEST(ComBstr, FailedAssignmentKeepsTheOldString) {
    SETUP;
    S a(u"old");
    S big(2000);
    heap::grants_left = 0;
    EXPECT_EQ(thrown([&] { a = big; }), sta::E_OUTOFMEMORY);
    EXPECT_EQ(str(a), u"old");
    EXPECT_EQ(thrown([&] { a = u"a string longer than the block"; }), sta::E_OUTOFMEMORY);
    EXPECT_EQ(str(a), u"old");
    EXPECT_EQ(thrown([&] { a = "a narrow string longer than the block"; }), sta::E_OUTOFMEMORY);
    EXPECT_EQ(str(a), u"old");
    EXPECT_EQ(a.AssignBSTR(big.m_str), sta::E_OUTOFMEMORY);
    EXPECT_EQ(str(a), u"old");
}

// Guards assignment from a pointer: NULL empties, its own tail works (ATL frees first).
TYPED_TEST(ComBstr, AssignFromPointer) {
    SETUP;
    S s(u"0123456789");
    s = s.m_str + 4;
    EXPECT_EQ(str(s), u"456789");
    s = s.m_str;
    EXPECT_EQ(str(s), u"456789");
    s = "na\xC3\xAFve";
    EXPECT_EQ(str(s), u"na\u00EFve");
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
    S s(u"x");
    EXPECT_EQ(s.AssignBSTR(odd.m_str), sta::S_OK);
    EXPECT_EQ(bytes(s), "hello");
    EXPECT_EQ(layout_problem(s.m_str, 5), "");
    EXPECT_EQ(s.AssignBSTR(nullptr), sta::S_OK);
    EXPECT_EQ(s.m_str, nullptr);
}

// Guards Append(p, n)'s edge results: NULL source, negative length, zero length on NULL
// (makes it empty) and on non-NULL (no change).
TYPED_TEST(ComBstr, AppendCountedEdgeCases) {
    SETUP;
    S s;
    EXPECT_EQ(s.Append(static_cast<sta::LPCOLESTR>(nullptr), 5), sta::S_OK);
    EXPECT_EQ(s.m_str, nullptr);
    EXPECT_EQ(s.Append(u"abc", -1), sta::E_INVALIDARG);
    EXPECT_EQ(s.m_str, nullptr);
    EXPECT_EQ(s.Append(u"abc", 0), sta::S_OK);
    ASSERT_NE(s.m_str, nullptr);
    EXPECT_EQ(s.Length(), 0u);
    BSTR p = s.m_str;
    EXPECT_EQ(s.Append(u"abc", 0), sta::S_OK);
    EXPECT_EQ(s.m_str, p);
    const OLECHAR nul_inside[] = {u'x', 0, u'y'};
    EXPECT_EQ(s.Append(nul_inside, 3), sta::S_OK);
    EXPECT_EQ(str(s), std::u16string(nul_inside, 3));
}

// Guards the zero-terminated overloads: NULL and "" leave a NULL string NULL, u"" does
// not (it goes through Append(p, 0)).
TYPED_TEST(ComBstr, AppendZeroTerminated) {
    SETUP;
    S s;
    EXPECT_EQ(s.Append(static_cast<sta::LPCOLESTR>(nullptr)), sta::S_OK);
    EXPECT_EQ(s.Append(static_cast<sta::LPCSTR>(nullptr)), sta::S_OK);
    EXPECT_EQ(s.Append(""), sta::S_OK);
    EXPECT_EQ(s.m_str, nullptr);
    EXPECT_EQ(s.Append(u""), sta::S_OK);
    EXPECT_NE(s.m_str, nullptr);
    EXPECT_EQ(s.Append(u"wide "), sta::S_OK);
    EXPECT_EQ(s.Append("n\xC3\xA4rrow"), sta::S_OK);
    EXPECT_EQ(str(s), u"wide n\u00E4rrow");
}

// Guards the character overloads: char widens as ATL (sign and all), wchar_t encodes a
// code point (a surrogate pair above U+FFFF).
TYPED_TEST(ComBstr, AppendCharacters) {
    SETUP;
    S s;
    EXPECT_EQ(s.Append('a'), sta::S_OK);
    EXPECT_EQ(s.Append(u'b'), sta::S_OK);
    EXPECT_EQ(s.Append(static_cast<char>(0xE9)), sta::S_OK);
    EXPECT_EQ(s.Append(L'\U0001F600'), sta::S_OK);
    EXPECT_EQ(s.Append(L'\u00FC'), sta::S_OK);
    EXPECT_EQ(str(s), u"ab\uFFE9\U0001F600\u00FC");
}

// Guards AppendBSTR: byte-wise (odd lengths kept), and a BSTR with no whole character
// (NULL, empty, 1 byte) appends nothing, as ATL.
TYPED_TEST(ComBstr, AppendBstrIsByteWise) {
    SETUP;
    S s(u"ab");
    S one_byte;
    one_byte.Attach(F::SysAllocStringByteLen("z", 1));
    EXPECT_EQ(s.AppendBSTR(nullptr), sta::S_OK);
    EXPECT_EQ(s.AppendBSTR(S(u"").m_str), sta::S_OK);
    EXPECT_EQ(s.AppendBSTR(one_byte.m_str), sta::S_OK);
    EXPECT_EQ(s.ByteLength(), 4u);
    S three;
    three.Attach(F::SysAllocStringByteLen("xyz", 3));
    EXPECT_EQ(s.AppendBSTR(three.m_str), sta::S_OK);
    EXPECT_EQ(s.ByteLength(), 7u);
    EXPECT_EQ(bytes(s), std::string("a\0b\0xyz", 7));
    EXPECT_EQ(layout_problem(s.m_str, 7), "");
    S empty;
    EXPECT_EQ(empty.Append(three), sta::S_OK);
    EXPECT_EQ(bytes(empty), "xyz");
}

// Guards AppendBytes: NULL / 0 do nothing, negative is E_INVALIDARG, odd lengths kept.
TYPED_TEST(ComBstr, AppendBytes) {
    SETUP;
    S s;
    EXPECT_EQ(s.AppendBytes(nullptr, 3), sta::S_OK);
    EXPECT_EQ(s.AppendBytes("abc", 0), sta::S_OK);
    EXPECT_EQ(s.m_str, nullptr);
    EXPECT_EQ(s.AppendBytes("abc", -2), sta::E_INVALIDARG);
    EXPECT_EQ(s.AppendBytes("abc", 3), sta::S_OK);
    EXPECT_EQ(s.AppendBytes("d\0e", 3), sta::S_OK);
    EXPECT_EQ(bytes(s), std::string("abcd\0e", 6));
    EXPECT_EQ(s.AppendBytes("f", 1), sta::S_OK);
    EXPECT_EQ(layout_problem(s.m_str, 7), "");
    EXPECT_EQ(s.Length(), 3u);
}

// Guards the counted overloads against sizes that overflow ATL's arithmetic: the
// HRESULTs of AtlAdd / AtlMultiply, and of the allocation beyond the maximum.
TYPED_TEST(ComBstr, LengthsThatOverflowFailCleanly) {
    SETUP;
    S s(u"abc");
    EXPECT_EQ(s.Append(u"x", INT_MAX), arithmetic_overflow);
    EXPECT_EQ(str(s), u"abc");
    S null_string;
    EXPECT_EQ(null_string.Append(u"x", INT_MAX), sta::E_OUTOFMEMORY);
    EXPECT_EQ(null_string.m_str, nullptr);
    EXPECT_EQ(s.AppendBytes("x", INT_MAX), sta::E_OUTOFMEMORY);
    EXPECT_EQ(str(s), u"abc");
    EXPECT_EQ(s.SetLength(UINT_MAX), sta::E_OUTOFMEMORY);
    EXPECT_EQ(str(s), u"abc");
    EXPECT_EQ(heap::reallocs, 0);
}

// Guards every append flavour under out-of-memory: E_OUTOFMEMORY (or a throw of it)
// and the string exactly as it was (ATL would have freed nothing either, but through
// allocate + copy + free).
TYPED_TEST(ComBstr, FailedAppendLeavesTheStringUnchanged) {
    SETUP;
    S s(u"kept");
    S long_src(4096);
    BSTR before = s.m_str;
    heap::grants_left = 0;
    const std::u16string more(4000, u'm');
    EXPECT_EQ(s.Append(more.c_str()), sta::E_OUTOFMEMORY);
    EXPECT_EQ(s.Append(more.c_str(), 4000), sta::E_OUTOFMEMORY);
    EXPECT_EQ(s.Append(long_src), sta::E_OUTOFMEMORY);
    EXPECT_EQ(s.AppendBSTR(long_src.m_str), sta::E_OUTOFMEMORY);
    EXPECT_EQ(s.AppendBytes(reinterpret_cast<const char*>(long_src.m_str), 8191),
              sta::E_OUTOFMEMORY);
    EXPECT_EQ(s.Append(std::string(5000, 'n').c_str()), sta::E_OUTOFMEMORY);
    EXPECT_EQ(s.SetLength(5000), sta::E_OUTOFMEMORY);
    EXPECT_EQ(thrown([&] { s += more.c_str(); }), sta::E_OUTOFMEMORY);
    EXPECT_EQ(thrown([&] { s += long_src; }), sta::E_OUTOFMEMORY);
    EXPECT_EQ(s.m_str, before);
    EXPECT_EQ(str(s), u"kept");
    EXPECT_EQ(layout_problem(s.m_str, 8), "");
}

// Guards the seed's point: appends grow the one block by reallocation, never
// allocate + copy + free.
TYPED_TEST(ComBstr, AppendsReallocateTheOneBlock) {
    SETUP;
    S s;
    std::u16string model;
    for (int xy = 3000; xy > 0; --xy) {
        const char16_t* piece = xy % 2 == 0 ? u"hiya" : u"bye";
        ASSERT_EQ(s.Append(piece), sta::S_OK);
        model += piece;
    }
    s += u"!";
    ASSERT_EQ(s.AppendBytes("!\0", 2), sta::S_OK);
    ASSERT_EQ(s.Append(S(u"?")), sta::S_OK);
    model += u"!!?";
    EXPECT_EQ(str(s), model);
    EXPECT_EQ(heap::allocs, 2); // the string, and the temporary S(u"?")
    EXPECT_EQ(heap::frees, 1);  // the temporary
}

// Guards s.Append(s) over many doublings: the source is the block being grown.
TYPED_TEST(ComBstr, SelfAppendDoublesAgainstTheModel) {
    SETUP;
    S s(u"ab\u00E9");
    std::u16string model = u"ab\u00E9";
    for (int i = 0; i < 15; ++i) { // 3 * 2^15 characters: well past 32 KiB
        ASSERT_EQ(s.Append(s), sta::S_OK);
        model += model;
        ASSERT_EQ(str(s), model) << "doubling " << i;
    }
    EXPECT_EQ(layout_problem(s.m_str, static_cast<std::uint32_t>(model.size() * 2)), "");
}

// Guards s += s.m_str over many doublings (the zero-terminated overload, inside source).
TYPED_TEST(ComBstr, SelfPlusEqualsDoublesAgainstTheModel) {
    SETUP;
    S s(u"xyz");
    std::u16string model = u"xyz";
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
            sta::S_OK);
        model += model;
        ASSERT_EQ(bytes(s), model) << "doubling " << i;
    }
    EXPECT_EQ(layout_problem(s.m_str, static_cast<std::uint32_t>(model.size())), "");
}

// Guards appends of a part of the string itself (not the whole): offsets survive the move.
TYPED_TEST(ComBstr, AppendOfOwnMiddle) {
    SETUP;
    S s(u"0123456789");
    std::u16string model = u"0123456789";
    for (int i = 0; i < 12; ++i) {
        const std::size_t from = model.size() / 3;
        const std::size_t n = model.size() / 2;
        ASSERT_EQ(s.Append(s.m_str + from, static_cast<int>(n)), sta::S_OK);
        model += model.substr(from, n);
        ASSERT_EQ(str(s), model) << "round " << i;
    }
    ASSERT_EQ(s.AppendBSTR(s.m_str), sta::S_OK);
    model += model;
    EXPECT_EQ(str(s), model);
}

// Guards Attach / Detach: ownership in and out, attaching the own pointer is harmless.
TYPED_TEST(ComBstr, AttachAndDetach) {
    SETUP;
    S s(u"first");
    s.Attach(F::SysAllocString(u"second")); // frees "first"
    EXPECT_EQ(str(s), u"second");
    s.Attach(s.m_str);
    EXPECT_EQ(str(s), u"second");
    BSTR raw = s.Detach();
    EXPECT_EQ(s.m_str, nullptr);
    EXPECT_EQ(text(raw, 6), u"second");
    F::SysFreeString(raw);
}

// Guards Copy / CopyTo: a new BSTR, NULL for NULL, E_POINTER, E_OUTOFMEMORY.
TYPED_TEST(ComBstr, CopyAndCopyTo) {
    SETUP;
    S s(u"copy me");
    BSTR c = s.Copy();
    EXPECT_NE(c, s.m_str);
    EXPECT_EQ(text(c, 7), u"copy me");
    F::SysFreeString(c);
    EXPECT_EQ(s.CopyTo(static_cast<BSTR*>(nullptr)), sta::E_POINTER);
    BSTR out = reinterpret_cast<BSTR>(std::addressof(s)); // garbage to be overwritten
    EXPECT_EQ(S().CopyTo(&out), sta::S_OK);
    EXPECT_EQ(out, nullptr);
    EXPECT_EQ(S().Copy(), nullptr);
    heap::grants_left = 0;
    EXPECT_EQ(s.CopyTo(&out), sta::E_OUTOFMEMORY);
    EXPECT_EQ(out, nullptr);
}

// Guards Empty, Length and ByteLength on NULL and non-NULL strings.
TYPED_TEST(ComBstr, EmptyAndLengths) {
    SETUP;
    S s(u"four");
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
    EXPECT_EQ(s.ToLower(), sta::S_OK);
    EXPECT_EQ(str(s), std::u16string(u"mi\0xed1", 7));
    EXPECT_EQ(s.ToUpper(), sta::S_OK);
    EXPECT_EQ(str(s), std::u16string(u"MI\0XED1", 7));
    S null_string;
    EXPECT_EQ(null_string.ToLower(), sta::S_OK);
    EXPECT_EQ(null_string.ToUpper(), sta::S_OK);
}

// Guards equality: NULL equals empty (VarBstrCmp), embedded NULs count, NULL checks
// compare the pointer.
TYPED_TEST(ComBstr, Equality) {
    SETUP;
    S null_string;
    S empty(u"");
    EXPECT_TRUE(null_string == empty);
    EXPECT_FALSE(null_string != empty);
    EXPECT_TRUE(null_string == 0);
    EXPECT_TRUE(null_string == nullptr);
    EXPECT_FALSE(empty == 0);
    EXPECT_TRUE(empty != nullptr);
    EXPECT_TRUE(S(u"abc") == u"abc");
    EXPECT_TRUE(S(u"abc") == "abc");
    EXPECT_TRUE(S(u"abc") != u"abd");
    EXPECT_TRUE(S(u"\u00E9") == "\xC3\xA9");
    const OLECHAR with_nul[] = {u'a', 0, u'b'};
    EXPECT_TRUE(S(3, with_nul) != S(u"a"));
    EXPECT_TRUE(S(3, with_nul) == S(3, with_nul));
}

// Guards ordering: ordinal by code unit on Linux, a prefix sorts first, NULL is empty.
TYPED_TEST(ComBstr, Ordering) {
    SETUP;
    EXPECT_TRUE(S(u"abc") < S(u"abd"));
    EXPECT_TRUE(S(u"ab") < S(u"abc"));
    EXPECT_TRUE(S(u"abd") > u"abc");
    EXPECT_TRUE(S() < u"a");
    EXPECT_FALSE(S() < S(u""));
    EXPECT_FALSE(S() > S(u""));
    EXPECT_TRUE(S(u"B") < u"a"); // ordinal, not linguistic
}

// Guards the pointer operators: !, &, and the conversion to BSTR.
TYPED_TEST(ComBstr, PointerOperators) {
    SETUP;
    S s;
    EXPECT_TRUE(!s);
    BSTR* where = &s;
    EXPECT_EQ(where, &s.m_str);
    *where = F::SysAllocString(u"out param");
    EXPECT_FALSE(!s);
    const BSTR raw = s;
    EXPECT_EQ(raw, s.m_str);
    EXPECT_EQ(F::SysStringLen(s), 9u);
}

// Guards the seed's SetLength: grows keeping the characters, shrinks in place, works
// on NULL.
TYPED_TEST(ComBstr, SetLength) {
    SETUP;
    S s(u"keep this");
    EXPECT_EQ(s.SetLength(2000), sta::S_OK);
    EXPECT_EQ(s.Length(), 2000u);
    EXPECT_EQ(text(s.m_str, 9), u"keep this");
    BSTR grown = s.m_str;
    EXPECT_EQ(s.SetLength(4), sta::S_OK);
    EXPECT_EQ(s.m_str, grown);
    EXPECT_EQ(str(s), u"keep");
    S n;
    EXPECT_EQ(n.SetLength(3), sta::S_OK);
    EXPECT_EQ(n.Length(), 3u);
    EXPECT_EQ(S::_SetLength(&n.m_str, 0), sta::S_OK);
    EXPECT_EQ(n.Length(), 0u);
    EXPECT_NE(n.m_str, nullptr);
}

// The seed's program: 10,000 appends alternating "hiya" and "bye", against the model.
TYPED_TEST(ComBstr, SeedProgram) {
    SETUP;
    S append_play;
    std::u16string model;
    for (int xy = 10000; xy > 0; xy--) {
        const char16_t* zy = xy % 2 == 0 ? u"hiya" : u"bye";
        ASSERT_EQ(append_play.Append(zy), sta::S_OK);
        model += zy;
    }
    EXPECT_EQ(str(append_play), model);
    EXPECT_EQ(append_play.Length(), 35000u);
}

// Guards the default alias: sta::CComBSTR works over the default functions (this file
// is built twice: STA_BSTR_POOL=0 and =1).
TEST(ComBstrDefault, AliasWorks) {
    sta::CComBSTR s(STA_OLESTR("Hello "));
    s += STA_OLESTR("World!");
    EXPECT_TRUE(s == STA_OLESTR("Hello World!"));
    sta::CComBSTR t;
    EXPECT_EQ(s.CopyTo(&t), sta::S_OK);
    EXPECT_TRUE(t == s);
    EXPECT_EQ(t.Append(t), sta::S_OK);
    EXPECT_EQ(t.Length(), 24u);
}

} // namespace
