// Helpers shared by the BSTR tests: heaps that fail on demand and count what they do,
// the two Linux heaps every test runs on, and a layout checker.
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
    static constexpr bool shrinks_in_place(std::size_t old_bytes, std::size_t new_bytes) noexcept {
        return Heap::shrinks_in_place(old_bytes, new_bytes);
    }
};

struct system_tag {};
struct pool_tag {};
/// The pool the pool-heap tests use: a tagged pool of its own.
using test_pool = sta::basic_memory_pool<sta::dispatch::default_policy, pool_tag>;

using system_heap = counting_heap<sta::bstr_heap::system, system_tag>;
using pool_heap = counting_heap<sta::bstr_heap::pool<test_pool>, pool_tag>;

using system_functions = sta::bstr_functions<system_heap>;
using pool_functions = sta::bstr_functions<pool_heap>;

using bstr_variants = ::testing::Types<system_functions, pool_functions>;

struct bstr_variant_names {
    template <class T>
    static std::string GetName(int) {
        return std::is_same_v<T, system_functions> ? "system" : "pool";
    }
};

/// "" if `s` has the Windows layout for a string of `bytes` bytes, else what is wrong.
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
    if (reinterpret_cast<std::uintptr_t>(s) % alignof(sta::OLECHAR) != 0)
        return "misaligned";
    return "";
}

inline std::u16string text(const sta::OLECHAR* s, std::size_t n) {
    return s == nullptr ? std::u16string() : std::u16string(s, n);
}

} // namespace sta_test
