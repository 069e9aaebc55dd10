// Whether this process's malloc is libsta_malloc's, against what the environment says
// to expect: with STA_MALLOC_EXPECT_PRELOADED=1 (test preset release-preloaded, which
// runs every test with LD_PRELOAD=libsta_malloc.so) it fails unless malloc is the
// library's, so a preload that the dynamic linker ignored (a wrong path only warns)
// cannot pass as a run on the library; without it, malloc must be glibc's.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main() {
    void* (*volatile fn)(std::size_t) = &std::malloc;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(fn), &info) == 0 || info.dli_fname == nullptr) {
        std::fprintf(stderr, "preload_in_effect: dladdr found no module for malloc\n");
        return 1;
    }
    const bool ours = std::strstr(info.dli_fname, "libsta_malloc") != nullptr;
    const char* expect = std::getenv("STA_MALLOC_EXPECT_PRELOADED");
    const bool expected = expect != nullptr && std::strcmp(expect, "1") == 0;
    std::printf("malloc comes from %s (%s)\n", info.dli_fname,
                ours ? "libsta_malloc" : "not libsta_malloc");
    if (ours != expected) {
        std::fprintf(stderr, "preload_in_effect: expected malloc %s libsta_malloc\n",
                     expected ? "from" : "not from");
        return 1;
    }
    return 0;
}
