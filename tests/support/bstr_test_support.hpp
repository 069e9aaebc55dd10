// Helpers shared by the BSTR tests: heaps that fail on demand and count what they do,
// the two variants every test runs on, and a layout checker.
//
// The variants: "system", "pool" and "pool_spans". On Linux "system" is
// bstr_heap::system (malloc), "pool" is bstr_heap::pool<test_pool> (the shared-cursor
// layout) and "pool_spans" the same over the span layout, all wrapped in a counting
// heap that can refuse memory. On Windows "system" is oleaut32 (sta::oleaut32_bstr_functions): its
// allocator can be neither counted nor made to fail, so tests that inject
// out-of-memory skip it (GTEST_SKIP, see skip_unless_counted) and heap counts are only
// checked where `counted<F>` holds; "pool" is the portable implementation, as on Linux.
#pragma once

#include "sta/bstr.hpp"
#include "sta/memory_pool.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace sta_test {

/// Wraps a BSTR heap: refuses growth once `grants_left` reaches 0 (-1: never), and
/// counts allocations, reallocations, frees and live blocks.
/// Invariant: live == successful allocs - frees; a test that leaks ends with live != 0.
template <class Heap, class Tag>
struct counting_heap {
    static inline long grants_left = -1;
    static inline long allocs = 0;
    static inline long reallocs = 0;
    static inline long frees = 0;
    static inline long live = 0;
    static inline std::size_t last_request = 0;

    static void reset() noexcept { grants_left = -1, allocs = reallocs = frees = live = 0; }
    static bool refuse() noexcept {
        if (grants_left < 0)
            return false;
        if (grants_left == 0)
            return true;
        --grants_left;
        return false;
    }
    static void* alloc(std::size_t bytes) noexcept {
        last_request = bytes;
        if (refuse())
            return nullptr;
        void* p = Heap::alloc(bytes);
        if (p != nullptr)
            ++allocs, ++live;
        return p;
    }
    static void* realloc(void* p, std::size_t old_bytes, std::size_t new_bytes) noexcept {
        last_request = new_bytes;
        if (new_bytes > old_bytes && refuse())
            return nullptr;
        void* q = Heap::realloc(p, old_bytes, new_bytes);
        if (q != nullptr)
            ++reallocs;
        return q;
    }
    static void free(void* p, std::size_t bytes) noexcept {
        ++frees, --live;
        Heap::free(p, bytes);
    }
    static constexpr bool shrink_never_fails(std::size_t old_bytes,
                                             std::size_t new_bytes) noexcept {
        return Heap::shrink_never_fails(old_bytes, new_bytes);
    }
};

struct system_tag {};
struct pool_tag {};
struct spans_pool_tag {};
/// The pools the pool-heap tests use, one per layout: tagged pools of their own.
using test_pool =
    sta::basic_memory_pool<sta::dispatch::default_policy, pool_tag, sta::layout::shared_cursor>;
using spans_test_pool =
    sta::basic_memory_pool<sta::dispatch::default_policy, spans_pool_tag, sta::layout::spans>;

using pool_heap = counting_heap<sta::bstr_heap::pool<test_pool>, pool_tag>;
using pool_functions = sta::bstr_functions<pool_heap>;
using spans_pool_heap = counting_heap<sta::bstr_heap::pool<spans_test_pool>, spans_pool_tag>;
using spans_pool_functions = sta::bstr_functions<spans_pool_heap>;

#if defined(_WIN32)
/// Stands in for the heap of oleaut32's functions: nothing is counted and nothing can
/// be refused (grants_left is ignored); tests check `counted<F>` first.
struct oleaut32_heap {
    static inline long grants_left = -1;
    static inline long allocs = 0;
    static inline long reallocs = 0;
    static inline long frees = 0;
    static inline long live = 0;
    static inline std::size_t last_request = 0;
    static void reset() noexcept { grants_left = -1, allocs = reallocs = frees = live = 0; }
};
struct system_functions : sta::oleaut32_bstr_functions {
    using heap = oleaut32_heap;
};

/// True when running under wine (its ntdll exports wine_get_version).
inline bool under_wine() {
    const HMODULE ntdll = ::GetModuleHandleA("ntdll.dll");
    return ntdll != nullptr && ::GetProcAddress(ntdll, "wine_get_version") != nullptr;
}
#else
using system_heap = counting_heap<sta::bstr_heap::system, system_tag>;
using system_functions = sta::bstr_functions<system_heap>;
#endif

/// Does F run on a counting heap (one that counts blocks and can refuse memory)?
#if defined(_WIN32)
template <class F>
inline constexpr bool counted = !std::is_same_v<typename F::heap, oleaut32_heap>;
#else
template <class F>
inline constexpr bool counted = true;
#endif

/// A string of OLECHARs (std::u16string on Linux, std::wstring on Windows).
using ostring = std::basic_string<sta::OLECHAR>;

using bstr_variants = ::testing::Types<system_functions, pool_functions, spans_pool_functions>;

struct bstr_variant_names {
    template <class T>
    static std::string GetName(int) {
        return std::is_same_v<T, system_functions> ? "system"
               : std::is_same_v<T, pool_functions> ? "pool"
                                                   : "pool_spans";
    }
};

/// Does a shrink keep the string where it is? The system heap: always. The pool on the
/// shared-cursor layout: within its classes; on spans: only within one class (a shrink
/// into a smaller class moves the string there).
template <class F>
inline constexpr bool shrink_keeps_pointer = !std::is_same_v<F, spans_pool_functions>;

/// A BSTR's alignment, as on Windows: the header before it is pointer-sized.
inline constexpr std::size_t bstr_alignment = sizeof(void*);

/// "" if `s` has the Windows layout for a string of `bytes` bytes (the byte count at
/// s - 4, the zero byte and the NUL OLECHAR after the data, aligned to a pointer), else
/// what is wrong.
inline std::string layout_problem(sta::BSTR s, std::uint32_t bytes) {
    if (s == nullptr)
        return "NULL";
    std::uint32_t prefix;
    std::memcpy(&prefix, reinterpret_cast<const char*>(s) - 4, 4);
    if (prefix != bytes)
        return "prefix " + std::to_string(prefix) + " != " + std::to_string(bytes);
    const auto* data = reinterpret_cast<const unsigned char*>(s);
    if (data[bytes] != 0)
        return "no zero byte after the data";
    if (s[(bytes + 1) / 2] != 0)
        return "no NUL OLECHAR after the data";
    if (const auto off = reinterpret_cast<std::uintptr_t>(s) % bstr_alignment; off != 0)
        return std::to_string(off) + " bytes past a multiple of " + std::to_string(bstr_alignment);
    return "";
}

inline ostring text(const sta::OLECHAR* s, std::size_t n) {
    return s == nullptr ? ostring() : ostring(s, n);
}

/// Literals of OLECHARs: u"..." on Linux, L"..." on Windows.
#define OL(s) STA_OLESTR(s)

/// The fixture of both BSTR suites: a fresh heap per test, and no string left behind.
template <class F>
class bstr_fixture : public ::testing::Test {
  protected:
    using heap = typename F::heap;
    void SetUp() override { heap::reset(); }
    void TearDown() override {
        if constexpr (counted<F>) {
            EXPECT_EQ(heap::live, 0) << "a BSTR leaked";
        }
    }
};

} // namespace sta_test

/// Skips the rest of a typed test on oleaut32, which can be neither counted nor made to
/// fail: `SKIP_UNLESS_COUNTED("why");`.
#define SKIP_UNLESS_COUNTED(why)                                                                   \
    do {                                                                                           \
        if constexpr (!::sta_test::counted<F>)                                                     \
            GTEST_SKIP() << "oleaut32: " << why;                                                   \
    } while (0)
