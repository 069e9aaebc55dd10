// sta-pool: BSTR and the OLE Automation string functions, portable.
//
// What lives here:
//   sta::OLECHAR, sta::BSTR, sta::HRESULT and friends (the Windows types; on Windows
//   they are the SDK's own, wchar_t based, and TRUE, FALSE, S_OK ... stay the SDK's
//   macros, so write them unqualified), and the eight functions with their Windows signatures:
//   SysAllocString, SysAllocStringLen, SysAllocStringByteLen, SysReAllocString,
//   SysReAllocStringLen, SysFreeString, SysStringLen, SysStringByteLen.
//
// The allocation backend is pluggable:
//   sta::bstr_heap::system           malloc / realloc / free (Linux only, the default
//                                    there)
//   sta::bstr_heap::pool<Pool>       sta::memory_pool (or any tagged pool), on Linux and
//                                    Windows; the byte count in front of the string
//                                    tells the pool the block's size, so there is no
//                                    header beyond the BSTR's own.
// `sta::bstr_functions<Heap>` holds the functions as static members over a heap, so one
// program can use several side by side (the benchmark and the tests do), and
// `sta::oleaut32_bstr_functions` (Windows only) forwards them to oleaut32's own. The
// plain names `sta::SysAllocString` ... use `sta::default_bstr_functions`:
//   Linux:   the pool heap when STA_BSTR_POOL is 1, the system heap otherwise;
//   Windows: always oleaut32 (STA_BSTR_POOL is ignored there), so sta::CComBSTR's
//            strings can be handed to COM. sta::basic_com_bstr<bstr_functions<
//            bstr_heap::pool<>>> is the pool-backed string for code that keeps its
//            strings to itself.
// A BSTR must be freed and reallocated through the same functions that made it; a pool
// BSTR also belongs to the pool's owner thread.
//
// Memory layout (as on Windows: Win64 on 64-bit targets, Win32 on 32-bit ones):
//
//   block --> +----------+-------------+------------------------+-------+---------+
//             | pad word | uint32 byte | byte_len bytes of data | 0x00  | 0x0000  |
//             | (64-bit  | count       | (UTF-16, or any bytes) | (odd  | NUL     |
//             | only: 0) |             |                        | only) | OLECHAR |
//             +----------+-------------+------------------------+-------+---------+
//             |<--- sizeof(void*) ---->|
//                                      ^ the BSTR points here: block + sizeof(void*)
//
// The header is pointer-sized and ends with the byte count (oleaut32's Win64 header has
// the same pad word), so the count is always at BSTR - 4 and, a heap's blocks being
// aligned to at least sizeof(void*) (malloc and the pool give 16), every BSTR is aligned
// to sizeof(void*), whatever its length: 8 on 64-bit targets, 4 on 32-bit ones. The
// block is sizeof(void*) + byte_len + (byte_len & 1) + 2 bytes.
//
// Documented behaviour kept (Microsoft's pages on each function):
//   - SysAllocString(NULL) is NULL; SysAllocString(u"") is an empty, non-NULL BSTR.
//   - SysStringLen / SysStringByteLen of NULL are 0; SysFreeString(NULL) does nothing.
//   - The Len / ByteLen functions copy embedded NULs and need no terminator in the
//     source; a NULL source gives a string of the requested length. (Windows leaves it
//     uninitialised; the Alloc functions here zero it, the ReAlloc ones keep the old
//     contents and leave the new tail uninitialised, as SetLength relies on.)
//   - SysAllocStringByteLen with an odd length: the byte after the data is 0 and the
//     OLECHAR after that is 0 too ("the extra zero"), so SysStringLen rounds down.
//   - Undocumented, but what Windows and wine do (some programs rely on it): a source
//     equal to the string itself, SysReAllocStringLen(&b, b, n), keeps the content. The
//     block is resized, the old characters stay (up to n), the tail past them is
//     uninitialised and the terminator is written at n, for any n.
// Guarantees beyond the documentation:
//   - Any other source pointing inside the block being reallocated works too (Microsoft
//     says "unexpected results"), whatever the length asked for: the new string starts
//     with the old block's bytes from the source to the end of the old block (the rest
//     of the data, the pad byte, the terminator), at most the new length; any further
//     tail is uninitialised. Nothing is read outside the old block. (A growth resizes
//     the block and then moves the bytes to the front; a shrink that cannot fail moves
//     them first; one that may fail fills a new block before the old one is freed.)
//   - Shrinking never fails and keeps the pointer on the system heap always; on the
//     pool heap while the block stays within the pool's size classes (<= 32 KiB) on the
//     shared-cursor layout, and within one class on spans (a shrink into a smaller
//     class moves the string there, or keeps it where it is when no memory is left).
//   - A failed (re)allocation returns NULL / FALSE and leaves *pbstr untouched.
//   - Lengths above max_bstr_bytes (just under 2 GiB, as on Windows) fail cleanly with
//     NULL / FALSE before any arithmetic can overflow. A NULL pbstr gives FALSE
//     (Windows would crash).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "sta/memory_pool.hpp"

#if defined(_WIN32)
// windows.h first (sta/memory_pool.hpp may already have brought it in, lean), then
// ole2.h for oleauto.h and the COM types it needs. Nothing here is declared at global
// scope or as a macro before them: the SDK's BSTR, OLECHAR, HRESULT, S_OK, TRUE ...
// are used as they are.
#include <windows.h>

#include <ole2.h>
#include <oleauto.h>
#endif

#ifndef STA_BSTR_POOL
#define STA_BSTR_POOL 0
#endif

namespace sta {

// ---------------------------------------------------------------------------------
// Types and result codes.
// ---------------------------------------------------------------------------------
#if defined(_WIN32)
using ::BSTR;
using ::HRESULT;
using ::INT;
using ::LPCOLESTR;
using ::LPCSTR;
using ::LPOLESTR;
using ::OLECHAR;
using ::UINT;
#define STA_OLESTR(s) L##s
#else
using OLECHAR = char16_t;
using BSTR = OLECHAR*;
using LPOLESTR = OLECHAR*;
using LPCOLESTR = const OLECHAR*;
using LPCSTR = const char*;
using INT = int;
using UINT = unsigned int;
using HRESULT = std::int32_t;
#define STA_OLESTR(s) u##s

inline constexpr INT TRUE = 1;
inline constexpr INT FALSE = 0;

inline constexpr HRESULT S_OK = 0;
inline constexpr HRESULT S_FALSE = 1;
inline constexpr HRESULT E_NOTIMPL = static_cast<HRESULT>(0x80004001u);
inline constexpr HRESULT E_POINTER = static_cast<HRESULT>(0x80004003u);
inline constexpr HRESULT E_FAIL = static_cast<HRESULT>(0x80004005u);
inline constexpr HRESULT E_UNEXPECTED = static_cast<HRESULT>(0x8000FFFFu);
inline constexpr HRESULT E_OUTOFMEMORY = static_cast<HRESULT>(0x8007000Eu);
inline constexpr HRESULT E_INVALIDARG = static_cast<HRESULT>(0x80070057u);
inline constexpr std::uint32_t ERROR_ARITHMETIC_OVERFLOW = 534;

constexpr HRESULT HRESULT_FROM_WIN32(std::uint32_t error) noexcept {
    return error == 0 ? 0 : static_cast<HRESULT>((error & 0xFFFFu) | 0x80070000u);
}
constexpr bool SUCCEEDED(HRESULT hr) noexcept {
    return hr >= 0;
}
constexpr bool FAILED(HRESULT hr) noexcept {
    return hr < 0;
}
#endif

static_assert(sizeof(OLECHAR) == 2, "a BSTR holds 16-bit code units");

/// The largest byte length a BSTR may have: the whole block (prefix, data, padding,
/// terminator) stays below 2 GiB. Longer requests fail with NULL / FALSE.
inline constexpr std::uint32_t max_bstr_bytes = 0x7FFFFFF0u;
/// The largest length in characters (SysAllocStringLen, SysReAllocStringLen).
inline constexpr std::uint32_t max_bstr_chars = max_bstr_bytes / 2;

// ---------------------------------------------------------------------------------
// Heaps: where BSTR blocks come from. Each has static alloc / realloc / free taking
// block sizes, and says which shrinks can never fail.
// ---------------------------------------------------------------------------------
namespace bstr_heap {

#if !defined(_WIN32)
/// malloc / realloc / free. A shrink keeps the block as it is (free needs no size), so
/// it never moves and never fails; the spare bytes come back at SysFreeString.
struct system {
    static void* alloc(std::size_t bytes) noexcept { return std::malloc(bytes); }
    static void* realloc(void* p, std::size_t old_bytes, std::size_t new_bytes) noexcept {
        if (new_bytes <= old_bytes)
            return p;
        return std::realloc(p, new_bytes);
    }
    static void free(void* p, std::size_t /*bytes*/) noexcept { std::free(p); }
    static constexpr bool shrink_never_fails(std::size_t old_bytes,
                                             std::size_t new_bytes) noexcept {
        return new_bytes <= old_bytes;
    }
};
#endif // !_WIN32 (on Windows the system's BSTR heap is oleaut32's: oleaut32_bstr_functions)

/// A sta::memory_pool (or a tagged basic_memory_pool). The block size is derived from
/// the BSTR's byte count, so the sized free and realloc need no header of their own.
/// Up to 32 KiB the block is asked for as its whole size class (Pool::classes), so growth
/// within the class keeps the block without calling the pool at all. Above, sizes are rounded up to
/// steps of 1/8 of their power of two (at most 12.5% spare), so a string that keeps growing
/// reallocates O(log n) times instead of on every append.
template <class Pool = memory_pool>
struct pool {
    static constexpr std::size_t capacity(std::size_t bytes) noexcept {
        if (bytes <= Pool::max_pooled_bytes)
            return detail::bytes_of_size<typename Pool::classes>(bytes);
        const std::size_t step = std::bit_floor(bytes) / 8;
        return (bytes + step - 1) / step * step;
    }
    static void* alloc(std::size_t bytes) noexcept { return Pool::alloc(capacity(bytes)); }
    static void* realloc(void* p, std::size_t old_bytes, std::size_t new_bytes) noexcept {
        const std::size_t old_capacity = capacity(old_bytes);
        const std::size_t new_capacity = capacity(new_bytes);
        if (old_capacity == new_capacity)
            return p;
        return Pool::realloc(p, old_capacity, new_capacity);
    }
    static void free(void* p, std::size_t bytes) noexcept { Pool::free(p, capacity(bytes)); }
    /// The pool promises an infallible shrink within its size classes (in place on the
    /// shared cursor; into the smaller class, or in place, on spans) and, above them,
    /// within one capacity step.
    static constexpr bool shrink_never_fails(std::size_t old_bytes,
                                             std::size_t new_bytes) noexcept {
        return new_bytes <= old_bytes &&
               (old_bytes <= Pool::max_pooled_bytes || capacity(old_bytes) == capacity(new_bytes));
    }
};

} // namespace bstr_heap

namespace detail {

/// Bytes in front of the data: pointer-sized, the uint32 byte count in its last 4 bytes
/// (on 64-bit a pad word comes first), so a BSTR is as aligned as a pointer.
inline constexpr std::size_t bstr_header_bytes = sizeof(void*);
/// Where the byte count sits, counted back from the BSTR.
inline constexpr std::size_t bstr_count_bytes = sizeof(std::uint32_t);
static_assert(bstr_header_bytes >= bstr_count_bytes && bstr_header_bytes % 4 == 0,
              "the byte count ends a header of whole 32-bit words");

/// Bytes of the block behind a BSTR of `byte_len` bytes: header, data, the pad byte
/// when odd, the 2-byte terminator.
constexpr std::size_t bstr_block_bytes(std::uint32_t byte_len) noexcept {
    return bstr_header_bytes + byte_len + (byte_len & 1u) + sizeof(OLECHAR);
}

inline std::byte* bstr_block_of(BSTR s) noexcept {
    return reinterpret_cast<std::byte*>(s) - bstr_header_bytes;
}

inline std::uint32_t bstr_byte_len(const OLECHAR* s) noexcept {
    std::uint32_t n;
    std::memcpy(&n, reinterpret_cast<const std::byte*>(s) - bstr_count_bytes, sizeof n);
    return n;
}

/// Write the header and the terminator of a block that holds `byte_len` bytes of data:
/// the pad word is 0, the byte after the data is 0, and so is the OLECHAR after the
/// (rounded-up) data.
inline BSTR bstr_finish(std::byte* block, std::uint32_t byte_len) noexcept {
    std::memset(block, 0, bstr_header_bytes - bstr_count_bytes);
    std::memcpy(block + bstr_header_bytes - bstr_count_bytes, &byte_len, sizeof byte_len);
    std::byte* data = block + bstr_header_bytes;
    data[byte_len] = std::byte{0};
    const std::size_t end = byte_len + (byte_len & 1u);
    data[end] = std::byte{0};
    data[end + 1] = std::byte{0};
    return reinterpret_cast<BSTR>(data);
}

/// True when p lies in [first, first + bytes): is this source inside that string? Ordered
/// through std::less, which is total even for unrelated pointers.
inline bool points_into(const void* p, const void* first, std::size_t bytes) noexcept {
    if (p == nullptr || first == nullptr)
        return false;
    const auto* b = static_cast<const unsigned char*>(first);
    const auto* q = static_cast<const unsigned char*>(p);
    return !std::less<const unsigned char*>{}(q, b) &&
           std::less<const unsigned char*>{}(q, b + bytes);
}

inline std::uint32_t olestr_length(const OLECHAR* s) noexcept {
    const OLECHAR* p = s;
    while (*p != 0)
        ++p;
    const auto n = static_cast<std::size_t>(p - s);
    return n > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<std::uint32_t>(n);
}

} // namespace detail

// ---------------------------------------------------------------------------------
// The functions over one heap.
// ---------------------------------------------------------------------------------

/// The OLE Automation string functions over `Heap`. Static members with the Windows
/// names and signatures, plus one extension (SysReAllocStringByteLen).
///
/// Invariants of every BSTR made here (non-NULL):
///   - it points bstr_header_bytes (sizeof(void*)) into a block of exactly
///     bstr_block_bytes(n) bytes from Heap, where n = the uint32 at BSTR - 4 =
///     SysStringByteLen, n <= max_bstr_bytes; so it is aligned to sizeof(void*);
///   - data byte n is 0 and the OLECHAR at index ceil(n / 2) is 0.
/// layout_problem (tests/support/bstr_test_support.hpp) verifies all of it.
template <class Heap>
struct bstr_functions {
    using heap = Heap;

    static BSTR SysAllocString(const OLECHAR* psz) noexcept {
        if (psz == nullptr)
            return nullptr;
        const std::uint32_t len = detail::olestr_length(psz);
        if (len > max_bstr_chars)
            return nullptr;
        return allocate(psz, len * 2u);
    }

    static BSTR SysAllocStringLen(const OLECHAR* strIn, UINT ui) noexcept {
        if (ui > max_bstr_chars)
            return nullptr;
        return allocate(strIn, ui * 2u);
    }

    static BSTR SysAllocStringByteLen(LPCSTR psz, UINT len) noexcept {
        if (len > max_bstr_bytes)
            return nullptr;
        return allocate(psz, len);
    }

    static INT SysReAllocString(BSTR* pbstr, const OLECHAR* psz) noexcept {
        // A NULL source reallocates to an empty string.
        const std::uint32_t len = psz == nullptr ? 0 : detail::olestr_length(psz);
        if (len > max_bstr_chars)
            return FALSE;
        return reallocate(pbstr, psz, len * 2u);
    }

    static INT SysReAllocStringLen(BSTR* pbstr, const OLECHAR* psz, unsigned int len) noexcept {
        if (len > max_bstr_chars)
            return FALSE;
        return reallocate(pbstr, psz, len * 2u);
    }

    /// sta extension (no oleaut32 twin): SysReAllocStringLen counted in bytes, so odd
    /// byte lengths survive; CComBSTR's byte-wise members grow through it.
    static INT SysReAllocStringByteLen(BSTR* pbstr, LPCSTR psz, unsigned int len) noexcept {
        if (len > max_bstr_bytes)
            return FALSE;
        return reallocate(pbstr, psz, len);
    }

    static void SysFreeString(BSTR bstrString) noexcept {
        if (bstrString == nullptr)
            return;
        Heap::free(detail::bstr_block_of(bstrString),
                   detail::bstr_block_bytes(detail::bstr_byte_len(bstrString)));
    }

    static UINT SysStringLen(BSTR pbstr) noexcept {
        return pbstr == nullptr ? 0u : detail::bstr_byte_len(pbstr) / 2u;
    }

    static UINT SysStringByteLen(BSTR bstr) noexcept {
        return bstr == nullptr ? 0u : detail::bstr_byte_len(bstr);
    }

  private:
    /// A new BSTR of `bytes` bytes copied from `src` (zeroed when src is NULL).
    static BSTR allocate(const void* src, std::uint32_t bytes) noexcept {
        auto* block = static_cast<std::byte*>(Heap::alloc(detail::bstr_block_bytes(bytes)));
        if (block == nullptr)
            return nullptr;
        std::byte* data = block + detail::bstr_header_bytes;
        if (src != nullptr)
            std::memcpy(data, src, bytes);
        else
            std::memset(data, 0, bytes);
        return detail::bstr_finish(block, bytes);
    }

    /// *pbstr becomes `new_bytes` bytes copied from `src`; a NULL src, or src == *pbstr,
    /// keeps the old bytes (up to new_bytes); a src elsewhere in the old block brings the
    /// bytes from it to the block's end (see "Guarantees" above). FALSE, with *pbstr
    /// untouched, when memory is short.
    static INT reallocate(BSTR* pbstr, const void* src, std::uint32_t new_bytes) noexcept {
        if (pbstr == nullptr)
            return FALSE;
        if (*pbstr == nullptr) {
            BSTR fresh = allocate(src, new_bytes);
            if (fresh == nullptr)
                return FALSE;
            *pbstr = fresh;
            return TRUE;
        }
        std::byte* const block = detail::bstr_block_of(*pbstr);
        const std::size_t old_block = detail::bstr_block_bytes(detail::bstr_byte_len(*pbstr));
        // The string itself keeps its content, as a NULL source does. Compared as
        // addresses: a pointer compare would let g++ -O3 carry "block is src" into the
        // branch and warn that a literal source gets realloc'd (-Wfree-nonheap-object).
        if (reinterpret_cast<std::uintptr_t>(src) == reinterpret_cast<std::uintptr_t>(*pbstr))
            src = nullptr;
        else if (detail::points_into(src, block, old_block))
            return reallocate_from_inside(pbstr, static_cast<const std::byte*>(src), new_bytes);
        auto* moved = static_cast<std::byte*>(
            Heap::realloc(block, old_block, detail::bstr_block_bytes(new_bytes)));
        if (moved == nullptr)
            return FALSE;
        if (src != nullptr)
            std::memcpy(moved + detail::bstr_header_bytes, src, new_bytes);
        *pbstr = detail::bstr_finish(moved, new_bytes);
        return TRUE;
    }

    /// reallocate with a source `s` inside the old block, past the string's start: what
    /// it has up to the block's end, at most new_bytes, goes to the front of the data.
    /// Out of line: the appends' path (a NULL source) stays small enough to inline.
    STA_COLD static INT reallocate_from_inside(BSTR* pbstr, const std::byte* s,
                                               std::uint32_t new_bytes) noexcept {
        constexpr std::size_t header = detail::bstr_header_bytes;
        std::byte* const block = detail::bstr_block_of(*pbstr);
        const std::size_t old_block = detail::bstr_block_bytes(detail::bstr_byte_len(*pbstr));
        const std::size_t new_block = detail::bstr_block_bytes(new_bytes);
        const auto offset = static_cast<std::size_t>(s - block);
        const std::size_t kept = std::min<std::size_t>(new_bytes, old_block - offset);
        if (new_block > old_block) {
            // A growth keeps all of the old block's bytes, wherever it lands: move after.
            auto* moved = static_cast<std::byte*>(Heap::realloc(block, old_block, new_block));
            if (moved == nullptr)
                return FALSE;
            std::memmove(moved + header, moved + offset, kept);
            *pbstr = detail::bstr_finish(moved, new_bytes);
            return TRUE;
        }
        if (Heap::shrink_never_fails(old_block, new_block)) {
            // Move the kept bytes to the front first, then shrink: the shrink cannot
            // fail, and where it moves the block it carries the front with it.
            std::memmove(block + header, s, kept);
            auto* same = static_cast<std::byte*>(Heap::realloc(block, old_block, new_block));
            *pbstr = detail::bstr_finish(same, new_bytes);
            return TRUE;
        }
        // A shrink that may move or fail: fill a new block before the old one goes.
        auto* fresh = static_cast<std::byte*>(Heap::alloc(new_block));
        if (fresh == nullptr)
            return FALSE;
        std::memcpy(fresh + header, s, kept);
        SysFreeString(*pbstr);
        *pbstr = detail::bstr_finish(fresh, new_bytes);
        return TRUE;
    }
};

#if !defined(_WIN32)
#if STA_BSTR_POOL
using default_bstr_functions = bstr_functions<bstr_heap::pool<>>;
#else
using default_bstr_functions = bstr_functions<bstr_heap::system>;
#endif

#else // _WIN32

/// oleaut32's own functions, behind the same static-member interface. Each forwards
/// to its oleaut32 twin, with sta's guarantees added in front where oleaut32 has none:
///   - lengths above max_bstr_bytes give NULL / FALSE (oleaut32 only rejects sizes that
///     wrap a UINT, and would try to allocate up to 4 GiB);
///   - a NULL pbstr gives FALSE (oleaut32 dereferences it);
///   - the Alloc functions zero a string made from a NULL source (Windows leaves it
///     uninitialised);
///   - SysReAllocString goes through oleaut32's SysReAllocStringLen, so a NULL source
///     gives an empty string and a failure leaves *pbstr untouched (wine's
///     SysReAllocString frees the old string before allocating the new one);
///   - a source equal to *pbstr keeps the content (oleaut32's own rule, made explicit:
///     it is passed on as a NULL source);
///   - any other source inside *pbstr is copied to a new string before the old one is
///     freed, the bytes from it to the end of the old terminator, at most the new length
///     (Microsoft: "unexpected results"; wine reads it after CoTaskMemRealloc moved it).
/// Strings made here are oleaut32's: they can be handed to COM, and come back from it.
struct oleaut32_bstr_functions {
    static BSTR SysAllocString(const OLECHAR* psz) noexcept {
        if (psz == nullptr)
            return nullptr;
        const std::uint32_t len = detail::olestr_length(psz);
        return len > max_bstr_chars ? nullptr : ::SysAllocStringLen(psz, len);
    }
    static BSTR SysAllocStringLen(const OLECHAR* strIn, UINT ui) noexcept {
        if (ui > max_bstr_chars)
            return nullptr;
        BSTR s = ::SysAllocStringLen(strIn, ui);
        if (s != nullptr && strIn == nullptr)
            std::memset(s, 0, std::size_t{ui} * sizeof(OLECHAR));
        return s;
    }
    static BSTR SysAllocStringByteLen(LPCSTR psz, UINT len) noexcept {
        if (len > max_bstr_bytes)
            return nullptr;
        BSTR s = ::SysAllocStringByteLen(psz, len);
        if (s != nullptr && psz == nullptr)
            std::memset(s, 0, len);
        return s;
    }
    static INT SysReAllocString(BSTR* pbstr, const OLECHAR* psz) noexcept {
        const std::uint32_t len = psz == nullptr ? 0 : detail::olestr_length(psz);
        if (len > max_bstr_chars)
            return FALSE;
        return SysReAllocStringLen(pbstr, psz, len);
    }
    static INT SysReAllocStringLen(BSTR* pbstr, const OLECHAR* psz, unsigned int len) noexcept {
        if (pbstr == nullptr || len > max_bstr_chars)
            return FALSE;
        if (psz != nullptr && psz == *pbstr)
            psz = nullptr; // the string itself: keep its content
        const std::size_t bytes = std::size_t{len} * sizeof(OLECHAR);
        const std::size_t room = room_after(*pbstr, psz);
        if (room != 0)
            return replace(pbstr, fresh_from(psz, std::min(room, bytes), bytes));
        return ::SysReAllocStringLen(pbstr, psz, len);
    }
    /// sta extension: oleaut32 has no byte-wise realloc. Even lengths from an outside
    /// source (or none) grow through SysReAllocStringLen; odd lengths, and sources inside
    /// the string, are allocated, copied and then the old string is freed.
    static INT SysReAllocStringByteLen(BSTR* pbstr, LPCSTR psz, unsigned int len) noexcept {
        if (pbstr == nullptr || len > max_bstr_bytes)
            return FALSE;
        const void* src = psz;
        if (src != nullptr && src == *pbstr)
            src = nullptr; // the string itself: keep its content
        std::size_t room = room_after(*pbstr, src);
        if (len % 2 == 0 && room == 0) {
            if (!::SysReAllocStringLen(pbstr, nullptr, len / 2))
                return FALSE;
            if (src != nullptr)
                std::memcpy(*pbstr, src, len);
            return TRUE;
        }
        if (src == nullptr && *pbstr != nullptr) // keep the old bytes
            src = *pbstr, room = room_after(*pbstr, *pbstr);
        const std::size_t kept = room != 0        ? std::min<std::size_t>(room, len)
                                 : src != nullptr ? std::size_t{len}
                                                  : 0;
        return replace(pbstr, fresh_from(src, kept, len));
    }
    static void SysFreeString(BSTR bstrString) noexcept { ::SysFreeString(bstrString); }
    static UINT SysStringLen(BSTR pbstr) noexcept { return ::SysStringLen(pbstr); }
    static UINT SysStringByteLen(BSTR bstr) noexcept { return ::SysStringByteLen(bstr); }

  private:
    /// When `src` points into s's data, pad byte or terminator: the bytes from src to
    /// the end of the terminator. Otherwise 0.
    static std::size_t room_after(BSTR s, const void* src) noexcept {
        if (s == nullptr)
            return 0;
        const UINT bytes = ::SysStringByteLen(s);
        const std::size_t whole = std::size_t{bytes} + (bytes & 1u) + sizeof(OLECHAR);
        if (!detail::points_into(src, s, whole))
            return 0;
        return whole - static_cast<std::size_t>(static_cast<const char*>(src) -
                                                reinterpret_cast<const char*>(s));
    }
    /// A new oleaut32 string of `bytes` bytes whose first `kept` bytes come from src (the
    /// rest as oleaut32 gives it), or NULL.
    static BSTR fresh_from(const void* src, std::size_t kept, std::size_t bytes) noexcept {
        BSTR s = ::SysAllocStringByteLen(nullptr, static_cast<UINT>(bytes));
        if (s != nullptr && kept != 0)
            std::memcpy(s, src, kept);
        return s;
    }
    /// *pbstr becomes `fresh` (the old string freed), or stays when fresh is NULL.
    static INT replace(BSTR* pbstr, BSTR fresh) noexcept {
        if (fresh == nullptr)
            return FALSE;
        ::SysFreeString(*pbstr);
        *pbstr = fresh;
        return TRUE;
    }
};

using default_bstr_functions = oleaut32_bstr_functions;

#endif // _WIN32

// ---------------------------------------------------------------------------------
// The plain names: sta::SysAllocString(...) and so on, over the default functions.
// ---------------------------------------------------------------------------------

inline BSTR SysAllocString(const OLECHAR* psz) noexcept {
    return default_bstr_functions::SysAllocString(psz);
}
inline BSTR SysAllocStringLen(const OLECHAR* strIn, UINT ui) noexcept {
    return default_bstr_functions::SysAllocStringLen(strIn, ui);
}
inline BSTR SysAllocStringByteLen(LPCSTR psz, UINT len) noexcept {
    return default_bstr_functions::SysAllocStringByteLen(psz, len);
}
inline INT SysReAllocString(BSTR* pbstr, const OLECHAR* psz) noexcept {
    return default_bstr_functions::SysReAllocString(pbstr, psz);
}
inline INT SysReAllocStringLen(BSTR* pbstr, const OLECHAR* psz, unsigned int len) noexcept {
    return default_bstr_functions::SysReAllocStringLen(pbstr, psz, len);
}
inline void SysFreeString(BSTR bstrString) noexcept {
    default_bstr_functions::SysFreeString(bstrString);
}
inline UINT SysStringLen(BSTR pbstr) noexcept {
    return default_bstr_functions::SysStringLen(pbstr);
}
inline UINT SysStringByteLen(BSTR bstr) noexcept {
    return default_bstr_functions::SysStringByteLen(bstr);
}

} // namespace sta
