// sta-pool: the atomics every layer uses, on the compiler's __atomic builtins.
//
// <atomic> in C++20 brings atomic waits, and with them <system_error>, <string> and
// <stdexcept>: as much parsing as all of sta/memory_pool.hpp's own code. The pool needs
// only this subset, with std::atomic's names and meaning:
//
//   atomic<T>      load, store, exchange, compare_exchange_weak (two orders),
//                  compare_exchange_strong (one order), fetch_add/sub (integers); T a
//                  bool, an integer or a pointer
//   atomic_ref<T>  load, store, fetch_or/and on a plain object (a constant-initialised
//                  array)
//   atomic_flag    test_and_set, clear, test
//   memory_order_relaxed ... memory_order_seq_cst
//
// g++ and clang (clang-cl too) build it on __atomic_*; ThreadSanitizer instruments the
// builtins as it does std::atomic, which is built on them. msvc has no builtins: there
// the names are std::atomic's own.
#pragma once

#include <cstddef>
#include <type_traits>

#if defined(_MSC_VER) && !defined(__clang__)
#include <atomic>

namespace sta::detail {

template <class T>
using atomic = std::atomic<T>;
template <class T>
using atomic_ref = std::atomic_ref<T>;
using atomic_flag = std::atomic_flag;
using memory_order = std::memory_order;
inline constexpr memory_order memory_order_relaxed = std::memory_order_relaxed;
inline constexpr memory_order memory_order_acquire = std::memory_order_acquire;
inline constexpr memory_order memory_order_release = std::memory_order_release;
inline constexpr memory_order memory_order_acq_rel = std::memory_order_acq_rel;
inline constexpr memory_order memory_order_seq_cst = std::memory_order_seq_cst;

} // namespace sta::detail

#else

namespace sta::detail {

enum class memory_order : int {
    relaxed = __ATOMIC_RELAXED,
    acquire = __ATOMIC_ACQUIRE,
    release = __ATOMIC_RELEASE,
    acq_rel = __ATOMIC_ACQ_REL,
    seq_cst = __ATOMIC_SEQ_CST,
};
inline constexpr memory_order memory_order_relaxed = memory_order::relaxed;
inline constexpr memory_order memory_order_acquire = memory_order::acquire;
inline constexpr memory_order memory_order_release = memory_order::release;
inline constexpr memory_order memory_order_acq_rel = memory_order::acq_rel;
inline constexpr memory_order memory_order_seq_cst = memory_order::seq_cst;

/// The order a failed compare-exchange loads with, given the success order (as
/// std::atomic derives it: no release part).
constexpr int failure_order(memory_order o) noexcept {
    if (o == memory_order::acq_rel)
        return __ATOMIC_ACQUIRE;
    if (o == memory_order::release)
        return __ATOMIC_RELAXED;
    return static_cast<int>(o);
}

/// The operations on one object `*p`; atomic<T> and atomic_ref<T> are this over their
/// own storage.
template <class T>
struct atomic_ops {
    static_assert(std::is_trivially_copyable_v<T> &&
                      (std::is_integral_v<T> || std::is_pointer_v<T>),
                  "sta::detail::atomic holds a bool, an integer or a pointer");
    static_assert(sizeof(T) <= 8 && (sizeof(T) & (sizeof(T) - 1)) == 0,
                  "sta::detail::atomic holds a lock-free size: 1, 2, 4 or 8 bytes");

    static T load(const T* p, memory_order o) noexcept {
        return __atomic_load_n(p, static_cast<int>(o));
    }
    static void store(T* p, T v, memory_order o) noexcept {
        __atomic_store_n(p, v, static_cast<int>(o));
    }
    static T exchange(T* p, T v, memory_order o) noexcept {
        return __atomic_exchange_n(p, v, static_cast<int>(o));
    }
    static bool compare_exchange(T* p, T& expected, T desired, bool weak, memory_order success,
                                 int failure) noexcept {
        return __atomic_compare_exchange_n(p, &expected, desired, weak, static_cast<int>(success),
                                           failure);
    }
};

/// A view of a plain object as an atomic one (std::atomic_ref's subset).
template <class T>
class atomic_ref {
    using ops = atomic_ops<T>;
    T* p_;

  public:
    static constexpr std::size_t required_alignment = sizeof(T);

    explicit atomic_ref(T& object) noexcept : p_(&object) {}
    T load(memory_order o = memory_order_seq_cst) const noexcept { return ops::load(p_, o); }
    void store(T v, memory_order o = memory_order_seq_cst) const noexcept { ops::store(p_, v, o); }
    T fetch_or(
        T v, memory_order o = memory_order_seq_cst) const noexcept requires std::is_integral_v<T> {
        return __atomic_fetch_or(p_, v, static_cast<int>(o));
    }
    T fetch_and(
        T v, memory_order o = memory_order_seq_cst) const noexcept requires std::is_integral_v<T> {
        return __atomic_fetch_and(p_, v, static_cast<int>(o));
    }
};

/// std::atomic's subset: a bool, an integer or a pointer, value-initialised.
template <class T>
class atomic {
    using ops = atomic_ops<T>;
    T value_{};

  public:
    constexpr atomic() noexcept = default;
    constexpr atomic(T v) noexcept : value_(v) {} // NOLINT: as std::atomic, implicit
    atomic(const atomic&) = delete;
    atomic& operator=(const atomic&) = delete;

    T load(memory_order o = memory_order_seq_cst) const noexcept { return ops::load(&value_, o); }
    void store(T v, memory_order o = memory_order_seq_cst) noexcept { ops::store(&value_, v, o); }
    T exchange(T v, memory_order o = memory_order_seq_cst) noexcept {
        return ops::exchange(&value_, v, o);
    }
    bool compare_exchange_weak(T& expected, T desired, memory_order success,
                               memory_order failure) noexcept {
        return ops::compare_exchange(&value_, expected, desired, true, success,
                                     static_cast<int>(failure));
    }
    bool compare_exchange_strong(T& expected, T desired,
                                 memory_order o = memory_order_seq_cst) noexcept {
        return ops::compare_exchange(&value_, expected, desired, false, o, failure_order(o));
    }
    T fetch_add(T v,
                memory_order o = memory_order_seq_cst) noexcept requires std::is_integral_v<T> {
        return __atomic_fetch_add(&value_, v, static_cast<int>(o));
    }
    T fetch_sub(T v,
                memory_order o = memory_order_seq_cst) noexcept requires std::is_integral_v<T> {
        return __atomic_fetch_sub(&value_, v, static_cast<int>(o));
    }
};

/// std::atomic_flag's subset: clear at construction.
class atomic_flag {
    bool set_ = false;

  public:
    constexpr atomic_flag() noexcept = default;
    atomic_flag(const atomic_flag&) = delete;
    atomic_flag& operator=(const atomic_flag&) = delete;

    bool test_and_set(memory_order o = memory_order_seq_cst) noexcept {
        return __atomic_test_and_set(&set_, static_cast<int>(o));
    }
    void clear(memory_order o = memory_order_seq_cst) noexcept {
        __atomic_clear(&set_, static_cast<int>(o));
    }
    bool test(memory_order o = memory_order_seq_cst) const noexcept {
        return __atomic_load_n(&set_, static_cast<int>(o));
    }
};

} // namespace sta::detail

#endif
