/* The heap bugs libsta_malloc.so refuses in release builds (issue 27), one per mode; run
 * unchanged under LD_PRELOAD by tests/malloc/expect_refusal.sh, which asserts the one-line
 * report and SIGABRT. Each mode does the bug and then what would show the harm (two
 * allocations of the size that could hand out one block twice); it exits 0 only if
 * nothing stopped it. Built with -fno-builtin: the compiler would otherwise drop a
 * malloc whose block is only freed. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wfree-nonheap-object" /* the bugs are the point */
#pragma GCC diagnostic ignored "-Wuse-after-free"
#endif
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char static_buffer[64];
static void* volatile sink;

static void* free_it(void* p) {
    free(p);
    return NULL;
}

/* C23's frees, found at run time: glibc 2.36 has none, the preloaded library has them. */
typedef void (*free_sized_fn)(void*, size_t);
typedef void (*free_aligned_sized_fn)(void*, size_t, size_t);
static void* exported(const char* name) {
    void* f = dlsym(RTLD_DEFAULT, name);
    if (f == NULL) {
        fprintf(stderr, "bad_frees: %s is not exported\n", name);
        exit(1);
    }
    return f;
}
static free_sized_fn c23_free_sized(void) {
    free_sized_fn f;
    void* symbol = exported("free_sized");
    memcpy(&f, &symbol, sizeof f);
    return f;
}
static free_aligned_sized_fn c23_free_aligned_sized(void) {
    free_aligned_sized_fn f;
    void* symbol = exported("free_aligned_sized");
    memcpy(&f, &symbol, sizeof f);
    return f;
}

static void two_mallocs(size_t n) {
    void* a = malloc(n);
    void* b = malloc(n);
    printf("%s\n", a == b ? "the same block twice" : "two blocks");
    sink = a;
    sink = b;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "double_free") == 0) {
        void* p = malloc(32);
        free(p);
        free(p);
        two_mallocs(32);
    } else if (strcmp(mode, "double_free_later") == 0) {
        /* other blocks of the class come and go between the two frees */
        void* p = malloc(48);
        free(p);
        for (int i = 0; i < 10; ++i)
            free(malloc(48));
        free(p);
        two_mallocs(48);
    } else if (strcmp(mode, "double_free_other_thread") == 0) {
        /* the owner's free finds the mark of a block on its way home (freed_mark.hpp, M3) */
        void* p = malloc(100);
        pthread_t t;
        pthread_create(&t, NULL, free_it, p);
        pthread_join(t, NULL);
        free(p);
        two_mallocs(100);
    } else if (strcmp(mode, "double_free_both_other_thread") == 0) {
        void* p = malloc(100);
        pthread_t t;
        pthread_create(&t, NULL, free_it, p);
        pthread_join(t, NULL);
        pthread_create(&t, NULL, free_it, p);
        pthread_join(t, NULL);
        two_mallocs(100); /* the owner takes its blocks back on its next refill */
        for (int i = 0; i < 100000; ++i)
            free(malloc(100));
    } else if (strcmp(mode, "double_free_after_flush") == 0) {
        /* 2000 frees between the two: the caches were flushed to the bitmaps, and the
         * block holds its freed mark there (freed_mark.hpp, M1) */
        static void* others[2000];
        void* p = malloc(48);
        for (int i = 0; i < 2000; ++i)
            others[i] = malloc(48);
        free(p);
        for (int i = 0; i < 2000; ++i)
            free(others[i]);
        free(p);
        two_mallocs(48);
    } else if (strcmp(mode, "double_free_in_a_burst") == 0) {
        /* a burst of frees sets bits at once (direct_frees, layout/spans.hpp) */
        static void* blocks[4000];
        for (int i = 0; i < 4000; ++i)
            blocks[i] = malloc(48);
        for (int i = 0; i < 4000; ++i)
            free(blocks[i]);
        free(blocks[3990]);
        two_mallocs(48);
    } else if (strcmp(mode, "double_free_owner_then_other_thread") == 0) {
        void* p = malloc(100);
        free(p); /* on its class's cache, marked */
        pthread_t t;
        pthread_create(&t, NULL, free_it, p);
        pthread_join(t, NULL);
        for (int i = 0; i < 100000; ++i) /* the owner takes its blocks back at a refill */
            free(malloc(64));
        two_mallocs(100);
    } else if (strcmp(mode, "double_free_after_realloc") == 0) {
        void* p = malloc(24);
        void* q = realloc(p, 4000); /* moves: p is freed by realloc */
        free(p);
        free(q);
    } else if (strcmp(mode, "double_free_big") == 0) {
        void* p = malloc(1 << 20);
        free(p);
        free(p);
        two_mallocs(1 << 20);
    } else if (strcmp(mode, "double_free_heap") == 0) {
        void* p = malloc(100000); /* the private heap's tier */
        free(p);
        free(p);
        two_mallocs(100000);
    } else if (strcmp(mode, "double_free_aligned") == 0) {
        void* p = aligned_alloc(256, 200);
        free(p);
        free(p);
        two_mallocs(256);
    } else if (strcmp(mode, "static_buffer") == 0) {
        free(static_buffer + 16);
    } else if (strcmp(mode, "stack_buffer") == 0) {
        char local[64];
        sink = local;
        free(local + 16);
    } else if (strcmp(mode, "interior") == 0) {
        char* p = malloc(100);
        free(p + 8);
        two_mallocs(100);
    } else if (strcmp(mode, "interior_big") == 0) {
        char* p = malloc(1 << 20);
        free(p + 4096);
    } else if (strcmp(mode, "realloc_freed") == 0) {
        void* p = malloc(32);
        free(p);
        sink = realloc(p, 20);
    } else if (strcmp(mode, "realloc_interior") == 0) {
        char* p = malloc(64);
        sink = realloc(p + 16, 40);
    } else if (strcmp(mode, "overflow_into_free_neighbour") == 0) {
        /* 16 bytes past a 32-byte block, over a freed neighbour on its class's cache: its
         * link and its mark (pool/freed_mark.hpp, M4); malloc refuses to follow the link */
        char* a = malloc(32);
        char* b = malloc(32);
        free(b);
        memset(a, 0x41, 48);
        two_mallocs(32);
    } else if (strcmp(mode, "free_sized_too_large") == 0) {
        void* p = malloc(100);
        c23_free_sized()(p, 200); /* its class holds fewer than 200 bytes */
        two_mallocs(100);
    } else if (strcmp(mode, "free_sized_heap_wrong") == 0) {
        void* p = malloc(100000);
        c23_free_sized()(p, 99999); /* the header holds 100000 */
        two_mallocs(100000);
    } else if (strcmp(mode, "free_sized_double") == 0) {
        void* p = malloc(32);
        c23_free_sized()(p, 32);
        c23_free_sized()(p, 32);
        two_mallocs(32);
    } else if (strcmp(mode, "free_aligned_sized_misaligned") == 0) {
        /* a 48-byte block at an address that is no multiple of 4096 */
        char* p = malloc(48);
        char* q = malloc(48);
        char* odd = ((uintptr_t)p & 4095) != 0 ? p : q;
        sink = odd == p ? q : p;
        c23_free_aligned_sized()(odd, 4096, 48);
        two_mallocs(48);
    } else {
        fprintf(stderr, "bad_frees: unknown mode '%s'\n", mode);
        return 2;
    }
    printf("not stopped\n");
    return 0;
}
