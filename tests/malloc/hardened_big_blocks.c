/* libsta_malloc-hardened.so's big blocks (guarded_block.hpp, GB1-GB3), run under
 * LD_PRELOAD by ctest malloc.hardened_big_blocks: a big block freed leaves its mapping
 * kept, and the next big block of about its size takes it again with the last owner's
 * bytes, which calloc must clear; malloc_usable_size says the size asked; realloc keeps
 * the bytes across big blocks, and keeps them while it grows a block by 1.5x from 16 B to
 * 40 MiB (in place, or its pages moved); malloc_trim gives the kept mappings back. Exits 0
 * when all hold, else names the first that does not.
 *   hardened_big_blocks overflow_after_growth: a block grown by realloc (its end short of
 *   its guard page) is written one byte past its end, then freed: the hardened library must
 *   refuse the free (ctest malloc.hardened_big_blocks.overflow_after_growth). */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int fail(const char* what) {
    printf("FAIL: %s\n", what);
    return 1;
}

/* A block grown by realloc from 16 B to `limit` by 1.5x, each new part filled with its
 * own byte; after each step the first and last byte of every part are checked. NULL when
 * one changed (or realloc failed). */
static unsigned char* grown(size_t limit) {
    size_t ends[64];
    int parts = 0;
    size_t n = 16;
    unsigned char* p = malloc(n);
    if (p == NULL)
        return NULL;
    memset(p, 1, n);
    ends[parts++] = n;
    while (n < limit) {
        const size_t m = n + n / 2 + 8;
        unsigned char* q = realloc(p, m);
        if (q == NULL)
            return NULL;
        size_t from = 0;
        for (int k = 0; k < parts; ++k) {
            if (q[from] != (unsigned char)(k + 1) || q[ends[k] - 1] != (unsigned char)(k + 1))
                return NULL;
            from = ends[k];
        }
        memset(q + n, parts + 1, m - n);
        ends[parts++] = m;
        p = q;
        n = m;
    }
    return p;
}

int main(int argc, char** argv) {
    if (argc == 2 && strcmp(argv[1], "overflow_after_growth") == 0) {
        unsigned char* p = grown((size_t)2 << 20);
        if (p == NULL)
            return fail("realloc keeps a growing block's bytes");
        /* The byte changed, whatever it held: a byte of the keyed tail written with the
         * value it had is no overflow a canary can see (a fixed 0x41 matched it in about
         * one run of 256). */
        volatile unsigned char* const past = (volatile unsigned char*)p + malloc_usable_size(p);
        *past = (unsigned char)~*past;
        free(p); /* must be refused */
        puts("not refused");
        return 1;
    }
    for (int round = 0; round < 3; ++round) { /* the second and third: kept mappings */
        unsigned char* g = grown((size_t)40 << 20);
        if (g == NULL)
            return fail("realloc keeps a growing block's bytes");
        free(g);
    }
    const size_t big = (size_t)3 << 20; /* above 512 KiB: between guard pages */
    unsigned char* p = malloc(big);
    if (p == NULL)
        return fail("malloc of a big block");
    if (malloc_usable_size(p) != big)
        return fail("malloc_usable_size of a big block is the size asked");
    memset(p, 0xAA, big);
    free(p);
    unsigned char* q = calloc(1, big - 4096); /* within a quarter: the kept mapping */
    if (q == NULL)
        return fail("calloc of a big block");
    for (size_t i = 0; i < big - 4096; ++i)
        if (q[i] != 0)
            return fail("calloc of a reused big mapping returns zeros");
    memset(q, 0x5B, big - 4096);
    unsigned char* r = realloc(q, big * 2);
    if (r == NULL)
        return fail("realloc of a big block");
    for (size_t i = 0; i < big - 4096; ++i)
        if (r[i] != 0x5B)
            return fail("realloc keeps a big block's bytes");
    free(r);
    /* malloc_trim gives the kept mappings back: r's pages are no longer mapped. */
    unsigned char resident = 0;
    void* const r_page = (void*)((uintptr_t)r & ~(uintptr_t)4095);
    if (mincore(r_page, 4096, &resident) != 0)
        return fail("a freed big block's mapping is kept until malloc_trim");
    if (malloc_trim(0) != 1)
        return fail("malloc_trim says it gave memory back");
    if (mincore(r_page, 4096, &resident) == 0 || errno != ENOMEM)
        return fail("malloc_trim gives the kept big mappings back");
    puts("ok");
    return 0;
}
