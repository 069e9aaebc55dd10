// The conventional box, the peer of sta::com::box: what a WinRT projection's box_value
// amounts to — a heap object (operator new) with an interlocked reference count, made
// for the call and freed by its last Release. It implements the same interfaces the
// same way as sta::com::pool_box (sta/com_box.hpp) and answers IAgileObject, as the
// platform's boxes do: only the allocation and the count differ. Windows only.
#pragma once

#include "sta/com_box.hpp"

template <class T>
class heap_box final : public sta::com::detail::reference_methods<sta::com::reference<T>, T> {
  public:
    explicit heap_box(const T& value) : value_(value) {}
    heap_box(const heap_box&) = delete;
    heap_box& operator=(const heap_box&) = delete;

    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) final {
        if (ppv == nullptr)
            return E_POINTER;
        if (sta::com::detail::answers<sta::com::reference<T>, sta::com::inspectable,
                                      sta::com::agile_object>(riid)) {
            *ppv = static_cast<sta::com::reference<T>*>(this);
            AddRef();
            return S_OK;
        }
        *ppv = nullptr;
        return E_NOINTERFACE;
    }
    ULONG STDMETHODCALLTYPE AddRef() final {
        return static_cast<ULONG>(InterlockedIncrement(&refs_));
    }
    ULONG STDMETHODCALLTYPE Release() final {
        const LONG left = InterlockedDecrement(&refs_);
        if (left == 0)
            delete this;
        return static_cast<ULONG>(left);
    }
    HRESULT STDMETHODCALLTYPE get_Value(T* value) final {
        if (value == nullptr)
            return E_POINTER;
        *value = value_;
        return S_OK;
    }

  private:
    ~heap_box() = default;
    LONG refs_ = 1;
    T value_;
};
