// sta-pool: sta::CComBSTR — a drop-in for ATL's CComBSTR that grows by reallocation.
//
// ATL's CComBSTR::Append allocates a new string, copies both parts and frees the old
// one on every call: n appends cost O(n^2). This class grows the string it already
// has with SysReAllocStringLen (the seed's SetLength), so the heap can extend the
// block in place: n appends cost O(n). Results and HRESULTs are ATL's (its documented
// behaviour, including NULL versus empty, odd byte lengths and embedded NULs), and
// the guarantees are stronger: a failed append, assignment or copy leaves the string
// as it was (ATL frees first), and a source inside the string itself (`s.Append(s)`,
// `s += s.m_str`, `s.AppendBytes((char*)s.m_str, s.ByteLength())`) works.
//
// `sta::basic_com_bstr<Functions>` takes the BSTR functions it runs on (see
// sta/bstr.hpp: the system heap, the pool heap, oleaut32 on Windows);
// `sta::CComBSTR` is basic_com_bstr<sta::default_bstr_functions>.
//
// Where ATL throws (constructors, assignment, +=), this throws sta::CAtlException,
// which carries the HRESULT like ATL's CAtlException.
//
// Linux differences (documented in docs/bstr.md):
//   - OLECHAR is char16_t: literals are u"..." (STA_OLESTR("...")); LPCSTR arguments
//     are UTF-8 (ATL: the ANSI code page); Append(wchar_t) encodes one code point.
//   - ==, !=, <, > compare ordinally by UTF-16 code unit over the whole length
//     (embedded NULs included), NULL equal to empty; Windows uses VarBstrCmp in the
//     user's default locale.
//   - ToLower / ToUpper map each non-surrogate code unit with towlower / towupper
//     (the C locale maps ASCII only; set a UTF-8 locale for more); Windows uses
//     CharLowerBuff / CharUpperBuff.
//   - Absent: LoadString, ReadFromStream, WriteToStream, GetStreamSize, CopyTo(VARIANT*),
//     BSTRToArray, ArrayToBSTR, the GUID constructor. They exist only under _WIN32.
//
// On Windows OLECHAR is wchar_t, narrow strings are in the ANSI code page
// (MultiByteToWideChar(CP_ACP)), comparisons are VarBstrCmp's and case mapping is
// CharLowerBuffW / CharUpperBuffW, as ATL. sta::CComBSTR runs on oleaut32 there (its
// strings can go to COM and back); CopyTo(VARIANT*) always makes the VARIANT's copy with
// oleaut32, because VariantClear frees it there.
#pragma once

#include "sta/bstr.hpp"

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>

#if defined(_WIN32)
#include <objidl.h>
#else
#include <cwctype>
#endif

namespace sta {

/// What the throwing members throw: the HRESULT that failed (ATL's CAtlException).
class CAtlException : public std::exception {
  public:
    explicit CAtlException(HRESULT hr) noexcept : m_hr(hr) {}
    operator HRESULT() const noexcept { return m_hr; }
    const char* what() const noexcept override { return "sta::CAtlException (see m_hr)"; }
    HRESULT m_hr;
};

namespace detail {

[[noreturn]] inline void atl_throw(HRESULT hr) {
    throw CAtlException(hr);
}

#if !defined(_WIN32)
/// UTF-8 to UTF-16. Writes to `out` when it is not null; returns the code units.
/// A malformed sequence (bad lead byte, missing continuation, overlong form,
/// surrogate, above U+10FFFF) becomes one U+FFFD and decoding resumes after it.
inline std::size_t utf8_to_utf16(const char* s, std::size_t n, OLECHAR* out) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(s);
    std::size_t i = 0;
    std::size_t units = 0;
    auto put = [&](std::uint32_t c) {
        if (c >= 0x10000) {
            c -= 0x10000;
            if (out != nullptr) {
                out[units] = static_cast<OLECHAR>(0xD800 + (c >> 10));
                out[units + 1] = static_cast<OLECHAR>(0xDC00 + (c & 0x3FF));
            }
            units += 2;
        } else {
            if (out != nullptr)
                out[units] = static_cast<OLECHAR>(c);
            units += 1;
        }
    };
    while (i < n) {
        const unsigned char b = p[i];
        std::size_t extra = 0;
        std::uint32_t c = 0;
        std::uint32_t min = 0;
        if (b < 0x80) {
            put(b);
            ++i;
            continue;
        } else if (b >= 0xC2 && b <= 0xDF) {
            extra = 1, c = b & 0x1Fu, min = 0x80;
        } else if (b >= 0xE0 && b <= 0xEF) {
            extra = 2, c = b & 0x0Fu, min = 0x800;
        } else if (b >= 0xF0 && b <= 0xF4) {
            extra = 3, c = b & 0x07u, min = 0x10000;
        } else {
            put(0xFFFD);
            ++i;
            continue;
        }
        std::size_t k = 1;
        for (; k <= extra && i + k < n && (p[i + k] & 0xC0) == 0x80; ++k)
            c = (c << 6) | (p[i + k] & 0x3Fu);
        if (k <= extra || c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
            put(0xFFFD);
            i += k; // skip the lead and the continuations that were read
            continue;
        }
        put(c);
        i += k;
    }
    return units;
}
#endif

} // namespace detail

/// A BSTR owner with ATL's interface over `Functions` (see sta/bstr.hpp).
///
/// Invariants: m_str is NULL or a BSTR made by Functions (never shared with another
/// owner); sizeof(basic_com_bstr) == sizeof(BSTR); every member that makes the string
/// longer does it with Functions::SysReAllocStringLen (or its byte-wise twin) on
/// m_str itself, so the string keeps its address when the heap can extend it.
template <class Functions>
class basic_com_bstr {
    using F = Functions;

  public:
    using functions = Functions;

    BSTR m_str;

    // --- construction -------------------------------------------------------------

    basic_com_bstr() noexcept : m_str(nullptr) {}
    basic_com_bstr(std::nullptr_t) noexcept : m_str(nullptr) {}

    /// nSize characters, zeroed; 0 gives NULL; negative throws E_INVALIDARG.
    explicit basic_com_bstr(int nSize) : m_str(nullptr) {
        if (nSize < 0)
            detail::atl_throw(E_INVALIDARG);
        if (nSize != 0)
            m_str = checked(F::SysAllocStringLen(nullptr, static_cast<UINT>(nSize)));
    }

    /// The first nSize characters of sz (embedded NULs kept); 0 gives NULL.
    basic_com_bstr(int nSize, LPCOLESTR sz) : m_str(nullptr) {
        if (nSize < 0)
            detail::atl_throw(E_INVALIDARG);
        if (nSize != 0)
            m_str = checked(F::SysAllocStringLen(sz, static_cast<UINT>(nSize)));
    }

    /// The first nSize bytes of sz, converted (UTF-8 on Linux); 0 gives NULL.
    basic_com_bstr(int nSize, LPCSTR sz) : m_str(nullptr) {
        if (nSize < 0)
            detail::atl_throw(E_INVALIDARG);
        if (nSize == 0)
            return;
        if (sz == nullptr)
            m_str = checked(F::SysAllocStringLen(nullptr, static_cast<UINT>(nSize)));
        else
            m_str = checked(convert(sz, static_cast<std::size_t>(nSize)));
    }

    /// A copy of the zero-terminated pSrc; NULL stays NULL, u"" is empty but not NULL.
    basic_com_bstr(LPCOLESTR pSrc) : m_str(nullptr) {
        if (pSrc != nullptr)
            m_str = checked(F::SysAllocString(pSrc));
    }

    /// pSrc converted (UTF-8 on Linux, the ANSI code page on Windows); NULL stays NULL.
    basic_com_bstr(LPCSTR pSrc) : m_str(nullptr) {
        if (pSrc != nullptr)
            m_str = checked(convert(pSrc, std::strlen(pSrc)));
    }

    /// A copy with the same byte length (odd lengths kept).
    basic_com_bstr(const basic_com_bstr& src) : m_str(src.Copy()) {
        if (m_str == nullptr && src.m_str != nullptr)
            detail::atl_throw(E_OUTOFMEMORY);
    }

#if defined(_WIN32)
    /// The GUID as text, "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}" (StringFromGUID2).
    basic_com_bstr(REFGUID guid) : m_str(nullptr) {
        OLECHAR text[64];
        const int n = ::StringFromGUID2(guid, text, 64);
        if (n > 0)
            m_str = checked(F::SysAllocStringLen(text, static_cast<UINT>(n - 1)));
    }
#endif

    basic_com_bstr(basic_com_bstr&& src) noexcept : m_str(src.m_str) {
        src.m_str = nullptr;
    }

    ~basic_com_bstr() {
        F::SysFreeString(m_str);
    }

    // --- assignment: reuses the string's block; on failure the string is unchanged ---

    basic_com_bstr& operator=(const basic_com_bstr& src) {
        const HRESULT hr = AssignBSTR(src.m_str);
        if (FAILED(hr))
            detail::atl_throw(hr);
        return *this;
    }

    basic_com_bstr& operator=(basic_com_bstr&& src) noexcept {
        if (m_str != src.m_str) {
            F::SysFreeString(m_str);
            m_str = src.m_str;
            src.m_str = nullptr;
        }
        return *this;
    }

    basic_com_bstr& operator=(std::nullptr_t) noexcept {
        Empty();
        return *this;
    }

    basic_com_bstr& operator=(LPCOLESTR pSrc) {
        if (pSrc == m_str)
            return *this;
        if (pSrc == nullptr)
            Empty();
        else if (!F::SysReAllocString(&m_str, pSrc))
            detail::atl_throw(E_OUTOFMEMORY);
        return *this;
    }

    basic_com_bstr& operator=(LPCSTR pSrc) {
        if (pSrc == nullptr) {
            Empty();
            return *this;
        }
        const HRESULT hr = assign_converted(pSrc, std::strlen(pSrc));
        if (FAILED(hr))
            detail::atl_throw(hr);
        return *this;
    }

    /// m_str becomes a copy of bstrSrc with its byte length (NULL gives NULL).
    HRESULT AssignBSTR(const BSTR bstrSrc) noexcept {
        if (m_str == bstrSrc)
            return S_OK;
        if (bstrSrc == nullptr) {
            Empty();
            return S_OK;
        }
        if (!F::SysReAllocStringByteLen(&m_str, reinterpret_cast<LPCSTR>(bstrSrc),
                                        F::SysStringByteLen(bstrSrc)))
            return E_OUTOFMEMORY;
        return S_OK;
    }

    // --- appending ----------------------------------------------------------------

    HRESULT Append(const basic_com_bstr& bstrSrc) noexcept {
        return AppendBSTR(bstrSrc.m_str);
    }

    HRESULT Append(OLECHAR ch) noexcept {
        return Append(&ch, 1);
    }

    HRESULT Append(char ch) noexcept {
        const auto wide = static_cast<OLECHAR>(ch); // as ATL: char widened, sign and all
        return Append(&wide, 1);
    }

#if !defined(_WIN32)
    /// wchar_t is 32-bit here: one code point, as one or two UTF-16 units.
    HRESULT Append(wchar_t ch) noexcept {
        auto c = static_cast<std::uint32_t>(ch);
        if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            c = 0xFFFD;
        if (c < 0x10000) {
            const auto unit = static_cast<OLECHAR>(c);
            return Append(&unit, 1);
        }
        c -= 0x10000;
        const OLECHAR pair[2] = {static_cast<OLECHAR>(0xD800 + (c >> 10)),
                                 static_cast<OLECHAR>(0xDC00 + (c & 0x3FF))};
        return Append(pair, 2);
    }
#endif

    /// A zero-terminated string; NULL appends nothing.
    HRESULT Append(LPCOLESTR lpsz) noexcept {
        if (lpsz == nullptr)
            return S_OK;
        std::size_t n = 0;
        while (lpsz[n] != 0)
            ++n;
        if (n > static_cast<std::size_t>(INT_MAX))
            return E_INVALIDARG; // ATL: UINT(length) passed as int turns negative
        return Append(lpsz, static_cast<int>(n));
    }

    /// A converted narrow string (UTF-8 on Linux); NULL and "" append nothing.
    HRESULT Append(LPCSTR lpsz) noexcept {
        if (lpsz == nullptr)
            return S_OK;
        return append_converted(lpsz, std::strlen(lpsz));
    }

    /// nLen characters of lpsz (embedded NULs kept). NULL appends nothing; nLen 0 on a
    /// NULL string makes it empty; nLen < 0 is E_INVALIDARG.
    HRESULT Append(LPCOLESTR lpsz, int nLen) noexcept {
        if (lpsz == nullptr || (m_str != nullptr && nLen == 0))
            return S_OK;
        if (nLen < 0)
            return E_INVALIDARG;
        const UINT n1 = Length();
        const std::uint64_t total = std::uint64_t{n1} + static_cast<std::uint64_t>(nLen);
        if (total > UINT_MAX || total * sizeof(OLECHAR) > UINT_MAX)
            return arithmetic_overflow();
        return append_raw(lpsz, n1 * sizeof(OLECHAR), static_cast<std::size_t>(nLen) * 2,
                          static_cast<UINT>(total) * 2, /*whole_chars=*/true);
    }

    /// The bytes of another BSTR (odd byte lengths kept); nothing when it has no
    /// whole character (SysStringLen(p) == 0), as ATL.
    HRESULT AppendBSTR(BSTR p) noexcept {
        if (F::SysStringLen(p) == 0)
            return S_OK;
        const UINT n1 = ByteLength();
        const UINT n2 = F::SysStringByteLen(p);
        const std::uint64_t total = std::uint64_t{n1} + n2;
        if (total > UINT_MAX)
            return E_OUTOFMEMORY;
        return append_raw(p, n1, n2, static_cast<UINT>(total), /*whole_chars=*/false);
    }

    /// nLen raw bytes. NULL or 0 appends nothing; nLen < 0 is E_INVALIDARG.
    HRESULT AppendBytes(const char* lpsz, int nLen) noexcept {
        if (lpsz == nullptr || nLen == 0)
            return S_OK;
        if (nLen < 0)
            return E_INVALIDARG;
        const UINT n1 = ByteLength();
        const std::uint64_t total = std::uint64_t{n1} + static_cast<std::uint64_t>(nLen);
        if (total > UINT_MAX)
            return arithmetic_overflow();
        return append_raw(lpsz, n1, static_cast<std::size_t>(nLen), static_cast<UINT>(total),
                          /*whole_chars=*/false);
    }

    basic_com_bstr& operator+=(const basic_com_bstr& bstrSrc) {
        const HRESULT hr = AppendBSTR(bstrSrc.m_str);
        if (FAILED(hr))
            detail::atl_throw(hr);
        return *this;
    }

    basic_com_bstr& operator+=(LPCOLESTR pszSrc) {
        const HRESULT hr = Append(pszSrc);
        if (FAILED(hr))
            detail::atl_throw(hr);
        return *this;
    }

    /// The seed's SetLength: the string gets `length` characters; the old ones up to
    /// that length are kept, new ones are not initialised. A shrink never fails; it
    /// keeps the pointer as the BSTR heap's shrink does (sta/bstr.hpp, "Guarantees").
    HRESULT SetLength(unsigned int length) noexcept {
        return _SetLength(&m_str, length);
    }

    static HRESULT _SetLength(BSTR* str, unsigned int length) noexcept {
        return F::SysReAllocStringLen(str, nullptr, length) ? S_OK : E_OUTOFMEMORY;
    }

    // --- ownership ------------------------------------------------------------------

    void Attach(BSTR src) noexcept {
        if (m_str != src) {
            F::SysFreeString(m_str);
            m_str = src;
        }
    }

    BSTR Detach() noexcept {
        BSTR s = m_str;
        m_str = nullptr;
        return s;
    }

    /// A new BSTR with the same bytes, or NULL (for NULL, or when memory is short).
    BSTR Copy() const noexcept {
        if (m_str == nullptr)
            return nullptr;
        return F::SysAllocStringByteLen(reinterpret_cast<LPCSTR>(m_str),
                                        F::SysStringByteLen(m_str));
    }

    HRESULT CopyTo(BSTR* pbstr) const noexcept {
        if (pbstr == nullptr)
            return E_POINTER;
        *pbstr = Copy();
        if (*pbstr == nullptr && m_str != nullptr)
            return E_OUTOFMEMORY;
        return S_OK;
    }

    void Empty() noexcept {
        F::SysFreeString(m_str);
        m_str = nullptr;
    }

    unsigned int Length() const noexcept {
        return F::SysStringLen(m_str);
    }
    unsigned int ByteLength() const noexcept {
        return F::SysStringByteLen(m_str);
    }

    // --- case -----------------------------------------------------------------------

    HRESULT ToLower() noexcept {
        const UINT n = Length();
        if (n > 0) {
#if defined(_WIN32)
            ::CharLowerBuffW(m_str, n);
#else
            for (UINT i = 0; i < n; ++i)
                if (m_str[i] < 0xD800 || m_str[i] > 0xDFFF)
                    m_str[i] = static_cast<OLECHAR>(std::towlower(static_cast<wint_t>(m_str[i])));
#endif
        }
        return S_OK;
    }

    HRESULT ToUpper() noexcept {
        const UINT n = Length();
        if (n > 0) {
#if defined(_WIN32)
            ::CharUpperBuffW(m_str, n);
#else
            for (UINT i = 0; i < n; ++i)
                if (m_str[i] < 0xD800 || m_str[i] > 0xDFFF)
                    m_str[i] = static_cast<OLECHAR>(std::towupper(static_cast<wint_t>(m_str[i])));
#endif
        }
        return S_OK;
    }

    // --- operators --------------------------------------------------------------------

    operator BSTR() const noexcept {
        return m_str;
    }
    BSTR* operator&() noexcept {
        return &m_str;
    }
    bool operator!() const noexcept {
        return m_str == nullptr;
    }

    bool operator==(const basic_com_bstr& bstrSrc) const noexcept {
        return compare(m_str, bstrSrc.m_str) == 0;
    }
    bool operator==(LPCOLESTR pszSrc) const {
        return compare_sz(pszSrc) == 0;
    }
    bool operator==(LPCSTR pszSrc) const {
        const basic_com_bstr converted(pszSrc);
        return compare(m_str, converted.m_str) == 0;
    }
    bool operator==(int nNull) const noexcept {
        (void)nNull; // must be NULL: compares the pointer with NULL
        return m_str == nullptr;
    }
    bool operator==(std::nullptr_t) const noexcept {
        return m_str == nullptr;
    }

    bool operator!=(const basic_com_bstr& bstrSrc) const noexcept {
        return !(*this == bstrSrc);
    }
    bool operator!=(LPCOLESTR pszSrc) const {
        return !(*this == pszSrc);
    }
    bool operator!=(LPCSTR pszSrc) const {
        return !(*this == pszSrc);
    }
    bool operator!=(int nNull) const noexcept {
        return !(*this == nNull);
    }
    bool operator!=(std::nullptr_t) const noexcept {
        return m_str != nullptr;
    }

    bool operator<(const basic_com_bstr& bstrSrc) const noexcept {
        return compare(m_str, bstrSrc.m_str) < 0;
    }
    bool operator<(LPCOLESTR pszSrc) const {
        return compare_sz(pszSrc) < 0;
    }
    bool operator>(const basic_com_bstr& bstrSrc) const noexcept {
        return compare(m_str, bstrSrc.m_str) > 0;
    }
    bool operator>(LPCOLESTR pszSrc) const {
        return compare_sz(pszSrc) > 0;
    }

#if defined(_WIN32)
    // --- Windows only: resources, streams, VARIANT, SAFEARRAY -----------------------

    bool LoadString(HINSTANCE hInst, UINT nID) noexcept {
        const wchar_t* text = nullptr;
        const int n = ::LoadStringW(hInst, nID, reinterpret_cast<LPWSTR>(&text), 0);
        if (n <= 0 || text == nullptr) {
            Empty();
            return false;
        }
        return F::SysReAllocStringLen(&m_str, text, static_cast<UINT>(n)) != FALSE;
    }
    bool LoadString(UINT nID) noexcept {
        return LoadString(::GetModuleHandleW(nullptr), nID);
    }

    /// ATL's stream format: a ULONG byte count (data plus terminator; 0 for NULL),
    /// then the bytes.
    HRESULT WriteToStream(IStream* pStream) noexcept {
        if (pStream == nullptr)
            return E_INVALIDARG;
        const ULONG cb = m_str != nullptr ? ByteLength() + sizeof(OLECHAR) : 0;
        ULONG written = 0;
        HRESULT hr = pStream->Write(&cb, sizeof cb, &written);
        if (SUCCEEDED(hr) && cb != 0)
            hr = pStream->Write(m_str, cb, &written);
        return hr;
    }

    /// Reads what WriteToStream wrote: the count, the data, then the terminating
    /// OLECHAR, which must be 0. On failure the string is NULL and the stream is back
    /// where it was (as ATL).
    HRESULT ReadFromStream(IStream* pStream) noexcept {
        if (pStream == nullptr)
            return E_INVALIDARG;
        Empty();
        LARGE_INTEGER zero{};
        ULARGE_INTEGER start{};
        const HRESULT seek = pStream->Seek(zero, STREAM_SEEK_CUR, &start);
        ULONG cb = 0;
        ULONG got = 0;
        HRESULT hr = pStream->Read(&cb, sizeof cb, &got);
        if (SUCCEEDED(hr)) {
            if (got != sizeof cb || (cb != 0 && cb < sizeof(OLECHAR)))
                hr = E_FAIL;
            else if (cb != 0 && cb - sizeof(OLECHAR) > max_bstr_bytes)
                hr = E_OUTOFMEMORY;
            else if (cb != 0)
                hr = read_data(pStream, cb - static_cast<ULONG>(sizeof(OLECHAR)));
        }
        if (hr != S_OK && seek == S_OK) {
            LARGE_INTEGER back{};
            back.QuadPart = static_cast<LONGLONG>(start.QuadPart);
            pStream->Seek(back, STREAM_SEEK_SET, nullptr);
        }
        return hr;
    }

    ULONG GetStreamSize() const noexcept {
        return sizeof(ULONG) + (m_str != nullptr ? ByteLength() + sizeof(OLECHAR) : 0);
    }

    /// The VARIANT belongs to COM (VariantClear frees it with oleaut32), so its copy is
    /// made by oleaut32 whatever Functions this string runs on.
    HRESULT CopyTo(VARIANT* pvarDest) const noexcept {
        if (pvarDest == nullptr)
            return E_POINTER;
        pvarDest->vt = VT_BSTR;
        pvarDest->bstrVal =
            m_str == nullptr
                ? nullptr
                : ::SysAllocStringByteLen(reinterpret_cast<LPCSTR>(m_str), ByteLength());
        if (pvarDest->bstrVal == nullptr && m_str != nullptr)
            return E_OUTOFMEMORY;
        return S_OK;
    }

    /// A SAFEARRAY of VT_UI1 holding the string's bytes.
    HRESULT BSTRToArray(LPSAFEARRAY* ppArray) noexcept {
        if (ppArray == nullptr)
            return E_POINTER;
        SAFEARRAY* array = ::SafeArrayCreateVector(VT_UI1, 0, ByteLength());
        if (array == nullptr)
            return E_OUTOFMEMORY;
        void* data = nullptr;
        HRESULT hr = ::SafeArrayAccessData(array, &data);
        if (SUCCEEDED(hr)) {
            if (ByteLength() != 0)
                std::memcpy(data, m_str, ByteLength());
            ::SafeArrayUnaccessData(array);
            *ppArray = array;
        } else {
            ::SafeArrayDestroy(array);
        }
        return hr;
    }

    /// The bytes of a VT_UI1 SAFEARRAY become the string.
    HRESULT ArrayToBSTR(const SAFEARRAY* pSrc) noexcept {
        if (pSrc == nullptr)
            return E_INVALIDARG;
        void* data = nullptr;
        HRESULT hr = ::SafeArrayAccessData(const_cast<SAFEARRAY*>(pSrc), &data);
        if (FAILED(hr))
            return hr;
        const UINT bytes = pSrc->rgsabound[0].cElements;
        if (!F::SysReAllocStringByteLen(&m_str, static_cast<LPCSTR>(data), bytes))
            hr = E_OUTOFMEMORY;
        ::SafeArrayUnaccessData(const_cast<SAFEARRAY*>(pSrc));
        return hr;
    }
#endif

  private:
#if defined(_WIN32)
    /// ReadFromStream's data part: `bytes` bytes, then a 0 OLECHAR.
    HRESULT read_data(IStream* pStream, ULONG bytes) noexcept {
        m_str = F::SysAllocStringByteLen(nullptr, bytes);
        if (m_str == nullptr)
            return E_OUTOFMEMORY;
        ULONG got = 0;
        HRESULT hr = pStream->Read(m_str, bytes, &got);
        if (SUCCEEDED(hr) && got != bytes)
            hr = E_FAIL;
        if (SUCCEEDED(hr)) {
            OLECHAR terminator = 1;
            hr = pStream->Read(&terminator, sizeof terminator, &got);
            if (SUCCEEDED(hr) && (got != sizeof terminator || terminator != 0))
                hr = E_FAIL;
        }
        if (FAILED(hr))
            Empty();
        return hr;
    }
#endif

    static BSTR checked(BSTR s) {
        if (s == nullptr)
            detail::atl_throw(E_OUTOFMEMORY);
        return s;
    }

    static HRESULT arithmetic_overflow() noexcept {
        return HRESULT_FROM_WIN32(ERROR_ARITHMETIC_OVERFLOW);
    }

    /// The bytes of m_str a source may point into: the data, the pad byte of an odd
    /// length and the terminator (0 for NULL).
    std::size_t whole_bytes() const noexcept {
        const UINT bytes = ByteLength();
        return m_str != nullptr ? std::size_t{bytes} + (bytes & 1u) + sizeof(OLECHAR) : 0;
    }

    /// Grow m_str from n1 to `total` bytes and copy n2 bytes of src after the first
    /// n1. A src inside m_str is found again at its offset after the reallocation, and
    /// brings what the old string had from there to the end of its terminator, at most
    /// n2 bytes (the rule of the Sys* functions); the rest of the n2 is uninitialised.
    HRESULT append_raw(const void* src, std::size_t n1, std::size_t n2, UINT total,
                       bool whole_chars) noexcept {
        const std::size_t whole = whole_bytes();
        const bool inside = detail::points_into(src, m_str, whole);
        const std::size_t offset =
            inside ? static_cast<std::size_t>(static_cast<const char*>(src) -
                                              reinterpret_cast<const char*>(m_str))
                   : 0;
        const std::size_t copied = inside && whole - offset < n2 ? whole - offset : n2;
        const bool grown = whole_chars
                               ? F::SysReAllocStringLen(&m_str, nullptr, total / 2) != FALSE
                               : F::SysReAllocStringByteLen(&m_str, nullptr, total) != FALSE;
        if (!grown)
            return E_OUTOFMEMORY;
        char* base = reinterpret_cast<char*>(m_str);
        std::memmove(base + n1, inside ? base + offset : static_cast<const char*>(src), copied);
        return S_OK;
    }

    /// A new BSTR from n narrow bytes (UTF-8 on Linux, ANSI on Windows), or NULL.
    static BSTR convert(const char* s, std::size_t n) noexcept {
        BSTR out = nullptr;
        if (!convert_into(&out, 0, s, n))
            return nullptr;
        return out;
    }

    /// Make *target n0 + (converted length) characters long and convert s after the
    /// first n0. The source must not lie in *target. FALSE when memory is short.
    static bool convert_into(BSTR* target, UINT n0, const char* s, std::size_t n) noexcept {
#if defined(_WIN32)
        const int units =
            n == 0 ? 0 : ::MultiByteToWideChar(CP_ACP, 0, s, static_cast<int>(n), nullptr, 0);
        if (n != 0 && units <= 0)
            return false;
#else
        const std::size_t units = detail::utf8_to_utf16(s, n, nullptr);
#endif
        const std::uint64_t total = std::uint64_t{n0} + static_cast<std::uint64_t>(units);
        if (total > max_bstr_chars)
            return false;
        if (!F::SysReAllocStringLen(target, nullptr, static_cast<UINT>(total)))
            return false;
#if defined(_WIN32)
        if (units > 0)
            ::MultiByteToWideChar(CP_ACP, 0, s, static_cast<int>(n), *target + n0, units);
#else
        detail::utf8_to_utf16(s, n, *target + n0);
#endif
        return true;
    }

    HRESULT assign_converted(const char* s, std::size_t n) noexcept {
        if (detail::points_into(s, m_str, whole_bytes())) {
            BSTR fresh = convert(s, n);
            if (fresh == nullptr)
                return E_OUTOFMEMORY;
            Attach(fresh);
            return S_OK;
        }
        return convert_into(&m_str, 0, s, n) ? S_OK : E_OUTOFMEMORY;
    }

    HRESULT append_converted(const char* s, std::size_t n) noexcept {
        if (n == 0)
            return S_OK; // ATL appends "" through AppendBSTR, which skips it
        if (detail::points_into(s, m_str, whole_bytes())) {
            basic_com_bstr copy;
            copy.m_str = convert(s, n);
            if (copy.m_str == nullptr)
                return E_OUTOFMEMORY;
            return AppendBSTR(copy.m_str);
        }
        if (m_str == nullptr)
            return convert_into(&m_str, 0, s, n) ? S_OK : E_OUTOFMEMORY;
        // Keep the string unchanged on failure: convert_into only touches it on success.
        return convert_into(&m_str, Length(), s, n) ? S_OK : E_OUTOFMEMORY;
    }

    /// <0, 0, >0 like VarBstrCmp: NULL equals empty. Linux: ordinal, whole length.
    static int compare(BSTR a, BSTR b) noexcept {
#if defined(_WIN32)
        const HRESULT r = ::VarBstrCmp(a, b, LOCALE_USER_DEFAULT, 0);
        return r == static_cast<HRESULT>(VARCMP_LT)   ? -1
               : r == static_cast<HRESULT>(VARCMP_GT) ? 1
                                                      : 0;
#else
        return compare_units(a, F::SysStringLen(a), b, F::SysStringLen(b));
#endif
    }

    /// Against a zero-terminated string (NULL is empty).
    int compare_sz(LPCOLESTR p) const {
#if defined(_WIN32)
        const basic_com_bstr other(p);
        return compare(m_str, other.m_str);
#else
        return compare_units(m_str, Length(), p, p == nullptr ? 0u : detail::olestr_length(p));
#endif
    }

    static int compare_units(const OLECHAR* a, UINT na, const OLECHAR* b, UINT nb) noexcept {
        const UINT n = na < nb ? na : nb;
        for (UINT i = 0; i < n; ++i)
            if (a[i] != b[i])
                return a[i] < b[i] ? -1 : 1;
        return na < nb ? -1 : na > nb ? 1 : 0;
    }
};

/// ATL's name, over the default BSTR functions (see sta/bstr.hpp, STA_BSTR_POOL).
using CComBSTR = basic_com_bstr<default_bstr_functions>;

static_assert(sizeof(CComBSTR) == sizeof(BSTR), "CComBSTR is exactly one BSTR");

} // namespace sta
