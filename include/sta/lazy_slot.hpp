// sta-pool: sta::lazy_slot<R(Args...)> — a callable slot that resolves itself on the
// first call and rewrites itself, and sta::unresolved_slot, the error when it cannot.
//
// The seed's activation-factory cache, as a general tool. A slot is two words,
// {context, fn}; a call is
//
//     slot.fn(slot.context, args...)
//
// — both words are loaded side by side, then one indirect call: no "is it resolved?"
// branch, no atomic, no vtable load. Before the first call the slot holds
// {this, resolve_and_call}: the stub gets the slot itself as its context, runs the
// user's resolver (a name lookup, dlsym, a factory), stores the target {context, fn}
// the resolver returned, and calls it. Every later call goes straight to the target.
//
// Construction is constexpr, so a global slot is constant-initialised (declare it
// constinit) and works from any global constructor in any translation unit.
//
// Failure. When the resolver returns a target whose fn is null, the call throws
// sta::unresolved_slot naming the slot; an exception the resolver throws itself
// passes through unchanged. Either way the slot stays UNRESOLVED and the next call
// RETRIES the resolver: a failure is not cached, so a program that fixes the cause
// (loads the library, initialises COM) just calls again. A resolver that calls its own
// slot gets sta::unresolved_slot ("the resolver called its own slot") instead of an
// endless recursion.
//
// The thread rule, as for sta::memory_pool: a slot belongs to the first thread that
// calls it. Resolution and the rewrite are plain stores, so two threads must not race
// on an unresolved slot. Checked builds (STA_POOL_CHECKS) verify the owner on every
// call and abort with a message naming both threads; release builds do not check.
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/diag/owner_mark.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace sta {

/// A slot could not be resolved. what() reads: sta::lazy_slot "name": reason.
class unresolved_slot : public std::runtime_error {
  public:
    unresolved_slot(const char* slot_name, const std::string& reason)
        : std::runtime_error("sta::lazy_slot \"" + std::string(slot_name) + "\": " + reason),
          name_(slot_name) {}

    /// The name the slot was constructed with.
    [[nodiscard]] const char* name() const noexcept { return name_.what(); }

  private:
    std::runtime_error name_; // a reference-counted string whose copy cannot throw
};

template <class Signature>
class lazy_slot;

/// Invariants:
///  LS1  unresolved  <=> context_ == this; then fn_ is resolve_and_call (or, while the
///       resolver runs, reentered). A resolved target never has the slot as context.
///  LS2  resolved    <=> context_ and fn_ are what the resolver returned, fn_ != nullptr;
///       a call is fn_(context_, args...) and nothing else.
///  LS3  resolver_, name_ and resolver_data_ never change after construction (copies
///       take them over as they are); name_ is never null.
template <class R, class... Args>
class lazy_slot<R(Args...)> {
  public:
    /// What a slot calls: a function that takes the context first (the seed's
    /// factory-as-this). A resolver returns one of these; fn == nullptr means failure.
    using function_pointer = R (*)(void* context, Args...);
    struct target {
        void* context = nullptr;
        function_pointer fn = nullptr;
    };
    /// The user's resolver: gets the slot's name and resolver data. It returns the
    /// target, or a target with fn == nullptr to fail, or throws.
    using resolver_pointer = target (*)(const char* name, void* resolver_data);

    /// An unresolved slot. `name` must outlive the slot (a string literal, usually).
    constexpr lazy_slot(resolver_pointer resolver, const char* name,
                        void* resolver_data = nullptr) noexcept
        : context_(this), fn_(&resolve_and_call), resolver_(resolver),
          name_(name != nullptr ? name : ""), resolver_data_(resolver_data) {}

    /// A copy of a resolved slot calls the same target; a copy of an unresolved slot is
    /// unresolved and resolves on its own (its context is the copy, not the original).
    constexpr lazy_slot(const lazy_slot& other) noexcept
        : context_(this), fn_(&resolve_and_call), resolver_(other.resolver_), name_(other.name_),
          resolver_data_(other.resolver_data_) {
        if (other.resolved()) {
            context_ = other.context_;
            fn_ = other.fn_;
        }
    }

    constexpr lazy_slot& operator=(const lazy_slot& other) noexcept {
        if (this != &other) {
            resolver_ = other.resolver_;
            name_ = other.name_;
            resolver_data_ = other.resolver_data_;
            if (other.resolved()) {
                context_ = other.context_;
                fn_ = other.fn_;
            } else {
                reset();
            }
        }
        return *this;
    }

    /// The hot path: one indirect call with the context first. The first call resolves.
    STA_FORCE_INLINE R operator()(Args... args) const {
        owner_.check("sta::lazy_slot", name_);
        return fn_(context_, std::forward<Args>(args)...);
    }

    /// Resolve now, without calling (no-op when resolved). Throws like the first call.
    void resolve() const {
        owner_.check("sta::lazy_slot", name_);
        if (!resolved())
            resolve_now();
    }

    /// Forget the target: the next call resolves again (e.g. before a dlclose).
    constexpr void reset() noexcept {
        context_ = this;
        fn_ = &resolve_and_call;
    }

    [[nodiscard]] constexpr bool resolved() const noexcept { return context_ != this; }
    [[nodiscard]] constexpr const char* name() const noexcept { return name_; }
    [[nodiscard]] constexpr void* resolver_data() const noexcept { return resolver_data_; }
    /// The slot's two words as they are now (white-box: the tests check the rewrite).
    [[nodiscard]] target current() const noexcept { return {context_, fn_}; }

  private:
    /// The initial fn: `context` is the slot itself (LS1).
    static R resolve_and_call(void* context, Args... args) {
        const auto* self = static_cast<const lazy_slot*>(context);
        self->resolve_now();
        return self->fn_(self->context_, std::forward<Args>(args)...);
    }

    /// fn while the resolver runs: a resolver that calls its own slot lands here.
    static R reentered(void* context, Args...) {
        throw unresolved_slot(static_cast<const lazy_slot*>(context)->name_,
                              "the resolver called its own slot");
    }

    STA_NOINLINE void resolve_now() const {
        if (resolver_ == nullptr)
            throw unresolved_slot(name_, "the slot has no resolver");
        fn_ = &reentered;
        target t;
        try {
            t = resolver_(name_, resolver_data_);
        } catch (...) {
            fn_ = &resolve_and_call;
            throw;
        }
        fn_ = &resolve_and_call;
        if (t.fn == nullptr)
            throw unresolved_slot(name_, "the resolver found nothing");
        if (t.context == this)
            throw unresolved_slot(name_, "the resolver returned the slot itself as the context");
        context_ = t.context; // LS2: the rewrite
        fn_ = t.fn;
    }

    // The hot words first, side by side (one cache line, loaded in parallel).
    mutable void* context_;
    mutable function_pointer fn_;
    resolver_pointer resolver_;
    const char* name_;
    void* resolver_data_;
    [[no_unique_address]] mutable detail::owner_mark owner_;
};

} // namespace sta
