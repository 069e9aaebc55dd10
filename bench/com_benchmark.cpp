// Object creation through sta::com::activation_slot against CoCreateInstance with an
// eager QueryInterface (issue 9, item 6; Windows only, run under wine here). Google
// Benchmark is not available for mingw, so this times itself (self_timed.hpp: the
// median of R repetitions of N creations, rows interleaved per repetition).
// Prints a Markdown table of ns per creation (create + final Release included).
//
//   com_benchmark [iterations=100000] [repetitions=15]
#include "self_timed.hpp"
#include "sta/com_activation.hpp"

#include <objbase.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

// The interface has external linkage: in an anonymous namespace, __CRT_UUID_DECL's
// __mingw_uuidof<IAdder*> would be an unused function of its own (clang warns).
MIDL_INTERFACE("3d0f6a52-8b3e-4c1a-a6a0-6e2b7c9d1e01")
IAdder : public IUnknown {
    virtual HRESULT STDMETHODCALLTYPE Add(int a, int b, int* sum) = 0;
};
#ifdef __CRT_UUID_DECL
__CRT_UUID_DECL(IAdder, 0x3d0f6a52, 0x8b3e, 0x4c1a, 0xa6, 0xa0, 0x6e, 0x2b, 0x7c, 0x9d, 0x1e, 0x01)
#endif
namespace {

constexpr CLSID clsid_adder = {
    0x3d0f6a52, 0x8b3e, 0x4c1a, {0xa6, 0xa0, 0x6e, 0x2b, 0x7c, 0x9d, 0x1e, 0x10}};

/// A minimal in-process object: what a real class costs beyond COM's own work.
class adder final : public IAdder {
  public:
    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) override {
        if (IsEqualIID(riid, IID_IUnknown) || IsEqualIID(riid, __uuidof(IAdder))) {
            *ppv = static_cast<IAdder*>(this);
            ++refs_;
            return S_OK;
        }
        *ppv = nullptr;
        return E_NOINTERFACE;
    }
    ULONG STDMETHODCALLTYPE AddRef() override { return static_cast<ULONG>(++refs_); }
    ULONG STDMETHODCALLTYPE Release() override {
        const long r = --refs_;
        if (r == 0)
            delete this;
        return static_cast<ULONG>(r);
    }
    HRESULT STDMETHODCALLTYPE Add(int a, int b, int* sum) override {
        *sum = a + b;
        return S_OK;
    }
    virtual ~adder() = default;

  private:
    long refs_ = 0;
};

class adder_factory final : public IClassFactory {
  public:
    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) override {
        if (IsEqualIID(riid, IID_IUnknown) || IsEqualIID(riid, IID_IClassFactory)) {
            *ppv = static_cast<IClassFactory*>(this);
            return S_OK;
        }
        *ppv = nullptr;
        return E_NOINTERFACE;
    }
    ULONG STDMETHODCALLTYPE AddRef() override { return 2; }
    ULONG STDMETHODCALLTYPE Release() override { return 1; }
    HRESULT STDMETHODCALLTYPE CreateInstance(IUnknown* outer, REFIID riid, void** ppv) override {
        *ppv = nullptr;
        if (outer != nullptr)
            return CLASS_E_NOAGGREGATION;
        auto* o = new adder;
        o->AddRef();
        const HRESULT hr = o->QueryInterface(riid, ppv);
        o->Release();
        return hr;
    }
    HRESULT STDMETHODCALLTYPE LockServer(BOOL) override { return S_OK; }
    virtual ~adder_factory() = default;
};
adder_factory the_factory;

void check(HRESULT hr, const char* what) {
    if (FAILED(hr)) {
        std::fprintf(stderr, "com_benchmark: %s failed: 0x%08lX\n", what,
                     static_cast<unsigned long>(hr));
        std::exit(1);
    }
}

volatile int sink;

// ---- the rows: one creation each, everything released ------------------------------

/// The seed's way: the slot's two words, one indirect call, IUnknown only.
constinit sta::com::activation_slot slot{clsid_adder};
void via_slot() {
    IUnknown* u = nullptr;
    check(slot(nullptr, IID_IUnknown, reinterpret_cast<void**>(&u)), "slot");
    u->Release();
}

/// The usual way: CoCreateInstance (a class lookup each time), then the default
/// interface queried eagerly, as projections do.
void via_cocreateinstance_eager_qi() {
    IUnknown* u = nullptr;
    check(CoCreateInstance(clsid_adder, nullptr, CLSCTX_INPROC_SERVER, IID_IUnknown,
                           reinterpret_cast<void**>(&u)),
          "CoCreateInstance");
    IAdder* a = nullptr;
    check(u->QueryInterface(__uuidof(IAdder), reinterpret_cast<void**>(&a)), "QueryInterface");
    u->Release();
    a->Release();
}

/// CoCreateInstance asking for the interface directly (no separate QueryInterface).
void via_cocreateinstance() {
    IAdder* a = nullptr;
    check(CoCreateInstance(clsid_adder, nullptr, CLSCTX_INPROC_SERVER, __uuidof(IAdder),
                           reinterpret_cast<void**>(&a)),
          "CoCreateInstance");
    a->Release();
}

/// A factory cached by hand (a null-checked pointer), called virtually.
IClassFactory* cached_factory = nullptr;
void via_cached_factory_virtual() {
    if (cached_factory == nullptr)
        check(CoGetClassObject(clsid_adder, CLSCTX_INPROC_SERVER, nullptr, IID_IClassFactory,
                               reinterpret_cast<void**>(&cached_factory)),
              "CoGetClassObject");
    IUnknown* u = nullptr;
    check(cached_factory->CreateInstance(nullptr, IID_IUnknown, reinterpret_cast<void**>(&u)),
          "CreateInstance");
    u->Release();
}

/// The slot and the lazy wrapper, with the default interface used once (queried lazily).
void via_slot_lazy_object_used() {
    auto o = sta::com::make_object<IAdder>(slot);
    int s = 0;
    o.get<IAdder>()->Add(1, 2, &s);
    sink = s;
}

} // namespace

int main(int argc, char** argv) {
    const auto [iterations, repetitions] =
        self_timed::parse_arguments(argc, argv, "com_benchmark", 100000);
    check(CoInitializeEx(nullptr, COINIT_APARTMENTTHREADED), "CoInitializeEx");
    DWORD cookie = 0;
    check(CoRegisterClassObject(clsid_adder, &the_factory, CLSCTX_INPROC_SERVER, REGCLS_MULTIPLEUSE,
                                &cookie),
          "CoRegisterClassObject");

    std::vector<self_timed::row> rows = {
        {"**`sta::com::activation_slot`** (IUnknown)", &via_slot, {}},
        {"`CoCreateInstance` + eager `QueryInterface`", &via_cocreateinstance_eager_qi, {}},
        {"`CoCreateInstance` (asks for the interface)", &via_cocreateinstance, {}},
        {"cached `IClassFactory*`, virtual call", &via_cached_factory_virtual, {}},
        {"slot + `lazy_object`, interface used once", &via_slot_lazy_object_used, {}},
    };
    self_timed::run(rows, iterations, repetitions);

    const double base = self_timed::median(rows[0].ns);
    std::printf("com_benchmark: %ld creations x %d repetitions, median ns per creation "
                "(create + release)\n\n",
                iterations, repetitions);
    std::printf("| creation | ns | ratio to the slot |\n|---|---:|---:|\n");
    for (const auto& r : rows) {
        const double m = self_timed::median(r.ns);
        std::printf("| %s | %.1f | %.2f |\n", r.name, m, m / base);
    }
    const double ratio = self_timed::median(rows[1].ns) / base;
    std::printf("\nCoCreateInstance + QueryInterface / slot = %.2fx (target: > 1)\n", ratio);

    slot.reset();
    if (cached_factory != nullptr)
        cached_factory->Release();
    check(CoRevokeClassObject(cookie), "CoRevokeClassObject");
    CoUninitialize();
    return 0; // the target is a benchmark's, not a test's: ctest only proves the program runs
}
