// Boxed values (include/sta/com_box.hpp) under wine: the IIDs of IReference<T> derived
// again from their type signatures with a SHA-1 of the test's own; the static boxes'
// addresses are constant expressions and nothing about them changes however they are
// counted; QueryInterface answers exactly the listed interfaces; pool boxes hold their
// value, are released exactly once, and give their block back; a callee that keeps a
// reference past the call still sees a valid object; the thread rule in checked builds.
#include "com_box_peer.hpp"

#include "sta/com_box.hpp"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using sta::com::reference;

// ---- SHA-1 (FIPS 180-4), for the IID derivation -------------------------------------

std::array<std::uint8_t, 20> sha1(const std::vector<std::uint8_t>& message) {
    std::uint32_t h[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
    std::vector<std::uint8_t> m = message;
    const std::uint64_t bits = static_cast<std::uint64_t>(message.size()) * 8;
    m.push_back(0x80);
    while (m.size() % 64 != 56)
        m.push_back(0);
    for (int i = 7; i >= 0; --i)
        m.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
    const auto rotl = [](std::uint32_t x, int n) { return (x << n) | (x >> (32 - n)); };
    for (std::size_t block = 0; block < m.size(); block += 64) {
        std::uint32_t w[80];
        for (int t = 0; t < 16; ++t)
            w[t] = std::uint32_t{m[block + 4 * t]} << 24 |
                   std::uint32_t{m[block + 4 * t + 1]} << 16 |
                   std::uint32_t{m[block + 4 * t + 2]} << 8 | std::uint32_t{m[block + 4 * t + 3]};
        for (int t = 16; t < 80; ++t)
            w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
        std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
        for (int t = 0; t < 80; ++t) {
            std::uint32_t f, k;
            if (t < 20)
                f = (b & c) | (~b & d), k = 0x5a827999;
            else if (t < 40)
                f = b ^ c ^ d, k = 0x6ed9eba1;
            else if (t < 60)
                f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
            else
                f = b ^ c ^ d, k = 0xca62c1d6;
            const std::uint32_t next = rotl(a, 5) + f + e + k + w[t];
            e = d, d = c, c = rotl(b, 30), b = a, a = next;
        }
        h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
    }
    std::array<std::uint8_t, 20> out{};
    for (int i = 0; i < 20; ++i)
        out[static_cast<std::size_t>(i)] =
            static_cast<std::uint8_t>(h[i / 4] >> (24 - 8 * (i % 4)));
    return out;
}

std::string hex(const std::array<std::uint8_t, 20>& digest) {
    std::string s;
    char buf[3];
    for (std::uint8_t b : digest) {
        std::snprintf(buf, sizeof buf, "%02x", b);
        s += buf;
    }
    return s;
}

std::vector<std::uint8_t> bytes_of(const std::string& s) {
    return {s.begin(), s.end()};
}

/// A GUID's 16 bytes in network order (Data1..Data3 big-endian), as UUIDs are hashed.
std::vector<std::uint8_t> network_bytes(const GUID& g) {
    std::vector<std::uint8_t> b;
    for (int i = 3; i >= 0; --i)
        b.push_back(static_cast<std::uint8_t>(g.Data1 >> (8 * i)));
    b.push_back(static_cast<std::uint8_t>(g.Data2 >> 8));
    b.push_back(static_cast<std::uint8_t>(g.Data2));
    b.push_back(static_cast<std::uint8_t>(g.Data3 >> 8));
    b.push_back(static_cast<std::uint8_t>(g.Data3));
    for (unsigned char c : g.Data4)
        b.push_back(c);
    return b;
}

/// WinRT's parameterised-interface IID: a version-5 UUID of the signature in the WinRT
/// namespace {11f47ad5-7b73-42c0-abae-878b1e16adee}.
GUID pinterface_iid(const std::string& signature) {
    constexpr GUID winrt_namespace = {
        0x11f47ad5, 0x7b73, 0x42c0, {0xab, 0xae, 0x87, 0x8b, 0x1e, 0x16, 0xad, 0xee}};
    std::vector<std::uint8_t> message = network_bytes(winrt_namespace);
    for (char c : signature)
        message.push_back(static_cast<std::uint8_t>(c));
    std::array<std::uint8_t, 20> d = sha1(message);
    d[6] = static_cast<std::uint8_t>((d[6] & 0x0f) | 0x50); // version 5 (name-based, SHA-1)
    d[8] = static_cast<std::uint8_t>((d[8] & 0x3f) | 0x80); // the RFC 4122 variant
    GUID g{};
    g.Data1 =
        std::uint32_t{d[0]} << 24 | std::uint32_t{d[1]} << 16 | std::uint32_t{d[2]} << 8 | d[3];
    g.Data2 = static_cast<unsigned short>(d[4] << 8 | d[5]);
    g.Data3 = static_cast<unsigned short>(d[6] << 8 | d[7]);
    for (int i = 0; i < 8; ++i)
        g.Data4[i] = d[8 + static_cast<std::size_t>(i)];
    return g;
}

/// "{61c17706-2d65-11e0-9ae8-d48564015472}": IReference`1's own PIID, as signatures spell it.
constexpr const char* ireference_piid = "{61c17706-2d65-11e0-9ae8-d48564015472}";

template <class T>
void expect_iid_from_signature(const char* winrt_signature) {
    SCOPED_TRACE(winrt_signature);
    EXPECT_STREQ(sta::com::reference_traits<T>::signature, winrt_signature);
    const GUID derived =
        pinterface_iid(std::string("pinterface(") + ireference_piid + ";" + winrt_signature + ")");
    EXPECT_TRUE(sta::com::same_iid(derived, reference<T>::iid));
    EXPECT_TRUE(IsEqualGUID(derived, sta::com::reference_traits<T>::iid));
}

// SHA-1 itself, on FIPS 180's examples: the empty message, one block, two blocks.
TEST(ComBoxIid, Sha1MatchesThePublishedTestVectors) {
    EXPECT_EQ(hex(sha1({})), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    EXPECT_EQ(hex(sha1(bytes_of("abc"))), "a9993e364706816aba3e25717850c26c9cd0d89d");
    EXPECT_EQ(hex(sha1(bytes_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
              "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
}

// The two the issue names, IReference<Boolean> and IReference<Int32>, then every other
// type the header lists: each constant is what the algorithm gives for its signature.
TEST(ComBoxIid, IReferenceIidsFollowFromTheirTypeSignatures) {
    expect_iid_from_signature<bool>("b1");
    expect_iid_from_signature<std::int32_t>("i4");
    expect_iid_from_signature<std::uint8_t>("u1");
    expect_iid_from_signature<std::int16_t>("i2");
    expect_iid_from_signature<std::uint16_t>("u2");
    expect_iid_from_signature<std::uint32_t>("u4");
    expect_iid_from_signature<std::int64_t>("i8");
    expect_iid_from_signature<std::uint64_t>("u8");
    expect_iid_from_signature<float>("f4");
    expect_iid_from_signature<double>("f8");
    expect_iid_from_signature<char16_t>("c2");
    expect_iid_from_signature<GUID>("g16");
}

// The published IIDs, spelled out: the derivation above is the algorithm, not a copy.
TEST(ComBoxIid, BoolAndInt32IidsAreThePublishedOnes) {
    constexpr GUID bool_iid = {
        0x3c00fd60, 0x2950, 0x5939, {0xa2, 0x1a, 0x2d, 0x12, 0xc5, 0xa0, 0x1b, 0x8a}};
    constexpr GUID int32_iid = {
        0x548cefbd, 0xbc8a, 0x5fa0, {0x8d, 0xf2, 0x95, 0x74, 0x40, 0xfc, 0x8b, 0xf4}};
    EXPECT_TRUE(IsEqualGUID(reference<bool>::iid, bool_iid));
    EXPECT_TRUE(IsEqualGUID(reference<std::int32_t>::iid, int32_iid));
}

// ---- helpers -------------------------------------------------------------------------

constexpr GUID iid_unrelated = {
    0x0badf00d, 0x1234, 0x5678, {0x9a, 0xbc, 0xde, 0xf0, 0x12, 0x34, 0x56, 0x78}};

/// QueryInterface's answer for `iid`: the HRESULT and the pointer it wrote.
struct answer {
    HRESULT hr;
    void* p;
};
answer ask(IUnknown* object, const GUID& iid) {
    void* p = reinterpret_cast<void*>(1); // QueryInterface must overwrite it
    const HRESULT hr = object->QueryInterface(iid, &p);
    return {hr, p};
}

/// The class name a box reports, read with combase's own functions.
std::wstring class_name(sta::com::inspectable* object) {
    HMODULE combase = LoadLibraryW(L"combase.dll");
    EXPECT_NE(combase, nullptr) << "wine's combase.dll is missing";
    if (combase == nullptr)
        return L"";
    using buffer_fn = const wchar_t*(WINAPI*)(sta::com::hstring, UINT32*);
    using delete_fn = HRESULT(WINAPI*)(sta::com::hstring);
    auto buffer = reinterpret_cast<buffer_fn>(
        reinterpret_cast<void (*)()>(GetProcAddress(combase, "WindowsGetStringRawBuffer")));
    auto destroy = reinterpret_cast<delete_fn>(
        reinterpret_cast<void (*)()>(GetProcAddress(combase, "WindowsDeleteString")));
    EXPECT_TRUE(buffer != nullptr && destroy != nullptr);
    sta::com::hstring name = nullptr;
    EXPECT_EQ(object->GetRuntimeClassName(&name), S_OK);
    UINT32 length = 0;
    const wchar_t* text = buffer(name, &length);
    std::wstring out(text, length);
    destroy(name);
    return out;
}

std::size_t pool_bytes_in_use() {
    return sta::memory_pool::stats().bytes_in_use;
}

// ---- the static boxes ----------------------------------------------------------------

// box(bool)'s result, the statics' addresses and their conversion to the interface are
// all constant expressions; they are the boxed_true / boxed_false objects themselves.
constexpr reference<bool>* compile_time_true = sta::com::box(true);
constexpr reference<bool>* compile_time_false = sta::com::box(false);
static_assert(compile_time_true == &sta::com::boxed_true);
static_assert(compile_time_false == &sta::com::boxed_false);
static_assert(compile_time_true != compile_time_false);
static_assert(sizeof(sta::com::boxed_true) == sizeof(void*), "a static box has no fields");
static_assert(std::is_trivially_destructible_v<decltype(sta::com::boxed_false)>);

TEST(ComBoxStatic, AddressesAreConstantExpressionsOfTheTwoStatics) {
    EXPECT_EQ(sta::com::box(true), compile_time_true);
    EXPECT_EQ(sta::com::box(false), compile_time_false);
    volatile bool runtime_value = true;
    EXPECT_EQ(sta::com::box(runtime_value), &sta::com::boxed_true);
}

TEST(ComBoxStatic, GetValueReturnsTheConstant) {
    bool v = false;
    EXPECT_EQ(sta::com::box(true)->get_Value(&v), S_OK);
    EXPECT_TRUE(v);
    EXPECT_EQ(sta::com::box(false)->get_Value(&v), S_OK);
    EXPECT_FALSE(v);
    EXPECT_EQ(sta::com::box(true)->get_Value(nullptr), E_POINTER);
}

// However often it is counted up or down (down more often than up, too), the object's
// bytes do not change and it keeps answering.
TEST(ComBoxStatic, AddRefAndReleaseChangeNothingAndNeverFree) {
    reference<bool>* t = sta::com::box(true);
    unsigned char before[sizeof(sta::com::boxed_true)];
    std::memcpy(before, static_cast<void*>(&sta::com::boxed_true), sizeof before);
    for (int i = 0; i < 100000; ++i)
        t->AddRef();
    for (int i = 0; i < 200001; ++i)
        EXPECT_GE(t->Release(), 1u) << "a static box's count never reaches zero";
    EXPECT_EQ(std::memcmp(before, static_cast<void*>(&sta::com::boxed_true), sizeof before), 0);
    bool v = false;
    EXPECT_EQ(t->get_Value(&v), S_OK);
    EXPECT_TRUE(v);
}

TEST(ComBoxStatic, QueryInterfaceAnswersItsInterfacesWithItself) {
    reference<bool>* f = sta::com::box(false);
    for (const GUID* iid : {&sta::com::iid_unknown, &sta::com::inspectable::iid,
                            &reference<bool>::iid, &sta::com::agile_object::iid}) {
        const answer a = ask(f, *iid);
        EXPECT_EQ(a.hr, S_OK);
        EXPECT_EQ(a.p, static_cast<void*>(f));
    }
    EXPECT_EQ(ask(f, IID_IUnknown).hr, S_OK) << "the SDK's IID_IUnknown is the same IID";
}

TEST(ComBoxStatic, QueryInterfaceRefusesOtherInterfaces) {
    reference<bool>* t = sta::com::box(true);
    for (const GUID* iid : {&reference<std::int32_t>::iid, &iid_unrelated,
                            static_cast<const GUID*>(&IID_IClassFactory)}) {
        const answer a = ask(t, *iid);
        EXPECT_EQ(a.hr, E_NOINTERFACE);
        EXPECT_EQ(a.p, nullptr);
    }
    EXPECT_EQ(t->QueryInterface(reference<bool>::iid, nullptr), E_POINTER);
}

TEST(ComBoxStatic, InspectableReportsTheIidClassNameAndTrust) {
    reference<bool>* t = sta::com::box(true);
    ULONG count = 0;
    IID* iids = nullptr;
    ASSERT_EQ(t->GetIids(&count, &iids), S_OK);
    ASSERT_EQ(count, 1u);
    EXPECT_TRUE(IsEqualGUID(iids[0], reference<bool>::iid));
    CoTaskMemFree(iids);
    EXPECT_EQ(class_name(t), L"Windows.Foundation.IReference`1<Boolean>");
    sta::com::trust_level level = sta::com::full_trust;
    EXPECT_EQ(t->GetTrustLevel(&level), S_OK);
    EXPECT_EQ(level, sta::com::base_trust);
}

// Any constant has its static box; the same constant is the same object.
TEST(ComBoxStatic, OtherConstantsHaveStaticBoxesToo) {
    reference<std::int32_t>* zero = &sta::com::boxed<std::int32_t{0}>;
    EXPECT_EQ(zero, &sta::com::boxed<std::int32_t{0}>);
    std::int32_t v = 7;
    EXPECT_EQ(zero->get_Value(&v), S_OK);
    EXPECT_EQ(v, 0);
    EXPECT_EQ(ask(zero, reference<std::int32_t>::iid).hr, S_OK);
    EXPECT_EQ(ask(zero, reference<bool>::iid).hr, E_NOINTERFACE);
}

// The static boxes have no state: another thread may count and read them (they answer
// IAgileObject); in a checked build this would abort if they carried an owner.
TEST(ComBoxStatic, AnyThreadMayUseThem) {
    bool seen = false;
    std::thread([&] {
        reference<bool>* t = sta::com::box(true);
        t->AddRef();
        t->get_Value(&seen);
        t->Release();
    }).join();
    EXPECT_TRUE(seen);
}

// ---- a user's immortal object --------------------------------------------------------

} // namespace
// The interface has external linkage: in an anonymous namespace, __CRT_UUID_DECL's
// __mingw_uuidof<IGreeter*> would be an unused function of its own (clang warns).
MIDL_INTERFACE("4f7e3b9a-5d1c-4e2b-8a6f-1c0d9e8b7a01")
IGreeter : public IUnknown {
    virtual int STDMETHODCALLTYPE Greet() = 0;
};
#ifdef __CRT_UUID_DECL
__CRT_UUID_DECL(IGreeter, 0x4f7e3b9a, 0x5d1c, 0x4e2b, 0x8a, 0x6f, 0x1c, 0x0d, 0x9e, 0x8b, 0x7a,
                0x01)
#endif
namespace {

struct greeter final : sta::com::immortal<IGreeter> {
    int STDMETHODCALLTYPE Greet() override { return 42; }
};
constinit greeter the_greeter;
constexpr IGreeter* greeter_address = &the_greeter;

// immortal<I> works for an interface declared with MIDL_INTERFACE (its IID via __uuidof).
TEST(ComBoxImmortal, AUsersInterfaceIsAnsweredByUuidof) {
    const answer a = ask(greeter_address, __uuidof(IGreeter));
    EXPECT_EQ(a.hr, S_OK);
    EXPECT_EQ(a.p, static_cast<void*>(greeter_address));
    EXPECT_EQ(static_cast<IGreeter*>(a.p)->Greet(), 42);
    EXPECT_EQ(ask(greeter_address, sta::com::agile_object::iid).hr, E_NOINTERFACE)
        << "only listed interfaces are answered";
    EXPECT_EQ(greeter_address->AddRef(), 2u);
    EXPECT_EQ(greeter_address->Release(), 1u);
}

// ---- pool boxes ----------------------------------------------------------------------

/// A value type of the test's own, boxed through a reference_traits specialisation: it
/// counts how often a boxed copy is destroyed.
struct tracked {
    int value;
    static inline int destroyed = 0;
    tracked(int v) noexcept : value(v) {}
    tracked(const tracked& other) noexcept = default;
    ~tracked() { ++destroyed; }
};

} // namespace

template <>
struct sta::com::reference_traits<tracked> {
    static constexpr const wchar_t* name = L"Windows.Foundation.IReference`1<sta.test.Tracked>";
    static constexpr GUID iid = {
        0x4f7e3b9a, 0x5d1c, 0x4e2b, {0x8a, 0x6f, 0x1c, 0x0d, 0x9e, 0x8b, 0x7a, 0x02}};
};

namespace {

TEST(ComBoxPool, HoldsItsValue) {
    const GUID g = iid_unrelated;
    auto i = sta::com::box(std::int32_t{-5});
    auto d = sta::com::box(2.5);
    auto c = sta::com::box(u'\u00e9');
    auto u = sta::com::box(g);
    std::int32_t iv = 0;
    double dv = 0;
    char16_t cv = 0;
    GUID gv{};
    ASSERT_EQ(i->get_Value(&iv), S_OK);
    ASSERT_EQ(d->get_Value(&dv), S_OK);
    ASSERT_EQ(c->get_Value(&cv), S_OK);
    ASSERT_EQ(u->get_Value(&gv), S_OK);
    EXPECT_EQ(iv, -5);
    EXPECT_EQ(dv, 2.5);
    EXPECT_EQ(cv, u'\u00e9');
    EXPECT_TRUE(IsEqualGUID(gv, g));
    EXPECT_EQ(i->get_Value(nullptr), E_POINTER);
}

// make_box and box(T) give a new box per call, in the pool: bytes_in_use grows by the
// box's block and is back where it was after the last Release.
TEST(ComBoxPool, OneBlockPerBoxGivenBackOnTheLastRelease) {
    const std::size_t before = pool_bytes_in_use();
    {
        auto a = sta::com::box(std::int32_t{1});
        auto b = sta::com::make_box(true);
        EXPECT_NE(static_cast<void*>(b.get()), static_cast<void*>(sta::com::box(true)))
            << "make_box(bool) is a pool box, not the static one";
        // 16 bytes each (vtable, count, value); 32 in checked builds (the owner mark).
        const std::size_t int_block = std::bit_ceil(sizeof(sta::com::pool_box<std::int32_t>));
        const std::size_t bool_block = std::bit_ceil(sizeof(sta::com::pool_box<bool>));
        EXPECT_EQ(int_block, STA_POOL_CHECKS ? 32u : 16u);
        EXPECT_EQ(pool_bytes_in_use(), before + int_block + bool_block) << "one block per box";
        bool v = false;
        EXPECT_EQ(b->get_Value(&v), S_OK);
        EXPECT_TRUE(v);
    }
    EXPECT_EQ(pool_bytes_in_use(), before);
}

// Release returns the references left; the value is destroyed once, at zero.
TEST(ComBoxPool, ReleasedExactlyOnce) {
    tracked::destroyed = 0;
    const std::size_t before = pool_bytes_in_use();
    reference<tracked>* raw = nullptr;
    {
        auto box = sta::com::make_box(tracked{9});
        tracked::destroyed = 0; // the temporary argument's destruction is not the box's
        raw = box.get();
        EXPECT_EQ(raw->AddRef(), 2u);
        EXPECT_EQ(raw->AddRef(), 3u);
        EXPECT_EQ(raw->Release(), 2u);
        EXPECT_EQ(raw->Release(), 1u);
        EXPECT_EQ(tracked::destroyed, 0);
        {
            tracked v{0};
            EXPECT_EQ(raw->get_Value(&v), S_OK);
            EXPECT_EQ(v.value, 9);
        }
        tracked::destroyed = 0; // v's destruction is not the box's either
    }
    EXPECT_EQ(tracked::destroyed, 1) << "the holder's Release was the last: the box died once";
    EXPECT_EQ(pool_bytes_in_use(), before);
}

TEST(ComBoxPool, QueryInterfaceAddsAReferenceAndRefusesOthers) {
    auto box = sta::com::box(std::int32_t{3});
    for (const GUID* iid :
         {&sta::com::iid_unknown, &sta::com::inspectable::iid, &reference<std::int32_t>::iid}) {
        const answer a = ask(box.get(), *iid);
        ASSERT_EQ(a.hr, S_OK);
        EXPECT_EQ(a.p, static_cast<void*>(box.get()));
        EXPECT_EQ(box->Release(), 1u) << "QueryInterface counted one reference";
    }
    for (const GUID* iid : {&sta::com::agile_object::iid, &reference<bool>::iid, &iid_unrelated}) {
        const answer a = ask(box.get(), *iid);
        EXPECT_EQ(a.hr, E_NOINTERFACE);
        EXPECT_EQ(a.p, nullptr);
    }
    EXPECT_EQ(box->QueryInterface(reference<std::int32_t>::iid, nullptr), E_POINTER);
    EXPECT_EQ(box->AddRef(), 2u) << "refusals counted nothing";
    EXPECT_EQ(box->Release(), 1u);
}

TEST(ComBoxPool, InspectableReportsTheIidClassNameAndTrust) {
    auto box = sta::com::box(std::int32_t{3});
    ULONG count = 0;
    IID* iids = nullptr;
    ASSERT_EQ(box->GetIids(&count, &iids), S_OK);
    ASSERT_EQ(count, 1u);
    EXPECT_TRUE(IsEqualGUID(iids[0], reference<std::int32_t>::iid));
    CoTaskMemFree(iids);
    EXPECT_EQ(class_name(box.get()), L"Windows.Foundation.IReference`1<Int32>");
    sta::com::trust_level level = sta::com::full_trust;
    EXPECT_EQ(box->GetTrustLevel(&level), S_OK);
    EXPECT_EQ(level, sta::com::base_trust);
}

TEST(ComBoxPool, TryMakeBoxReportsThroughTheHresult) {
    reference<std::int32_t>* out = nullptr;
    ASSERT_EQ(sta::com::try_make_box(std::int32_t{11}, &out), S_OK);
    std::int32_t v = 0;
    EXPECT_EQ(out->get_Value(&v), S_OK);
    EXPECT_EQ(v, 11);
    EXPECT_EQ(out->Release(), 0u);
    EXPECT_EQ(sta::com::try_make_box<std::int32_t>(11, nullptr), E_POINTER);
}

// ---- a callee that keeps the box -----------------------------------------------------

/// A property holder in the shape of ToggleButton::IsChecked and a counter property:
/// put_ keeps what it is given (AddRef), as a callee that stores a value may.
class keeper {
  public:
    void put_checked(reference<bool>* value) { keep(checked_, value); }
    void put_count(reference<tracked>* value) { keep(count_, value); }
    reference<bool>* checked() const { return checked_.get(); }
    reference<tracked>* count() const { return count_.get(); }
    void clear() {
        checked_.reset();
        count_.reset();
    }

  private:
    template <class I>
    static void keep(sta::com::com_ptr<I>& slot, I* value) {
        slot = sta::com::com_ptr<I>::copy_from(value);
    }
    sta::com::com_ptr<reference<bool>> checked_;
    sta::com::com_ptr<reference<tracked>> count_;
};

TEST(ComBoxKept, AStaticBoxKeptPastTheCallStaysValid) {
    keeper k;
    k.put_checked(sta::com::box(true)); // the caller holds nothing
    bool v = false;
    ASSERT_EQ(k.checked()->get_Value(&v), S_OK);
    EXPECT_TRUE(v);
    k.clear(); // the keeper's Release of an immortal object
    EXPECT_EQ(sta::com::box(true)->get_Value(&v), S_OK);
    EXPECT_TRUE(v);
}

TEST(ComBoxKept, APoolBoxKeptPastTheCallOutlivesTheCallersHolder) {
    keeper k;
    tracked::destroyed = 0;
    const std::size_t before = pool_bytes_in_use();
    {
        auto box = sta::com::make_box(tracked{77});
        tracked::destroyed = 0;
        k.put_count(box.get());
    } // the caller's reference is gone; the keeper's remains
    EXPECT_EQ(tracked::destroyed, 0);
    {
        tracked v{0};
        ASSERT_EQ(k.count()->get_Value(&v), S_OK);
        EXPECT_EQ(v.value, 77);
    }
    tracked::destroyed = 0;
    k.clear();
    EXPECT_EQ(tracked::destroyed, 1);
    EXPECT_EQ(pool_bytes_in_use(), before);
}

// The benchmark's peer, the interlocked heap box, keeps the same contract.
TEST(ComBoxKept, TheHeapPeerKeptPastTheCallStaysValid) {
    keeper k;
    {
        auto box = sta::com::com_ptr<reference<bool>>::attach(new heap_box<bool>(true));
        k.put_checked(box.get());
    }
    bool v = false;
    ASSERT_EQ(k.checked()->get_Value(&v), S_OK);
    EXPECT_TRUE(v);
    EXPECT_EQ(ask(k.checked(), sta::com::agile_object::iid).hr, S_OK);
    k.clear();
}

// ---- the thread rule -----------------------------------------------------------------

TEST(ComBoxDeathTest, APoolBoxCountedOnAnotherThreadAbortsInCheckedBuilds) {
#if !STA_POOL_CHECKS
    GTEST_SKIP() << "STA_POOL_CHECKS is off in this build: the owner check compiles away";
#else
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            auto box = sta::com::box(std::int32_t{1});
            std::thread([&] { box->AddRef(); }).join();
        },
        "sta::com::pool_box: called from thread .*, but it belongs to thread ");
#endif
}

} // namespace
