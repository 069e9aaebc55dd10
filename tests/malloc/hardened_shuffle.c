/* libsta_malloc-hardened.so's shuffle (hardened_heap.hpp, HH4), run under LD_PRELOAD by
 * ctest malloc.hardened_shuffle.*: 4,000 blocks of 200 bytes allocated in a row (and as
 * many again by a thread that then ends, its held-back blocks going back to the heap)
 * must be distinct and whole; counted, how often a block lies below the one before it.
 *   hardened_shuffle many: exits 0 when more than an eighth do (STA_MALLOC_SHUFFLE=1:
 *     a random bit swaps each with the block held back, a quarter of the pairs fall)
 *   hardened_shuffle few:  exits 0 when fewer than 1 % do (the shuffle off: the heap's
 *     order, rising through fresh spans) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { blocks = 4000, bytes = 200 };

static int by_address(const void* a, const void* b) {
    const uintptr_t x = *(const uintptr_t*)a;
    const uintptr_t y = *(const uintptr_t*)b;
    return x < y ? -1 : x > y;
}

/* Allocates and fills `blocks` blocks; the number that lie below the one before, or -1
 * when two are the same block. */
static long falls(unsigned char** p) {
    long fell = 0;
    for (int i = 0; i < blocks; ++i) {
        p[i] = malloc(bytes);
        if (p[i] == NULL)
            return -1;
        memset(p[i], i & 0xff, bytes);
        if (i != 0 && p[i] < p[i - 1])
            ++fell;
    }
    uintptr_t sorted[blocks];
    for (int i = 0; i < blocks; ++i)
        sorted[i] = (uintptr_t)p[i];
    qsort(sorted, blocks, sizeof sorted[0], by_address);
    for (int i = 1; i < blocks; ++i)
        if (sorted[i] == sorted[i - 1] || sorted[i] - sorted[i - 1] < bytes)
            return -1;
    for (int i = 0; i < blocks; ++i)
        if (p[i][0] != (unsigned char)(i & 0xff) || p[i][bytes - 1] != (unsigned char)(i & 0xff))
            return -1;
    return fell;
}

static void* a_thread(void* out) {
    static unsigned char* p[blocks];
    *(long*)out = falls(p);
    return NULL; /* its blocks stay live; its held-back ones go back as it ends */
}

int main(int argc, char** argv) {
    if (argc != 2 || (strcmp(argv[1], "many") != 0 && strcmp(argv[1], "few") != 0))
        return 2;
    static unsigned char* p[blocks];
    const long fell = falls(p);
    long other = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, a_thread, &other) != 0 || pthread_join(t, NULL) != 0)
        return 2;
    if (fell < 0 || other < 0) {
        puts("FAIL: a block handed out twice, overlapping, or not kept");
        return 1;
    }
    for (int i = 0; i < blocks; ++i)
        free(p[i]);
    printf("%ld and %ld of %d blocks lie below the one before\n", fell, other, blocks);
    const int many = strcmp(argv[1], "many") == 0;
    if (many ? fell > blocks / 8 && other > blocks / 8
             : fell < blocks / 100 && other < blocks / 100) {
        puts("ok");
        return 0;
    }
    return 1;
}
