/* A library given on the command line (libsta_malloc.so, libsta_malloc-hardened.so) loads
 * with dlopen, as a plugin that links it or a program that loads it late would load it:
 * glibc leaves a library loaded after the program started a few hundred bytes of static
 * TLS, and a library that asks for more fails to load ("cannot allocate memory in static
 * TLS block"). Its malloc, free and malloc_usable_size, found with dlsym, then serve two
 * threads in turn: each allocates 2,000 blocks of 16 B-4 KiB, writes them whole, checks
 * them and frees them (the hardened library's quarantine takes a thread's first free, and
 * its thread's end gives it back). Run by ctest malloc.loads_with_dlopen.*; prints "ok"
 * and exits 0 when all hold, else names the first that does not. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef void* (*malloc_fn)(size_t);
typedef void (*free_fn)(void*);
typedef size_t (*usable_fn)(void*);

static malloc_fn lib_malloc;
static free_fn lib_free;
static usable_fn lib_usable;

enum { blocks = 2000 };

/* Allocates, fills, checks and frees `blocks` blocks; "ok" or what failed. */
static void* churn(void* seed) {
    static void* kept[2][blocks];
    const size_t which = (size_t)seed;
    for (size_t i = 0; i < blocks; ++i) {
        const size_t n = 16 + (i * 37 + which * 11) % 4081;
        unsigned char* const p = lib_malloc(n);
        if (p == NULL)
            return "malloc returned NULL";
        if (lib_usable(p) < n)
            return "malloc_usable_size is below the size asked";
        memset(p, (int)(i & 0xff), n);
        kept[which][i] = p;
    }
    for (size_t i = 0; i < blocks; ++i) {
        const size_t n = 16 + (i * 37 + which * 11) % 4081;
        const unsigned char* const p = kept[which][i];
        if (p[0] != (i & 0xff) || p[n - 1] != (i & 0xff))
            return "a block lost what was written into it";
        lib_free(kept[which][i]);
    }
    return "ok";
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: loads_with_dlopen LIBRARY\n");
        return 2;
    }
    void* const lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        printf("FAIL: dlopen: %s\n", dlerror());
        return 1;
    }
    /* A data pointer to a function pointer through memcpy: ISO C leaves the cast undefined. */
    void* const symbols[3] = {dlsym(lib, "malloc"), dlsym(lib, "free"),
                              dlsym(lib, "malloc_usable_size")};
    if (symbols[0] == NULL || symbols[1] == NULL || symbols[2] == NULL) {
        printf("FAIL: dlsym: malloc, free or malloc_usable_size is missing\n");
        return 1;
    }
    memcpy(&lib_malloc, &symbols[0], sizeof lib_malloc);
    memcpy(&lib_free, &symbols[1], sizeof lib_free);
    memcpy(&lib_usable, &symbols[2], sizeof lib_usable);
    for (size_t t = 0; t < 2; ++t) {
        pthread_t thread;
        void* said = NULL;
        if (pthread_create(&thread, NULL, churn, (void*)t) != 0 ||
            pthread_join(thread, &said) != 0) {
            printf("FAIL: a thread did not run\n");
            return 1;
        }
        if (strcmp(said, "ok") != 0) {
            printf("FAIL: thread %zu: %s\n", t, (const char*)said);
            return 1;
        }
    }
    printf("ok\n");
    return 0;
}
