/* libsta_malloc-hardened.so's big blocks (guarded_block.hpp, GB1-GB3), run under
 * LD_PRELOAD by ctest malloc.hardened_big_blocks: a big block freed leaves its mapping
 * kept, and the next big block of about its size takes it again with the last owner's
 * bytes, which calloc must clear; malloc_usable_size says the size asked; realloc keeps
 * the bytes across big blocks. Exits 0 when all hold, else names the first that does not. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char* what) {
    printf("FAIL: %s\n", what);
    return 1;
}

int main(void) {
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
    puts("ok");
    return 0;
}
