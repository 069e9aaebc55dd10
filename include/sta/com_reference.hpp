// sta-pool: the WinRT ABI of a boxed value, declared here so that no WinRT header is
// needed — sta::com::inspectable (IInspectable), sta::com::reference<T>
// (Windows.Foundation.IReference<T>) and the facts about each T in reference_traits<T>.
// Windows only.
//
//   IUnknown      QueryInterface, AddRef, Release                       vtable 0..2
//   inspectable   GetIids, GetRuntimeClassName, GetTrustLevel           vtable 3..5
//   reference<T>  get_Value(T*)                                         vtable 6
//
// THE IIDS. IReference<T> is a parameterised interface: the IID of each instance is
// derived from its type signature, "pinterface({61c17706-2d65-11e0-9ae8-d48564015472};b1)"
// for IReference<Boolean>, by the documented algorithm (SHA-1 over the namespace GUID
// 11f47ad5-7b73-42c0-abae-878b1e16adee and the signature's UTF-8 bytes, the first 16
// bytes of the digest read big-endian, version 5 and the RFC 4122 variant set). The
// constants below are the results; tests/com_box_test.cpp derives every one of them
// again from its signature with its own SHA-1.
//
// A type that is not listed has no reference_traits: reference<T> for it does not
// compile. A program that boxes a struct of its own specialises reference_traits<T>
// with the IID of its IReference<T> (derived from the struct's signature the same way).
#pragma once

#if !defined(_WIN32)
#error "sta/com_reference.hpp is Windows only: it needs COM (IUnknown)"
#else

#include "sta/detail/os/windows.hpp"

#include <unknwn.h>

#include <concepts>
#include <cstdint>
#include <type_traits>

namespace sta::com {

/// An HSTRING (a WinRT string handle; null is the empty string).
using hstring = struct hstring_opaque*;

/// TrustLevel, as GetTrustLevel reports it.
enum trust_level : int { base_trust = 0, partial_trust = 1, full_trust = 2 };

/// IUnknown's IID, as a constant expression (the SDK's IID_IUnknown is an extern).
inline constexpr GUID iid_unknown = {0x00000000, 0x0000, 0x0000, {0xc0, 0, 0, 0, 0, 0, 0, 0x46}};

/// IAgileObject: a marker with no methods of its own; an object that answers it may be
/// called from any thread without marshalling.
struct agile_object : IUnknown {
    static constexpr GUID iid = {
        0x94ea2b94, 0xe9cc, 0x49e0, {0xc0, 0xff, 0xee, 0x64, 0xca, 0x8f, 0x5b, 0x90}};
};

/// IInspectable: every WinRT object's base interface.
struct inspectable : IUnknown {
    static constexpr GUID iid = {
        0xaf86e2e0, 0xb12d, 0x4c6a, {0x9c, 0x5a, 0xd7, 0xaa, 0x65, 0x10, 0x1e, 0x90}};
    /// The interfaces the object implements other than IUnknown and IInspectable, in an
    /// array from CoTaskMemAlloc that the caller frees with CoTaskMemFree.
    virtual HRESULT STDMETHODCALLTYPE GetIids(ULONG* count, IID** iids) = 0;
    virtual HRESULT STDMETHODCALLTYPE GetRuntimeClassName(hstring* name) = 0;
    virtual HRESULT STDMETHODCALLTYPE GetTrustLevel(trust_level* level) = 0;
};

/// The facts about a value type T that IReference<T> needs: its WinRT type signature,
/// the IID derived from it, and the class name a box of it reports. Specialised below
/// for WinRT's fundamental types; undefined for every other T.
template <class T>
struct reference_traits;

#define STA_COM_REFERENCE_TRAITS(type, sig, winrt_name, d1, d2, d3, ...)                           \
    template <>                                                                                    \
    struct reference_traits<type> {                                                                \
        static constexpr const char* signature = sig;                                              \
        static constexpr const wchar_t* name = L"Windows.Foundation.IReference`1<" winrt_name ">"; \
        static constexpr GUID iid = {d1, d2, d3, {__VA_ARGS__}};                                   \
    };
STA_COM_REFERENCE_TRAITS(bool, "b1", "Boolean", 0x3c00fd60, 0x2950, 0x5939, 0xa2, 0x1a, 0x2d, 0x12,
                         0xc5, 0xa0, 0x1b, 0x8a)
STA_COM_REFERENCE_TRAITS(std::uint8_t, "u1", "UInt8", 0xe5198cc8, 0x2873, 0x55f5, 0xb0, 0xa1, 0x84,
                         0xff, 0x9e, 0x4a, 0xad, 0x62)
STA_COM_REFERENCE_TRAITS(std::int16_t, "i2", "Int16", 0x6ec9e41b, 0x6709, 0x5647, 0x99, 0x18, 0xa1,
                         0x27, 0x01, 0x10, 0xfc, 0x4e)
STA_COM_REFERENCE_TRAITS(std::uint16_t, "u2", "UInt16", 0x5ab7d2c3, 0x6b62, 0x5e71, 0xa4, 0xb6,
                         0x2d, 0x49, 0xc4, 0xf2, 0x38, 0xfd)
STA_COM_REFERENCE_TRAITS(std::int32_t, "i4", "Int32", 0x548cefbd, 0xbc8a, 0x5fa0, 0x8d, 0xf2, 0x95,
                         0x74, 0x40, 0xfc, 0x8b, 0xf4)
STA_COM_REFERENCE_TRAITS(std::uint32_t, "u4", "UInt32", 0x513ef3af, 0xe784, 0x5325, 0xa9, 0x1e,
                         0x97, 0xc2, 0xb8, 0x11, 0x1c, 0xf3)
STA_COM_REFERENCE_TRAITS(std::int64_t, "i8", "Int64", 0x4dda9e24, 0xe69f, 0x5c6a, 0xa0, 0xa6, 0x93,
                         0x42, 0x73, 0x65, 0xaf, 0x2a)
STA_COM_REFERENCE_TRAITS(std::uint64_t, "u8", "UInt64", 0x6755e376, 0x53bb, 0x568b, 0xa1, 0x1d,
                         0x17, 0x23, 0x98, 0x68, 0x30, 0x9e)
STA_COM_REFERENCE_TRAITS(float, "f4", "Single", 0x719cc2ba, 0x3e76, 0x5def, 0x9f, 0x1a, 0x38, 0xd8,
                         0x5a, 0x14, 0x5e, 0xa8)
STA_COM_REFERENCE_TRAITS(double, "f8", "Double", 0x2f2d6c29, 0x5473, 0x5f3e, 0x92, 0xe7, 0x96, 0x57,
                         0x2b, 0xb9, 0x90, 0xe2)
STA_COM_REFERENCE_TRAITS(char16_t, "c2", "Char16", 0xfb393ef3, 0xbbac, 0x5bd5, 0x91, 0x44, 0x84,
                         0xf2, 0x35, 0x76, 0xf4, 0x15)
STA_COM_REFERENCE_TRAITS(GUID, "g16", "Guid", 0x7d50f649, 0x632c, 0x51f9, 0x84, 0x9a, 0xee, 0x49,
                         0x42, 0x89, 0x33, 0xea)
#undef STA_COM_REFERENCE_TRAITS

/// Whether reference<T> exists: T is listed above or specialised by the program.
template <class T>
concept boxable = requires {
    { reference_traits<T>::iid } -> std::convertible_to<const GUID&>;
    { reference_traits<T>::name } -> std::convertible_to<const wchar_t*>;
};

/// Windows.Foundation.IReference<T>: a boxed T (an optional T when the pointer may be
/// null). get_Value writes the value and returns S_OK.
template <class T>
struct reference : inspectable {
    static_assert(boxable<T>, "sta::com::reference<T>: no IReference<T> is known for this T "
                              "(specialise sta::com::reference_traits<T> with its IID)");
    static constexpr GUID iid = reference_traits<T>::iid;
    virtual HRESULT STDMETHODCALLTYPE get_Value(T* value) = 0;
};

/// The IID of interface I: I::iid for the interfaces declared here, __uuidof(I) for
/// interfaces declared with MIDL_INTERFACE; IUnknown's for IUnknown.
template <class I>
constexpr const GUID& iid_of() noexcept {
    if constexpr (std::is_same_v<I, IUnknown>)
        return iid_unknown;
    else if constexpr (requires { I::iid; })
        return I::iid;
    else
        return __uuidof(I);
}

/// GUID equality as a constant expression (IsEqualGUID is a memcmp).
constexpr bool same_iid(const GUID& a, const GUID& b) noexcept {
    if (a.Data1 != b.Data1 || a.Data2 != b.Data2 || a.Data3 != b.Data3)
        return false;
    for (int i = 0; i < 8; ++i)
        if (a.Data4[i] != b.Data4[i])
            return false;
    return true;
}

} // namespace sta::com

#endif // _WIN32
