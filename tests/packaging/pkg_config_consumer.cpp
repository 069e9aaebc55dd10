// The drop-in malloc as an installed user finds it: compiled and linked with the flags
// `pkg-config --libs sta_malloc` gives (run_pkg_config.cmake). Passes when this
// program's malloc and operator new are libsta_malloc's.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main() {
    void* (*volatile fn)(std::size_t) = &std::malloc;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(fn), &info) == 0 ||
        std::strstr(info.dli_fname, "libsta_malloc") == nullptr) {
        std::printf("malloc is not libsta_malloc's: %s\n", info.dli_fname ? info.dli_fname : "?");
        return 1;
    }
    auto* s = new std::string(1000, 'x'); // operator new, then the sized delete
    const bool ok = s->size() == 1000;
    delete s;
    std::printf(ok ? "consumer ok: malloc from %s\n" : "broken: %s\n", info.dli_fname);
    return ok ? 0 : 1;
}
