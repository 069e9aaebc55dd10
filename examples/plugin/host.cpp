// sta-pool plugin demo: the host. Loads the shapes plugin with dlopen, resolves each
// class's factory by name (dlsym) into a sta::lazy_slot on its first use, creates
// objects through the slots and holds them in sta::local_ptr proxies (the seed's
// single-thread reference-counted proxy: AddRef/Release without atomics).
//
//   plugin_host <path to the plugin module>
//
// It checks what it shows and exits 1 with a message if anything is off, so the
// ctest test "plugin_host" proves the demo instead of only building it:
//   - each class is resolved exactly once, however many objects are created;
//   - a class the plugin does not export fails with sta::unresolved_slot naming it,
//     and is retried (not cached) on the next call;
//   - every object created is released exactly once when its last proxy goes.
#include "shape_api.hpp"

#include "sta/lazy_slot.hpp"
#include "sta/local_ptr.hpp"

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

/// The loaded plugin. Invariant: handle is the dlopen handle while the slots may be
/// resolved; resolutions counts every call of the resolver.
struct plugin_library {
    void* handle = nullptr;
    int resolutions = 0;
};

constinit plugin_library plugin{};

using create_slot = sta::lazy_slot<shapes::shape*(double)>;

/// The resolver: the class name becomes a symbol name; its factory gives both words.
create_slot::target resolve_factory(const char* class_name, void* library) {
    auto* lib = static_cast<plugin_library*>(library);
    ++lib->resolutions;
    const std::string symbol = std::string("shapes_factory_") + class_name;
    dlerror();
    const auto* f = static_cast<const shapes::factory*>(dlsym(lib->handle, symbol.c_str()));
    if (f == nullptr) {
        const char* why = dlerror();
        throw sta::unresolved_slot(class_name, why != nullptr ? why : "null symbol");
    }
    return {f->context, f->create};
}

// The slots: constant-initialised globals, unresolved until their first call.
constinit create_slot make_circle{&resolve_factory, "circle", &plugin};
constinit create_slot make_square{&resolve_factory, "square", &plugin};
constinit create_slot make_hexagon{&resolve_factory, "hexagon", &plugin};

/// The host's proxy: owns one plugin object, releases it when the last local_ptr goes.
struct shape_proxy {
    shapes::shape* impl;
    explicit shape_proxy(shapes::shape* s) : impl(s) {}
    shape_proxy(const shape_proxy&) = delete;
    shape_proxy& operator=(const shape_proxy&) = delete;
    ~shape_proxy() { impl->release(); }
};

int failures = 0;
void expect(bool ok, const char* what) {
    std::printf("%s %s\n", ok ? "  ok  " : "  FAIL", what);
    if (!ok)
        ++failures;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <path to the shapes plugin>\n", argv[0]);
        return 2;
    }
    plugin.handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (plugin.handle == nullptr) {
        std::fprintf(stderr, "plugin_host: dlopen failed: %s\n", dlerror());
        return 1;
    }
    const auto* state =
        static_cast<const shapes::plugin_state*>(dlsym(plugin.handle, "shapes_plugin_state"));
    if (state == nullptr) {
        std::fprintf(stderr, "plugin_host: no shapes_plugin_state: %s\n", dlerror());
        return 1;
    }

    std::printf("plugin_host: %s loaded; slots resolved: circle %d, square %d\n", argv[1],
                make_circle.resolved(), make_square.resolved());
    {
        std::vector<sta::local_ptr<shape_proxy>> scene;
        for (int i = 1; i <= 3; ++i)
            scene.push_back(sta::make_local<shape_proxy>(make_circle(i)));
        for (int i = 1; i <= 2; ++i)
            scene.push_back(sta::make_local<shape_proxy>(make_square(i * 2.0)));
        expect(plugin.resolutions == 2, "five objects, two classes: two resolutions");
        expect(make_circle.resolved() && make_square.resolved(), "both slots rewritten");
        expect(state->live_objects == 5, "five objects alive in the plugin");

        double total = 0;
        for (const auto& s : scene) {
            std::printf("        %-7s area %7.3f\n", s->impl->class_name(), s->impl->area());
            total += s->impl->area();
        }
        const double expected = 3.141592653589793 * (1 + 4 + 9) + 4 + 16;
        expect(std::fabs(total - expected) < 1e-9, "areas computed by the plugin's objects");

        // Proxies shared: a second view of the scene, then the first goes away.
        std::vector<sta::local_ptr<shape_proxy>> selection(scene.begin(), scene.begin() + 2);
        expect(selection[0].use_count() == 2, "a proxy shared by two views counts two");
        scene.clear();
        expect(state->live_objects == 2, "objects still selected stay alive");
        selection.clear();
        expect(state->live_objects == 0, "every object released when its last proxy went");
    }

    // A class the plugin does not have: a clear error, and retried on the next call.
    for (int attempt = 1; attempt <= 2; ++attempt) {
        try {
            (void)make_hexagon(1.0);
            expect(false, "hexagon should not resolve");
        } catch (const sta::unresolved_slot& e) {
            std::printf("        attempt %d: %s\n", attempt, e.what());
            expect(std::string(e.name()) == "hexagon" && !make_hexagon.resolved(),
                   "unknown class: sta::unresolved_slot naming it, slot stays unresolved");
        }
    }
    expect(plugin.resolutions == 4, "the failed slot retried (2 + 2 resolutions)");
    expect(state->created == 5 && state->live_objects == 0, "no object leaked or lost");

    // The slots point into the plugin: forget them before unloading it.
    make_circle.reset();
    make_square.reset();
    dlclose(plugin.handle);
    plugin.handle = nullptr;

    std::printf("plugin_host: %s\n", failures == 0 ? "all checks passed" : "CHECKS FAILED");
    return failures == 0 ? 0 : 1;
}
