// sta-pool: boxed values without allocation — the seed's static `true` and `false` —
// and boxes of other values in one pool block. Windows only (link ole32).
//
// WinRT passes an optional value as Windows.Foundation.IReference<T>, a COM object: a
// property like ToggleButton::IsChecked (true, false or unset) takes an
// IReference<bool>*, and the usual projection boxes the bool in a heap object with an
// interlocked count for every call, and frees it right after. WinRT does not take
// ownership of value arguments (the callee reads the value; it AddRefs only what it
// keeps), so the box need not be made per call at all:
//
//   box(true)      ->  &boxed_true      an immortal object in static storage: no fields,
//   box(false)     ->  &boxed_false     AddRef/Release return constants; its address is
//                                       a constant expression. Nothing is allocated and
//                                       nothing must be released.
//   box(42)        ->  com_ptr<reference<int32_t>>  owning one pool_box:
//
//   one block of Pool (class bit_ceil(sizeof(pool_box<T>)))
//   +--------+------------+---------+--------------+
//   | vtable | refs (1..) | T value | (owner mark) |
//   +--------+------------+---------+--------------+
//
//     the last Release runs ~T and gives the block back with its exact size.
//
// THE THREAD RULE, as for the rest of the library. A pool box's count is a plain
// integer: every AddRef, Release and QueryInterface comes from the thread that made the
// box (checked builds, STA_POOL_CHECKS, abort naming both threads). A pool box does not
// answer IAgileObject, so WinRT marshals it rather than calling it from elsewhere. The
// static boxes have no state: any thread may use them, and they answer IAgileObject.
//
// WHAT THE BOXES ANSWER. QueryInterface: IUnknown, IInspectable, IReference<T> (and
// IAgileObject for the static ones); E_NOINTERFACE and a null *ppv for anything else,
// E_POINTER for a null ppv. GetIids: IReference<T>'s IID alone. GetRuntimeClassName:
// "Windows.Foundation.IReference`1<Boolean>" (etc.), as the platform's boxes report,
// made with combase's WindowsCreateString — the empty string where combase has none.
// GetTrustLevel: BaseTrust. They do not implement IPropertyValue (docs/com_box.md).
#pragma once

#if !defined(_WIN32)
#error "sta/com_box.hpp is Windows only: it needs COM (ole32)"
#else

#include "sta/com_ptr.hpp"
#include "sta/com_reference.hpp"
#include "sta/detail/config.hpp"
#include "sta/detail/diag/owner_mark.hpp"
#include "sta/detail/os/windows.hpp"
#include "sta/memory_pool.hpp"

#include <objbase.h>

#include <cwchar>
#include <new>
#include <type_traits>

namespace sta::com {

namespace detail {

/// Whether `riid` names IUnknown or one of Interfaces.
template <class... Interfaces>
constexpr bool answers(const GUID& riid) noexcept {
    return same_iid(riid, iid_unknown) || (same_iid(riid, iid_of<Interfaces>()) || ...);
}

/// GetIids for an object with one interface beyond IUnknown and IInspectable.
inline HRESULT one_iid(const GUID& iid, ULONG* count, IID** iids) noexcept {
    if (count == nullptr || iids == nullptr)
        return E_POINTER;
    auto* array = static_cast<IID*>(CoTaskMemAlloc(sizeof(IID)));
    if (array == nullptr) {
        *count = 0;
        *iids = nullptr;
        return E_OUTOFMEMORY;
    }
    *array = iid;
    *count = 1;
    *iids = array;
    return S_OK;
}

/// A new HSTRING holding `text`, made by combase's WindowsCreateString (looked up once;
/// linking it would make every user of this header link runtimeobject). Where combase
/// has none, *out is null: the empty string.
STA_NOINLINE inline HRESULT make_hstring(const wchar_t* text, hstring* out) noexcept {
    if (out == nullptr)
        return E_POINTER;
    using create_fn = HRESULT(WINAPI*)(const wchar_t*, UINT32, hstring*);
    static const create_fn create = []() noexcept {
        HMODULE combase = LoadLibraryW(L"combase.dll");
        FARPROC f = combase != nullptr ? GetProcAddress(combase, "WindowsCreateString") : nullptr;
        return reinterpret_cast<create_fn>(reinterpret_cast<void (*)()>(f));
    }();
    *out = nullptr;
    if (create == nullptr)
        return S_OK;
    return create(text, static_cast<UINT32>(std::wcslen(text)), out);
}

/// IInspectable's three methods for a box of T, on top of Base (which derives from
/// reference<T>).
template <class Base, class T>
class reference_methods : public Base {
  public:
    HRESULT STDMETHODCALLTYPE GetIids(ULONG* count, IID** iids) final {
        return one_iid(reference<T>::iid, count, iids);
    }
    HRESULT STDMETHODCALLTYPE GetRuntimeClassName(hstring* name) final {
        return make_hstring(reference_traits<T>::name, name);
    }
    HRESULT STDMETHODCALLTYPE GetTrustLevel(trust_level* level) final {
        if (level == nullptr)
            return E_POINTER;
        *level = base_trust;
        return S_OK;
    }

  protected:
    constexpr reference_methods() noexcept = default;
    ~reference_methods() = default;
};

} // namespace detail

/// An object that never dies: the base of a class whose instances live in static
/// storage (constinit), so that their addresses are constant expressions. AddRef and
/// Release do nothing and return constants (COM's counts are for diagnostics only);
/// QueryInterface answers IUnknown, Interface and each of Also... (Interface's bases
/// and marker interfaces) with the object itself. The derived class implements
/// Interface's methods.
///
///     struct quiet_logger final : sta::com::immortal<ILogger> { ... };
///     constinit quiet_logger the_logger;     // &the_logger: no allocation, no count
template <class Interface, class... Also>
class immortal : public Interface {
    static_assert(std::is_base_of_v<IUnknown, Interface>,
                  "sta::com::immortal: Interface must be a COM interface");
    static_assert((std::is_base_of_v<IUnknown, Also> && ...),
                  "sta::com::immortal: every interface in Also must be a COM interface");

  public:
    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) final {
        if (ppv == nullptr)
            return E_POINTER;
        if (detail::answers<Interface, Also...>(riid)) {
            *ppv = static_cast<Interface*>(this);
            return S_OK;
        }
        *ppv = nullptr;
        return E_NOINTERFACE;
    }
    ULONG STDMETHODCALLTYPE AddRef() final { return 2; }
    ULONG STDMETHODCALLTYPE Release() final { return 1; }

  protected:
    constexpr immortal() noexcept = default;
    ~immortal() = default;
};

/// IReference<T> holding the constant Value, immortal and agile. (bool has its own
/// class below.)
template <class T, T Value>
class static_box final
    : public detail::reference_methods<immortal<reference<T>, inspectable, agile_object>, T> {
    static_assert(!std::is_same_v<T, bool>,
                  "sta::com::static_box: the bool boxes are boxed_true and boxed_false");

  public:
    constexpr static_box() noexcept = default;
    HRESULT STDMETHODCALLTYPE get_Value(T* value) final {
        if (value == nullptr)
            return E_POINTER;
        *value = Value;
        return S_OK;
    }
};

/// The static box of a constant other than bool: &boxed<std::int32_t{0}>, ...
/// Constant-initialised (no code runs before main), trivially destroyed.
template <auto Value>
requires(!std::is_same_v<decltype(Value), bool>) inline constinit static_box<decltype(Value),
                                                                             Value> boxed{};

/// The seed's two boxes, IReference<bool> true and false: one class for both (no
/// fields; get_Value tells them apart by their address), so that a callee reading
/// either makes one indirect call to one target.
class static_bool_box final
    : public detail::reference_methods<immortal<reference<bool>, inspectable, agile_object>, bool> {
  public:
    constexpr static_bool_box() noexcept = default;
    HRESULT STDMETHODCALLTYPE get_Value(bool* value) final;
};
inline constinit static_bool_box boxed_true{};
inline constinit static_bool_box boxed_false{};

inline HRESULT STDMETHODCALLTYPE static_bool_box::get_Value(bool* value) {
    if (value == nullptr)
        return E_POINTER;
    *value = this == &boxed_true;
    return S_OK;
}

/// IReference<T> in one block of Pool, with a single-thread count (see the file
/// comment). Made by make_box / box; never on the stack or by new.
///
/// Invariants: refs_ >= 1 while the box lives and is the number of references handed
/// out (make_box's, each AddRef, each successful QueryInterface); the block is
/// Pool's block of sizeof(pool_box) bytes and goes back to it on the last Release;
/// value_ never changes; owner_ is claimed by the creating thread.
template <class T, class Pool = memory_pool>
class pool_box final : public detail::reference_methods<reference<T>, T> {
    static_assert(alignof(T) <= sta::detail::max_block_align,
                  "sta::com::pool_box: the pool aligns blocks to 16 bytes at most");

  public:
    pool_box(const pool_box&) = delete;
    pool_box& operator=(const pool_box&) = delete;

    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) final {
        owner_.check("sta::com::pool_box");
        if (ppv == nullptr)
            return E_POINTER;
        if (detail::answers<reference<T>, inspectable>(riid)) {
            *ppv = static_cast<reference<T>*>(this);
            ++refs_;
            return S_OK;
        }
        *ppv = nullptr;
        return E_NOINTERFACE;
    }
    ULONG STDMETHODCALLTYPE AddRef() final {
        owner_.check("sta::com::pool_box");
        return ++refs_;
    }
    ULONG STDMETHODCALLTYPE Release() final {
        owner_.check("sta::com::pool_box");
        const ULONG left = --refs_;
        if (left == 0) {
            this->~pool_box();
            Pool::template free<sizeof(pool_box)>(this);
        }
        return left;
    }
    HRESULT STDMETHODCALLTYPE get_Value(T* value) final {
        if (value == nullptr)
            return E_POINTER;
        *value = value_;
        return S_OK;
    }

    /// A box of `value` with one reference, or null when the pool has no memory.
    [[nodiscard]] static pool_box*
    make(const T& value) noexcept(std::is_nothrow_copy_constructible_v<T>) {
        void* raw = Pool::template alloc<sizeof(pool_box)>();
        if (raw == nullptr)
            return nullptr;
        if constexpr (std::is_nothrow_copy_constructible_v<T>) {
            return ::new (raw) pool_box(value);
        } else {
            try {
                return ::new (raw) pool_box(value);
            } catch (...) {
                Pool::template free<sizeof(pool_box)>(raw);
                throw;
            }
        }
    }

  private:
    explicit pool_box(const T& value) : value_(value) { owner_.claim(); }
    ~pool_box() = default;

    ULONG refs_ = 1;
    T value_;
    [[no_unique_address]] sta::detail::owner_mark owner_;
};

/// The seed's boxes: the address of boxed_true or boxed_false. Nothing is allocated,
/// and the pointer needs no Release (one is harmless). Pass it where an
/// IReference<bool>* goes; a callee that keeps it AddRefs an immortal object.
[[nodiscard]] constexpr reference<bool>* box(bool value) noexcept {
    if (value)
        return &boxed_true;
    return &boxed_false;
}

/// `value` in a new pool box (bool too), owned by the returned holder. Throws
/// std::bad_alloc when the pool has no memory.
template <class T, class Pool = memory_pool>
[[nodiscard]] com_ptr<reference<T>> make_box(const T& value) {
    reference<T>* box = pool_box<T, Pool>::make(value);
    if (box == nullptr)
        throw std::bad_alloc();
    return com_ptr<reference<T>>::attach(box);
}

/// The same without exceptions: S_OK with *out a box holding one reference for the
/// caller, E_OUTOFMEMORY with *out null, E_POINTER for a null out.
template <class T, class Pool = memory_pool>
HRESULT try_make_box(const T& value, reference<T>** out) noexcept {
    static_assert(std::is_nothrow_copy_constructible_v<T>,
                  "sta::com::try_make_box: T's copy may throw; use make_box");
    if (out == nullptr)
        return E_POINTER;
    *out = pool_box<T, Pool>::make(value);
    return *out != nullptr ? S_OK : E_OUTOFMEMORY;
}

/// A value other than bool: a pool box (make_box). bool takes the overload above.
template <class T, class Pool = memory_pool>
requires(!std::is_same_v<T, bool>) [[nodiscard]] com_ptr<reference<T>> box(const T& value) {
    return make_box<T, Pool>(value);
}

} // namespace sta::com

#endif // _WIN32
