// sta-pool: sta::local_ptr<T> and sta::make_local<T>(...) — shared ownership on one
// thread: a non-atomic count, and the count and the object in one pool block.
//
//   one block from sta::memory_pool (class bit_ceil(sizeof header + sizeof T))
//   +-------------------------------------------+------------------------------+
//   | local_count: uses | destroy | (owner mark) |  T                           |
//   +-------------------------------------------+------------------------------+
//
// A copy is ++uses, a destruction --uses and, at zero, one indirect call to destroy
// (which runs ~T and gives the block back with its exact size). std::shared_ptr pays
// a lock-prefixed add for both as soon as the process has started a thread;
// local_ptr never does, because it follows the thread rule: every local_ptr that
// shares a count lives on one thread. Checked builds (STA_POOL_CHECKS) verify the
// creator thread on every count change and abort with a message naming both threads.
//
// What it has: copy, move, converting copy/move (Derived -> Base: destroy remembers
// the real type, so Base needs no virtual destructor), the aliasing constructor,
// reset, swap, use_count, comparisons, std::hash.
//
// What it has not, on purpose:
//  - weak references. A weak count would make every last release ask a second
//    question and keep the block (and the memory of a large T) alive after the object
//    dies. The single-thread shapes this library serves (scene and document trees, COM
//    proxies) break cycles with a plain parent pointer whose lifetime the tree owns;
//    boost::local_shared_ptr has no local weak pointer either. If a need appears, it
//    is a separate type with its own header, so local_ptr does not pay for it.
//  - adopting a raw pointer (local_ptr(new T)): the count must sit in front of the
//    object in the same block, so objects come only from make_local.
#pragma once

#include "sta/detail/diag/owner_mark.hpp"
#include "sta/memory_pool.hpp"

#include <compare>
#include <cstddef>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

namespace sta {

namespace detail {

/// The header of a local_ptr block.
/// Invariants: uses >= 1 while the block is live (it is the number of local_ptrs whose
/// count_ points here); destroy is set once, by make_local, and frees exactly the
/// block it was made for; owner is claimed by the creating thread.
struct local_count {
    std::size_t uses;
    void (*destroy)(local_count*) noexcept;
    [[no_unique_address]] owner_mark owner;

    explicit local_count(void (*destroy_fn)(local_count*) noexcept) noexcept
        : uses(1), destroy(destroy_fn) {}
};

/// Header and object in one block of sizeof(local_block) bytes from Pool.
/// Invariant: storage holds a live T from make_local until destroy runs.
template <class T, class Pool>
struct local_block final : local_count {
    alignas(T) unsigned char storage[sizeof(T)];

    local_block() noexcept : local_count(&destroy_block) {}

    static void destroy_block(local_count* c) noexcept {
        auto* self = static_cast<local_block*>(c);
        std::launder(reinterpret_cast<T*>(self->storage))->~T();
        self->~local_block();
        Pool::template free<sizeof(local_block)>(self);
    }
};

} // namespace detail

template <class T>
class local_ptr;

template <class T, class Pool = memory_pool, class... Args>
[[nodiscard]] local_ptr<T> make_local(Args&&... args);

/// Invariants: count_ == nullptr => this owns nothing (ptr_ may still be set by the
/// aliasing constructor from an empty owner); count_ != nullptr => this is one of
/// count_->uses owners, and ptr_ points into the object that count_ keeps alive (or
/// anywhere the aliasing constructor was told).
template <class T>
class local_ptr {
  public:
    using element_type = T;

    constexpr local_ptr() noexcept = default;
    constexpr local_ptr(std::nullptr_t) noexcept {}

    local_ptr(const local_ptr& other) noexcept : ptr_(other.ptr_), count_(other.count_) {
        acquire();
    }
    local_ptr(local_ptr&& other) noexcept
        : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, nullptr)) {}

    /// Derived -> Base (or T -> const T).
    template <class U>
    requires std::is_convertible_v<U*, T*> local_ptr(const local_ptr<U>& other)
    noexcept : ptr_(other.ptr_), count_(other.count_) { acquire(); }
    template <class U>
    requires std::is_convertible_v<U*, T*> local_ptr(local_ptr<U>&& other)
    noexcept
        : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, nullptr)) {}

    /// Aliasing: share `owner`'s count, point at `p` (usually a member of the owner's
    /// object). The object stays alive while this does.
    template <class U>
    local_ptr(const local_ptr<U>& owner, T* p) noexcept : ptr_(p), count_(owner.count_) {
        acquire();
    }
    template <class U>
    local_ptr(local_ptr<U>&& owner, T* p) noexcept
        : ptr_(p), count_(std::exchange(owner.count_, nullptr)) {
        owner.ptr_ = nullptr;
    }

    ~local_ptr() { release(); }

    local_ptr& operator=(const local_ptr& other) noexcept {
        local_ptr(other).swap(*this);
        return *this;
    }
    local_ptr& operator=(local_ptr&& other) noexcept {
        local_ptr(std::move(other)).swap(*this);
        return *this;
    }
    template <class U>
    requires std::is_convertible_v<U*, T*> local_ptr&
    operator=(const local_ptr<U>& other) noexcept {
        local_ptr(other).swap(*this);
        return *this;
    }
    template <class U>
    requires std::is_convertible_v<U*, T*> local_ptr& operator=(local_ptr<U>&& other) noexcept {
        local_ptr(std::move(other)).swap(*this);
        return *this;
    }
    local_ptr& operator=(std::nullptr_t) noexcept {
        reset();
        return *this;
    }

    void reset() noexcept { local_ptr().swap(*this); }
    void swap(local_ptr& other) noexcept {
        std::swap(ptr_, other.ptr_);
        std::swap(count_, other.count_);
    }

    [[nodiscard]] T* get() const noexcept { return ptr_; }
    template <class U = T>
    requires(!std::is_void_v<U>) U& operator*() const noexcept { return *ptr_; }
    T* operator->() const noexcept { return ptr_; }
    explicit operator bool() const noexcept { return ptr_ != nullptr; }
    /// The number of local_ptrs sharing this one's count; 0 when it owns nothing.
    [[nodiscard]] long use_count() const noexcept {
        return count_ != nullptr ? static_cast<long>(count_->uses) : 0;
    }

  private:
    template <class U>
    friend class local_ptr;
    template <class U, class Pool, class... Args>
    friend local_ptr<U> make_local(Args&&... args);

    local_ptr(T* p, detail::local_count* count) noexcept : ptr_(p), count_(count) {}

    STA_FORCE_INLINE void acquire() const noexcept {
        if (count_ != nullptr) {
            count_->owner.check("sta::local_ptr");
            ++count_->uses;
        }
    }
    STA_FORCE_INLINE void release() noexcept {
        if (count_ != nullptr) {
            count_->owner.check("sta::local_ptr");
            if (--count_->uses == 0)
                count_->destroy(count_);
        }
    }

    T* ptr_ = nullptr;
    detail::local_count* count_ = nullptr;
};

/// Construct a T in one pool block together with its count. T(args...) when that is
/// well-formed, else T{args...} (aggregates). Throws std::bad_alloc when the pool has
/// no memory and passes on what T's constructor throws (the block is given back first).
template <class T, class Pool, class... Args>
[[nodiscard]] local_ptr<T> make_local(Args&&... args) {
    static_assert(!std::is_array_v<T>, "sta::make_local: arrays are not supported");
    static_assert(alignof(T) <= detail::max_block_align,
                  "sta::make_local: the pool aligns blocks to 16 bytes at most");
    using block = detail::local_block<T, Pool>;
    void* raw = Pool::template alloc<sizeof(block)>();
    if (raw == nullptr)
        throw std::bad_alloc();
    auto* b = ::new (raw) block;
    T* value;
    try {
        if constexpr (std::is_constructible_v<T, Args...>)
            value = ::new (static_cast<void*>(b->storage)) T(std::forward<Args>(args)...);
        else
            value = ::new (static_cast<void*>(b->storage)) T{std::forward<Args>(args)...};
    } catch (...) {
        b->~block();
        Pool::template free<sizeof(block)>(raw);
        throw;
    }
    b->owner.claim();
    return local_ptr<T>(value, b);
}

template <class T, class U>
bool operator==(const local_ptr<T>& a, const local_ptr<U>& b) noexcept {
    return a.get() == b.get();
}
template <class T, class U>
std::strong_ordering operator<=>(const local_ptr<T>& a, const local_ptr<U>& b) noexcept {
    return std::compare_three_way{}(a.get(), b.get());
}
template <class T>
bool operator==(const local_ptr<T>& a, std::nullptr_t) noexcept {
    return a.get() == nullptr;
}
template <class T>
std::strong_ordering operator<=>(const local_ptr<T>& a, std::nullptr_t) noexcept {
    return std::compare_three_way{}(a.get(), static_cast<T*>(nullptr));
}

template <class T>
void swap(local_ptr<T>& a, local_ptr<T>& b) noexcept {
    a.swap(b);
}

} // namespace sta

template <class T>
struct std::hash<sta::local_ptr<T>> {
    std::size_t operator()(const sta::local_ptr<T>& p) const noexcept {
        return std::hash<T*>{}(p.get());
    }
};
