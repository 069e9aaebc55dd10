/* libsta_malloc-hardened.so's quarantine (hardened_heap.hpp, HH2-HH3), run under
 * LD_PRELOAD by ctest malloc.hardened_quarantine.*:
 *   hardened_quarantine delayed: a freed block is not handed out again while fewer than
 *     the ring's 256 frees came after it (exits 0 and prints "ok", else names the malloc
 *     that took it back);
 *   hardened_quarantine write_front | write_end | write_middle: a 1 KiB block is written
 *     after its free (in its first bytes, in the last of its malloc_usable_size bytes,
 *     in its middle), then 300
 *     more frees push it out of the ring: the hardened library must refuse it there
 *     (write_middle only with STA_MALLOC_QUARANTINE_CHECK_WHOLE=1: by default a large
 *     block's zeros are checked at its ends, and the program ends "not caught"). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ring = 256, block = 1024 };

/* Frees n blocks of `bytes` each, allocated here: they enter the ring after whatever was
 * freed before. */
static void frees(int n, size_t bytes) {
    void* kept[400];
    for (int i = 0; i < n; ++i)
        kept[i] = malloc(bytes);
    for (int i = 0; i < n; ++i)
        free(kept[i]);
}

int main(int argc, char** argv) {
    if (argc != 2)
        return 2;
    if (strcmp(argv[1], "delayed") == 0) {
        void* const p = malloc(48);
        free(p);
        void* others[ring - 16];
        for (int i = 0; i < ring - 16; ++i)
            others[i] = malloc(48);
        for (int i = 0; i < ring - 16; ++i)
            free(others[i]); /* p stays in the ring: 240 frees came after it */
        for (int i = 0; i < 4 * ring; ++i) {
            void* const q = malloc(48);
            if (q == p) {
                printf("FAIL: malloc %d handed out again a block only %d frees followed\n", i,
                       ring - 16);
                return 1;
            }
            others[i % (ring - 16)] = q; /* kept live: no frees in between */
        }
        puts("ok");
        return 0;
    }
    unsigned char* const p = malloc(block);
    const size_t usable = malloc_usable_size(p);
    size_t at;
    if (strcmp(argv[1], "write_front") == 0)
        at = 8;
    else if (strcmp(argv[1], "write_end") == 0)
        at = usable - 1;
    else if (strcmp(argv[1], "write_middle") == 0)
        at = usable / 2;
    else
        return 2;
    memset(p, 1, usable);
    free(p);
    ((volatile unsigned char*)p)[at] = 0x41; /* a write after free */
    frees(300, block / 4);                   /* p leaves the ring: checked */
    frees(300, block / 4);
    puts("not caught");
    return 0;
}
