// sta-pool: sta::com::com_ptr<I> — one owned reference on a COM interface. Windows only.
//
// The holder the boxes of sta/com_box.hpp return, and what a caller keeps when it wants
// an object past a call. A copy is AddRef, a destruction Release; a move transfers the
// reference. attach() takes over a reference someone already counted (CreateInstance's,
// QueryInterface's), detach() hands it on without a Release, put() is the address to
// give an out-parameter (it releases what the holder had first).
//
// Invariant: p_ == nullptr, or the holder owns exactly one reference on *p_.
#pragma once

#if !defined(_WIN32)
#error "sta/com_ptr.hpp is Windows only: it needs COM (IUnknown)"
#else

#include "sta/detail/os/windows.hpp"

#include <unknwn.h>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace sta::com {

template <class I>
class com_ptr {
    static_assert(std::is_base_of_v<IUnknown, I>, "sta::com::com_ptr: I must be a COM interface");

  public:
    constexpr com_ptr() noexcept = default;
    constexpr com_ptr(std::nullptr_t) noexcept {}

    /// Take over one reference the caller already owns on `p` (no AddRef).
    [[nodiscard]] static com_ptr attach(I* p) noexcept {
        com_ptr c;
        c.p_ = p;
        return c;
    }
    /// A new reference on `p` (AddRef).
    [[nodiscard]] static com_ptr copy_from(I* p) noexcept {
        if (p != nullptr)
            p->AddRef();
        return attach(p);
    }

    com_ptr(const com_ptr& other) noexcept : p_(other.p_) {
        if (p_ != nullptr)
            p_->AddRef();
    }
    com_ptr(com_ptr&& other) noexcept : p_(std::exchange(other.p_, nullptr)) {}
    com_ptr& operator=(com_ptr other) noexcept {
        swap(other);
        return *this;
    }
    ~com_ptr() { reset(); }

    /// Release the reference (if any); the holder is empty afterwards.
    void reset() noexcept {
        if (I* p = std::exchange(p_, nullptr))
            p->Release();
    }
    /// Hand the reference to the caller, who now owns it.
    [[nodiscard]] I* detach() noexcept { return std::exchange(p_, nullptr); }
    /// For an out-parameter that returns a counted reference: empties the holder first.
    [[nodiscard]] I** put() noexcept {
        reset();
        return &p_;
    }
    void swap(com_ptr& other) noexcept { std::swap(p_, other.p_); }

    /// The pointer, borrowed: pass it to a call; AddRef it to keep it beyond the holder.
    [[nodiscard]] I* get() const noexcept { return p_; }
    I* operator->() const noexcept { return p_; }
    explicit operator bool() const noexcept { return p_ != nullptr; }

    friend bool operator==(const com_ptr& a, const com_ptr& b) noexcept { return a.p_ == b.p_; }
    friend bool operator==(const com_ptr& a, std::nullptr_t) noexcept { return a.p_ == nullptr; }

  private:
    I* p_ = nullptr;
};

} // namespace sta::com

#endif // _WIN32
