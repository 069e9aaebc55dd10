// sta::com::activation_slot and sta::com::lazy_object on real COM (under wine here):
// a class of our own registered in-process with CoRegisterClassObject, whose factory
// and objects count every call, and a class wine provides (the Global Interface
// Table). Resolution runs once, objects work, reference counts balance, interfaces are
// queried once and only when used, failures return the HRESULT and retry.
#include "sta/com_activation.hpp"

#include <gtest/gtest.h>

#include <objidl.h>

#include <atomic>
#include <cstring>

// ---- the test class: two custom interfaces and the counters ------------------------

// The interfaces have external linkage: in an anonymous namespace, __CRT_UUID_DECL's
// __mingw_uuidof<I*> would be an unused function of its own (clang warns).
MIDL_INTERFACE("6b1f1c1e-3f0c-4a51-9d5e-0c8a2e7d4a01")
IAdder : public IUnknown {
    virtual HRESULT STDMETHODCALLTYPE Add(int a, int b, int* sum) = 0;
};
MIDL_INTERFACE("6b1f1c1e-3f0c-4a51-9d5e-0c8a2e7d4a02")
INamed : public IUnknown {
    virtual HRESULT STDMETHODCALLTYPE Id(int* id) = 0;
};
MIDL_INTERFACE("6b1f1c1e-3f0c-4a51-9d5e-0c8a2e7d4a03")
INotImplemented : public IUnknown {
    virtual HRESULT STDMETHODCALLTYPE Nothing() = 0;
};
#ifdef __CRT_UUID_DECL
__CRT_UUID_DECL(IAdder, 0x6b1f1c1e, 0x3f0c, 0x4a51, 0x9d, 0x5e, 0x0c, 0x8a, 0x2e, 0x7d, 0x4a, 0x01)
__CRT_UUID_DECL(INamed, 0x6b1f1c1e, 0x3f0c, 0x4a51, 0x9d, 0x5e, 0x0c, 0x8a, 0x2e, 0x7d, 0x4a, 0x02)
__CRT_UUID_DECL(INotImplemented, 0x6b1f1c1e, 0x3f0c, 0x4a51, 0x9d, 0x5e, 0x0c, 0x8a, 0x2e, 0x7d,
                0x4a, 0x03)
#endif
namespace {

// The class ids: one registered by the fixture, one never registered (until a test does).
constexpr CLSID clsid_counter = {
    0x6b1f1c1e, 0x3f0c, 0x4a51, {0x9d, 0x5e, 0x0c, 0x8a, 0x2e, 0x7d, 0x4a, 0x10}};
constexpr CLSID clsid_unregistered = {
    0x6b1f1c1e, 0x3f0c, 0x4a51, {0x9d, 0x5e, 0x0c, 0x8a, 0x2e, 0x7d, 0x4a, 0x11}};

struct counters {
    int create_instance = 0, lock_server = 0;
    int factory_add_ref = 0, factory_release = 0, factory_query = 0;
    int object_add_ref = 0, object_release = 0;
    int query_adder = 0, query_named = 0, query_other = 0;
    int objects_created = 0, objects_destroyed = 0;
    int next_id = 1;
    // The factory's references that are not the registration's: zero when balanced.
    [[nodiscard]] int factory_refs() const { return factory_add_ref - factory_release; }
    [[nodiscard]] int live_objects() const { return objects_created - objects_destroyed; }
};
counters calls;

class counter_object final : public IAdder, public INamed {
  public:
    counter_object() : id_(calls.next_id++) { ++calls.objects_created; }
    counter_object(const counter_object&) = delete;
    counter_object& operator=(const counter_object&) = delete;
    virtual ~counter_object() { ++calls.objects_destroyed; }

    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) override {
        if (ppv == nullptr)
            return E_POINTER;
        if (IsEqualIID(riid, IID_IUnknown) || IsEqualIID(riid, __uuidof(IAdder))) {
            if (IsEqualIID(riid, __uuidof(IAdder)))
                ++calls.query_adder;
            *ppv = static_cast<IAdder*>(this);
        } else if (IsEqualIID(riid, __uuidof(INamed))) {
            ++calls.query_named;
            *ppv = static_cast<INamed*>(this);
        } else {
            ++calls.query_other;
            *ppv = nullptr;
            return E_NOINTERFACE;
        }
        AddRef();
        return S_OK;
    }
    ULONG STDMETHODCALLTYPE AddRef() override {
        ++calls.object_add_ref;
        return static_cast<ULONG>(++refs_);
    }
    ULONG STDMETHODCALLTYPE Release() override {
        ++calls.object_release;
        const long r = --refs_;
        if (r == 0)
            delete this;
        return static_cast<ULONG>(r);
    }
    HRESULT STDMETHODCALLTYPE Add(int a, int b, int* sum) override {
        *sum = a + b;
        return S_OK;
    }
    HRESULT STDMETHODCALLTYPE Id(int* id) override {
        *id = id_;
        return S_OK;
    }

  private:
    long refs_ = 0;
    int id_;
};

/// A static factory: its references are counted, never freed.
class counter_factory final : public IClassFactory {
  public:
    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) override {
        ++calls.factory_query;
        if (IsEqualIID(riid, IID_IUnknown) || IsEqualIID(riid, IID_IClassFactory)) {
            *ppv = static_cast<IClassFactory*>(this);
            AddRef();
            return S_OK;
        }
        *ppv = nullptr;
        return E_NOINTERFACE;
    }
    ULONG STDMETHODCALLTYPE AddRef() override {
        ++calls.factory_add_ref;
        return 2;
    }
    ULONG STDMETHODCALLTYPE Release() override {
        ++calls.factory_release;
        return 1;
    }
    HRESULT STDMETHODCALLTYPE CreateInstance(IUnknown* outer, REFIID riid, void** ppv) override {
        ++calls.create_instance;
        *ppv = nullptr;
        if (outer != nullptr)
            return CLASS_E_NOAGGREGATION;
        auto* o = new counter_object;
        o->AddRef();
        const HRESULT hr = o->QueryInterface(riid, ppv);
        o->Release();
        return hr;
    }
    HRESULT STDMETHODCALLTYPE LockServer(BOOL) override {
        ++calls.lock_server;
        return S_OK;
    }
    virtual ~counter_factory() = default;
};
counter_factory the_factory;

/// COM initialised (STA), the counter class registered; counters zeroed after the
/// registration, and the registration's own references checked to be returned.
class ComActivation : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(SUCCEEDED(CoInitializeEx(nullptr, COINIT_APARTMENTTHREADED)));
        ASSERT_EQ(CoRegisterClassObject(clsid_counter, &the_factory, CLSCTX_INPROC_SERVER,
                                        REGCLS_MULTIPLEUSE, &cookie_),
                  S_OK);
        registration_refs_ = calls.factory_refs();
        const int next_id = calls.next_id;
        calls = counters{};
        calls.next_id = next_id;
    }
    void TearDown() override {
        EXPECT_EQ(calls.factory_refs(), 0) << "a factory reference leaked or was released twice";
        EXPECT_EQ(calls.live_objects(), 0) << "an object leaked";
        EXPECT_EQ(calls.object_add_ref, calls.object_release);
        calls.factory_add_ref += registration_refs_; // the registration's, given back below
        EXPECT_EQ(CoRevokeClassObject(cookie_), S_OK);
        EXPECT_EQ(calls.factory_refs(), 0) << "CoRevokeClassObject did not balance";
        CoUninitialize();
    }
    DWORD cookie_ = 0;
    int registration_refs_ = 0;
};

// Guards "exactly once" and the rewrite: one CoGetClassObject (one factory reference),
// then every creation is CreateInstance called directly from the slot's two words.
TEST_F(ComActivation, ResolvesOnceThenCallsCreateInstanceDirectly) {
    {
        sta::com::activation_slot slot{clsid_counter};
        EXPECT_FALSE(slot.resolved());
        EXPECT_EQ(slot.current().factory, static_cast<void*>(&slot)); // CA1
        EXPECT_EQ(calls.factory_add_ref, 0);                          // construction asks nothing

        IAdder* adder = nullptr;
        ASSERT_EQ(slot.create(&adder), S_OK);
        ASSERT_NE(adder, nullptr);
        EXPECT_TRUE(slot.resolved());
        EXPECT_EQ(slot.factory(), static_cast<IClassFactory*>(&the_factory));
        EXPECT_EQ(calls.factory_refs(), 1) << "the slot holds exactly one factory reference";
        const int add_refs_after_resolution = calls.factory_add_ref;
        const int queries_after_resolution = calls.factory_query;

        // The rewrite: fn is the factory's own CreateInstance, read from vtable index 3.
        using create_fn = sta::com::activation_slot::create_fn;
        const auto* vtable =
            *reinterpret_cast<create_fn const* const*>(static_cast<IClassFactory*>(&the_factory));
        EXPECT_EQ(slot.current().fn, vtable[3]);

        int sum = 0;
        EXPECT_EQ(adder->Add(2, 3, &sum), S_OK);
        EXPECT_EQ(sum, 5);
        adder->Release();

        for (int i = 0; i < 100; ++i) {
            IUnknown* u = nullptr;
            ASSERT_EQ(slot(nullptr, IID_IUnknown, reinterpret_cast<void**>(&u)), S_OK);
            u->Release();
        }
        EXPECT_EQ(calls.create_instance, 101);
        EXPECT_EQ(calls.factory_add_ref, add_refs_after_resolution) << "resolved again";
        EXPECT_EQ(calls.factory_query, queries_after_resolution);
        EXPECT_EQ(calls.lock_server, 0) << "the slot keeps the server with a reference";
        EXPECT_EQ(calls.live_objects(), 0);
    } // the destructor releases the factory reference
    EXPECT_EQ(calls.factory_refs(), 0);
}

// Guards reset(): it gives the reference back, and the next call resolves again.
TEST_F(ComActivation, ResetReleasesTheFactoryAndResolvesAgain) {
    sta::com::activation_slot slot{clsid_counter};
    ASSERT_EQ(slot.resolve(), S_OK);
    EXPECT_EQ(slot.resolve(), S_OK); // no-op when resolved
    EXPECT_EQ(calls.factory_refs(), 1);
    EXPECT_EQ(calls.create_instance, 0) << "resolve() creates nothing";
    slot.reset();
    EXPECT_FALSE(slot.resolved());
    EXPECT_EQ(calls.factory_refs(), 0);
    slot.reset(); // no-op when unresolved: no double release
    EXPECT_EQ(calls.factory_refs(), 0);

    INamed* named = nullptr;
    ASSERT_EQ(slot.create(&named), S_OK);
    EXPECT_EQ(calls.factory_refs(), 1);
    named->Release();
    slot.reset();
    EXPECT_EQ(calls.factory_refs(), 0);
}

// Guards the failure rule: an unregistered class returns CoGetClassObject's HRESULT,
// nulls *ppv, stays unresolved, and the next call retries (and succeeds once registered).
TEST_F(ComActivation, UnregisteredClassReturnsTheHresultAndRetries) {
    sta::com::activation_slot slot{clsid_unregistered};
    IUnknown* u = reinterpret_cast<IUnknown*>(&slot); // garbage that must be nulled
    const HRESULT hr = slot(nullptr, IID_IUnknown, reinterpret_cast<void**>(&u));
    EXPECT_EQ(hr, REGDB_E_CLASSNOTREG);
    EXPECT_EQ(u, nullptr);
    EXPECT_FALSE(slot.resolved());
    EXPECT_EQ(slot.resolve(), REGDB_E_CLASSNOTREG);
    EXPECT_FALSE(slot.resolved());
    EXPECT_THROW((void)sta::com::make_object<IAdder>(slot), sta::com::com_error);
    try {
        (void)sta::com::make_object<IAdder>(slot);
    } catch (const sta::com::com_error& e) {
        EXPECT_EQ(e.code(), REGDB_E_CLASSNOTREG);
        EXPECT_NE(std::strstr(e.what(), "0x80040154"), nullptr) << e.what();
    }
    EXPECT_EQ(calls.create_instance, 0);

    // Register the class under that id: the same slot now resolves.
    DWORD cookie = 0;
    ASSERT_EQ(CoRegisterClassObject(clsid_unregistered, &the_factory, CLSCTX_INPROC_SERVER,
                                    REGCLS_MULTIPLEUSE, &cookie),
              S_OK);
    const int registration_refs = calls.factory_refs();
    ASSERT_EQ(slot(nullptr, IID_IUnknown, reinterpret_cast<void**>(&u)), S_OK);
    ASSERT_NE(u, nullptr);
    EXPECT_TRUE(slot.resolved());
    u->Release();
    slot.reset();
    EXPECT_EQ(calls.factory_refs(), registration_refs);
    EXPECT_EQ(CoRevokeClassObject(cookie), S_OK);
    EXPECT_EQ(calls.factory_refs(), 0);
}

// Guards the slot's HRESULT pass-through: CreateInstance's own failure comes back as is
// and does not unresolve the slot (only resolution failures do).
TEST_F(ComActivation, CreateInstanceFailuresPassThrough) {
    sta::com::activation_slot slot{clsid_counter};
    INotImplemented* p = nullptr;
    EXPECT_EQ(slot.create(&p), E_NOINTERFACE);
    EXPECT_EQ(p, nullptr);
    EXPECT_TRUE(slot.resolved());
    EXPECT_EQ(calls.live_objects(), 0) << "the object of a failed creation leaked";
    IUnknown* outer = reinterpret_cast<IUnknown*>(&the_factory);
    IUnknown* u = nullptr;
    EXPECT_EQ(slot(outer, IID_IUnknown, reinterpret_cast<void**>(&u)), CLASS_E_NOAGGREGATION);
}

// Guards the lazy interfaces: creation queries nothing; each interface is queried once,
// on its first use; copies share the cache; the last copy releases everything once.
TEST_F(ComActivation, LazyObjectQueriesEachInterfaceOnceOnFirstUse) {
    sta::com::activation_slot slot{clsid_counter};
    {
        auto obj = sta::com::make_object<IAdder, INamed, INotImplemented>(slot);
        ASSERT_TRUE(obj);
        EXPECT_EQ(calls.create_instance, 1);
        EXPECT_EQ(calls.query_adder + calls.query_named + calls.query_other, 0);
        EXPECT_FALSE(obj.cached<IAdder>());
        EXPECT_FALSE(obj.cached<INamed>());

        int id = 0;
        EXPECT_EQ(obj.get<INamed>()->Id(&id), S_OK);
        EXPECT_GT(id, 0);
        EXPECT_EQ(calls.query_named, 1);
        EXPECT_EQ(calls.query_adder, 0) << "an unused interface was queried";
        EXPECT_TRUE(obj.cached<INamed>());
        EXPECT_FALSE(obj.cached<IAdder>());

        auto copy = obj; // a non-atomic ++, no AddRef
        EXPECT_EQ(obj.use_count(), 2);
        const int add_refs = calls.object_add_ref;
        for (int i = 0; i < 10; ++i) {
            int sum = 0;
            EXPECT_EQ(copy.get<IAdder>()->Add(i, 1, &sum), S_OK);
            EXPECT_EQ(sum, i + 1);
            EXPECT_EQ(obj.get<INamed>()->Id(&id), S_OK);
        }
        EXPECT_EQ(calls.query_adder, 1);
        EXPECT_EQ(calls.query_named, 1);
        EXPECT_EQ(calls.object_add_ref, add_refs + 1) << "only the first IAdder query AddRefs";
        EXPECT_TRUE(obj.cached<IAdder>()) << "the copy's query fills the shared cache";

        // A failed query is not cached: it is asked again, and reported.
        INotImplemented* none = nullptr;
        EXPECT_EQ(obj.try_get(&none), E_NOINTERFACE);
        EXPECT_EQ(none, nullptr);
        EXPECT_THROW((void)obj.get<INotImplemented>(), sta::com::com_error);
        EXPECT_EQ(calls.query_other, 2);

        obj.reset();
        EXPECT_EQ(calls.live_objects(), 1) << "the copy still holds the object";
        EXPECT_EQ(copy.use_count(), 1);
    }
    EXPECT_EQ(calls.live_objects(), 0);
    EXPECT_EQ(calls.object_add_ref, calls.object_release);
    EXPECT_EQ(calls.factory_refs(), 1); // the slot's, released by its destructor
}

// Guards an unused lazy object: created and dropped, nothing queried, nothing leaked.
TEST_F(ComActivation, LazyObjectUnusedQueriesNothing) {
    sta::com::activation_slot slot{clsid_counter};
    for (int i = 0; i < 10; ++i)
        (void)sta::com::make_object<IAdder, INamed>(slot);
    EXPECT_EQ(calls.create_instance, 10);
    EXPECT_EQ(calls.query_adder + calls.query_named, 0);
    EXPECT_EQ(calls.live_objects(), 0);
    EXPECT_EQ(calls.factory_add_ref - calls.factory_release, 1);
}

// ---- a class wine itself provides: the Global Interface Table (ole32/combase) ------

// Guards the slot against a factory we did not write: the GIT is created through the
// slot (twice: one resolution), used to register and fetch back one of our objects
// (as IUnknown: wine has no proxy/stub for our custom interfaces, and the GIT marshals),
// and every reference balances.
TEST_F(ComActivation, WineProvidedClassStdGlobalInterfaceTable) {
    sta::com::activation_slot slot{CLSID_StdGlobalInterfaceTable};
    auto git = sta::com::make_object<IGlobalInterfaceTable>(slot);
    ASSERT_TRUE(slot.resolved());
    const auto words = slot.current();
    auto git2 = sta::com::make_object<IGlobalInterfaceTable>(slot); // the second creation
    EXPECT_EQ(slot.current().factory, words.factory) << "resolved again";

    sta::com::activation_slot counter_slot{clsid_counter};
    auto obj = sta::com::make_object<IAdder>(counter_slot);
    DWORD cookie = 0;
    ASSERT_EQ(git.get<IGlobalInterfaceTable>()->RegisterInterfaceInGlobal(obj.unknown(),
                                                                          IID_IUnknown, &cookie),
              S_OK);
    {
        IUnknown* back = nullptr;
        ASSERT_EQ(git2.get<IGlobalInterfaceTable>()->GetInterfaceFromGlobal(
                      cookie, IID_IUnknown, reinterpret_cast<void**>(&back)),
                  S_OK);
        ASSERT_NE(back, nullptr);
        auto from_git = sta::com::lazy_object<IAdder>::adopt(back);
        int sum = 0;
        EXPECT_EQ(from_git.get<IAdder>()->Add(20, 22, &sum), S_OK);
        EXPECT_EQ(sum, 42);
    }
    EXPECT_EQ(git.get<IGlobalInterfaceTable>()->RevokeInterfaceFromGlobal(cookie), S_OK);
    obj.reset();
    EXPECT_EQ(calls.live_objects(), 0) << "the GIT kept a reference after the revoke";

    git.reset();
    git2.reset();
    slot.reset();
    EXPECT_FALSE(slot.resolved());
}

} // namespace
