// sta-pool: sta::com::activation_slot — a COM class factory cached in a slot that
// rewrites itself — and sta::com::lazy_object<I...>, a COM object whose interfaces are
// queried on first use and cached (issue 9, item 4). Windows only.
//
// THE SLOT. Two words, {factory, fn}; creating an object is
//
//     slot(outer, riid, ppv)   ==   fn(factory, outer, riid, ppv)
//
// — both words are loaded side by side, then one indirect call: no "is it resolved?"
// branch, no load of the factory's vtable. Before the first call the slot holds
// {this, resolve_and_create}: the stub gets the slot itself as its first argument,
// calls CoGetClassObject(clsid, IID_IClassFactory), stores the factory and the address
// of its CreateInstance entry (vtable index 3: IUnknown's QueryInterface, AddRef,
// Release, then IClassFactory::CreateInstance), and creates the object through it.
// Every later call goes straight to the factory's CreateInstance.
//
// WHY A COM METHOD CAN BE CALLED THROUGH A PLAIN FUNCTION POINTER. COM is a binary
// contract: an interface pointer points at a pointer to an array of function
// pointers, and a method is called with the interface pointer as its first argument
// (C clients write This->lpVtbl->CreateInstance(This, ...)). On x64 Windows there is
// one calling convention (__stdcall and __thiscall are ignored): `this` goes in RCX
// like any first argument, and an HRESULT return is a plain integer in EAX (no hidden
// return pointer, which is the one place member and free functions differ). On x86,
// STDMETHODCALLTYPE (__stdcall) pushes `this` as the leftmost argument, so the same
// holds. A published interface never changes (new functionality means a new
// interface), so index 3 of IClassFactory is CreateInstance forever.
//
// WHAT THE SLOT HOLDS. Once resolved: ONE reference on the factory (the one
// CoGetClassObject returned; no LockServer call — the reference keeps the server
// loaded) and the CreateInstance address read from its vtable. reset() releases that
// reference and makes the slot unresolved again (the next call resolves anew); the
// destructor calls reset(). A slot whose factory lives in a DLL or in another
// apartment must be reset before CoUninitialize (a global slot too: call reset()
// before uninitialising, the destructor then has nothing to release).
//
// FAILURE. When CoGetClassObject fails, the call returns ITS HRESULT (e.g.
// REGDB_E_CLASSNOTREG), sets *ppv to null, and the slot stays UNRESOLVED: the next
// call retries, so a program that fixes the cause (registers the class, initialises
// COM) just calls again. resolve() resolves without creating and returns the same
// HRESULT. Nothing on the slot's path throws; the convenience make_object() throws
// sta::com::com_error carrying the HRESULT.
//
// THE LAZY OBJECT. lazy_object<I1, I2, ...> is the seed's pImpl: one pool block (via
// sta::local_ptr) holding the object's IUnknown and one cached pointer per listed
// interface, all null until used. get<I>() calls QueryInterface the first time and
// returns the cached pointer afterwards; the impl releases every cached interface and
// the IUnknown when the last lazy_object copy goes. Copies share the impl with a
// non-atomic count instead of COM's interlocked AddRef/Release. A failed
// QueryInterface is not cached: try_get returns its HRESULT, get throws com_error,
// and the next call asks again.
//
// THE THREAD RULE, as for sta::memory_pool: a slot and a lazy_object belong to one
// thread (an STA's thread, for apartment-bound factories and objects). Resolution and
// the rewrite are plain stores. Checked builds (STA_POOL_CHECKS) verify the owner on
// every call and abort naming both threads; release builds do not check.
#pragma once

#if !defined(_WIN32)
#error "sta/com_activation.hpp is Windows only: it needs COM (ole32)"
#else

#include "sta/detail/config.hpp"
#include "sta/detail/diag/owner_mark.hpp"
#include "sta/detail/os/windows.hpp"
#include "sta/local_ptr.hpp"

#include <objbase.h>
#include <unknwn.h>

#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

namespace sta::com {

/// A COM call failed; code() is its HRESULT. what(): "<where>: HRESULT 0x8004...".
class com_error : public std::runtime_error {
  public:
    com_error(const char* where, HRESULT hr) : std::runtime_error(message(where, hr)), hr_(hr) {}
    [[nodiscard]] HRESULT code() const noexcept { return hr_; }

  private:
    static std::string message(const char* where, HRESULT hr) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "0x%08lX", static_cast<unsigned long>(hr));
        return std::string(where) + ": HRESULT " + buf;
    }
    HRESULT hr_;
};

/// Invariants:
///  CA1  unresolved <=> factory_ == this and fn_ == resolve_and_create; the slot holds
///       no reference.
///  CA2  resolved   <=> factory_ is an IClassFactory* on which the slot owns exactly one
///       reference, and fn_ is that factory's vtable entry 3 (CreateInstance).
///  CA3  clsid_ and clsctx_ never change; *clsid_ outlives the slot.
class activation_slot {
  public:
    /// IClassFactory::CreateInstance as a plain function: the factory first.
    using create_fn = HRESULT(STDMETHODCALLTYPE*)(void* factory, IUnknown* outer, REFIID riid,
                                                  void** ppv);

    /// An unresolved slot for `clsid` (which must outlive the slot: a CLSID_ constant
    /// or a static). constexpr: a global slot may be constinit.
    constexpr explicit activation_slot(const CLSID& clsid,
                                       DWORD clsctx = CLSCTX_INPROC_SERVER) noexcept
        : factory_(this), fn_(&resolve_and_create), clsid_(&clsid), clsctx_(clsctx) {}

    // The unresolved slot's context is its own address, and a resolved one owns a
    // reference: not copyable, not movable.
    activation_slot(const activation_slot&) = delete;
    activation_slot& operator=(const activation_slot&) = delete;

    ~activation_slot() { reset(); }

    /// The hot path: IClassFactory::CreateInstance(outer, riid, ppv) as one indirect
    /// call. The first call (and every call after a failed one) resolves.
    STA_FORCE_INLINE HRESULT operator()(IUnknown* outer, REFIID riid, void** ppv) {
        owner_.check("sta::com::activation_slot");
        return fn_(factory_, outer, riid, ppv);
    }

    /// Create an object and ask for interface I (I needs a __uuidof).
    template <class I>
    HRESULT create(I** out) {
        return (*this)(nullptr, __uuidof(I), reinterpret_cast<void**>(out));
    }

    /// Resolve now without creating: S_OK, or CoGetClassObject's HRESULT (the slot then
    /// stays unresolved). No-op when resolved.
    HRESULT resolve() {
        owner_.check("sta::com::activation_slot");
        return resolved() ? S_OK : resolve_now();
    }

    /// Release the factory reference; the next call resolves again. No-op when unresolved.
    void reset() noexcept {
        if (!resolved())
            return;
        auto* f = static_cast<IClassFactory*>(factory_);
        factory_ = this; // CA1 before the Release, in case Release re-enters
        fn_ = &resolve_and_create;
        f->Release();
    }

    [[nodiscard]] bool resolved() const noexcept { return factory_ != this; }
    /// The cached factory (no new reference), or null while unresolved.
    [[nodiscard]] IClassFactory* factory() const noexcept {
        return resolved() ? static_cast<IClassFactory*>(factory_) : nullptr;
    }
    [[nodiscard]] const CLSID& clsid() const noexcept { return *clsid_; }
    /// The slot's two words as they are now (white-box: the tests check the rewrite).
    struct words {
        void* factory;
        create_fn fn;
    };
    [[nodiscard]] words current() const noexcept { return {factory_, fn_}; }

  private:
    /// The initial fn: `context` is the slot itself (CA1).
    static HRESULT STDMETHODCALLTYPE resolve_and_create(void* context, IUnknown* outer, REFIID riid,
                                                        void** ppv) {
        auto* self = static_cast<activation_slot*>(context);
        const HRESULT hr = self->resolve_now();
        if (FAILED(hr)) {
            if (ppv != nullptr)
                *ppv = nullptr;
            return hr;
        }
        return self->fn_(self->factory_, outer, riid, ppv);
    }

    STA_NOINLINE HRESULT resolve_now() {
        IClassFactory* f = nullptr;
        HRESULT hr = CoGetClassObject(*clsid_, clsctx_, nullptr, IID_IClassFactory,
                                      reinterpret_cast<void**>(&f));
        if (FAILED(hr))
            return hr;
        if (f == nullptr)
            return E_POINTER;
        // The vtable is an array of function pointers; entry 3 is CreateInstance (CA2).
        create_fn const* vtable = *reinterpret_cast<create_fn const* const*>(f);
        factory_ = f; // the rewrite: the reference CoGetClassObject gave us is the slot's
        fn_ = vtable[3];
        return S_OK;
    }

    // The hot words first, side by side.
    void* factory_;
    create_fn fn_;
    const CLSID* clsid_;
    DWORD clsctx_;
    [[no_unique_address]] detail::owner_mark owner_;
};

/// A COM object with lazily queried, cached interfaces: the seed's pImpl with one slot
/// per interface. Interfaces... are the ones get<I>() may ask for (each needs a
/// __uuidof). An empty lazy_object holds nothing.
template <class... Interfaces>
class lazy_object {
    static_assert(sizeof...(Interfaces) > 0, "sta::com::lazy_object: list the interfaces");

  public:
    lazy_object() noexcept = default;

    /// Take over one reference on `unknown` (as CreateInstance returned it). Null gives
    /// an empty object. Allocates the impl from the pool (may throw std::bad_alloc; the
    /// reference is released first).
    static lazy_object adopt(IUnknown* unknown) {
        lazy_object o;
        if (unknown == nullptr)
            return o;
        try {
            o.impl_ = make_local<impl>(unknown);
        } catch (...) {
            unknown->Release();
            throw;
        }
        return o;
    }

    /// Interface I: QueryInterface on the first call, the cached pointer afterwards.
    /// S_OK with *out set (no new reference: the object keeps it), or the failing
    /// HRESULT with *out null (not cached: the next call asks again).
    template <class I>
    HRESULT try_get(I** out) const {
        static_assert((std::is_same_v<I, Interfaces> || ...),
                      "sta::com::lazy_object: I is not among the listed interfaces");
        I*& cached = std::get<I*>(impl_->cache);
        if (cached == nullptr) [[unlikely]] {
            const HRESULT hr = query(impl_->unknown, &cached);
            if (FAILED(hr)) {
                *out = nullptr;
                return hr;
            }
        }
        *out = cached;
        return S_OK;
    }

    /// Like try_get, but throws com_error on failure. The pointer is borrowed.
    template <class I>
    I* get() const {
        I* p = nullptr;
        const HRESULT hr = try_get(&p);
        if (FAILED(hr))
            throw com_error("sta::com::lazy_object: QueryInterface", hr);
        return p;
    }

    /// Whether I has been queried already (white-box, for tests).
    template <class I>
    [[nodiscard]] bool cached() const noexcept {
        return impl_ && std::get<I*>(impl_->cache) != nullptr;
    }

    /// The object's IUnknown (borrowed), or null when empty.
    [[nodiscard]] IUnknown* unknown() const noexcept { return impl_ ? impl_->unknown : nullptr; }
    explicit operator bool() const noexcept { return static_cast<bool>(impl_); }
    /// How many lazy_object copies share the impl (the non-atomic count).
    [[nodiscard]] long use_count() const noexcept { return impl_.use_count(); }
    void reset() noexcept { impl_ = nullptr; }

  private:
    template <class I>
    STA_NOINLINE static HRESULT query(IUnknown* unknown, I** slot) {
        return unknown->QueryInterface(__uuidof(I), reinterpret_cast<void**>(slot));
    }

    struct impl {
        explicit impl(IUnknown* u) noexcept : unknown(u) {}
        impl(const impl&) = delete;
        impl& operator=(const impl&) = delete;
        ~impl() {
            std::apply([](auto*... p) { (release(p), ...); }, cache);
            unknown->Release();
        }
        static void release(IUnknown* p) noexcept {
            if (p != nullptr)
                p->Release();
        }
        IUnknown* unknown;
        std::tuple<Interfaces*...> cache{}; // one slot per interface, null until used
    };
    local_ptr<impl> impl_;
};

/// Create an object through the slot (asking only for IUnknown: no interface is queried
/// until used) and wrap it. Throws com_error with the HRESULT on failure.
template <class... Interfaces>
lazy_object<Interfaces...> make_object(activation_slot& slot, IUnknown* outer = nullptr) {
    IUnknown* unknown = nullptr;
    const HRESULT hr = slot(outer, IID_IUnknown, reinterpret_cast<void**>(&unknown));
    if (FAILED(hr))
        throw com_error("sta::com::activation_slot: create", hr);
    return lazy_object<Interfaces...>::adopt(unknown);
}

} // namespace sta::com

#endif // _WIN32
