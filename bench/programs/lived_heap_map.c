/* A heap that has lived, then its picture (issue 42; the report's "Heap map"): 40 waves
 * of 20,000 blocks of mixed sizes (16 B to 2 KiB, most of them small), each wave keeping
 * one block in seven and freeing the rest in another order than it allocated them; then a
 * burst of 200,000 small blocks built and dropped. With the survivors still live it writes
 * one JSON line on stdout: the resident memory now and at its peak (KiB), what glibc's
 * mallinfo2 says, and — under libsta_malloc.so — the statistics with the heap's spans
 * (sta_malloc_stats_json_spans) into SPANS_FILE, which scripts/heap_map.py draws.
 *
 *   LD_PRELOAD=<allocator>.so lived_heap_map ALLOCATOR_NAME SPANS_FILE
 * Built with -fno-builtin: the blocks are only written. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

enum { WAVES = 40, PER_WAVE = 20000, KEEP_EVERY = 7, BURST = 200000 };

static size_t size_of(unsigned i, unsigned wave) {
    const unsigned r = i * 2654435761u + wave * 40503u;
    return r % 8 < 6 ? 16 + r % 112 : 128 + r % 1921; /* 3/4 below 128 B */
}

static long resident_kib(void) {
    long pages = 0, resident = 0;
    FILE* f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: lived_heap_map ALLOCATOR_NAME SPANS_FILE\n");
        return 2;
    }
    static void* kept[WAVES * (PER_WAVE / KEEP_EVERY + 1)];
    static void* wave[PER_WAVE > BURST ? PER_WAVE : BURST];
    size_t survivors = 0, kept_bytes = 0;
    for (unsigned w = 0; w < WAVES; ++w) {
        for (unsigned i = 0; i < PER_WAVE; ++i) {
            const size_t n = size_of(i, w);
            wave[i] = malloc(n);
            memset(wave[i], (int)w, n);
        }
        for (unsigned i = 0; i < PER_WAVE; ++i) { /* an order of its own: odd first */
            const unsigned j = i < PER_WAVE / 2 ? 2 * i + 1 : 2 * (i - PER_WAVE / 2);
            if (j % KEEP_EVERY == 0) {
                kept[survivors++] = wave[j];
                kept_bytes += size_of(j, w);
            } else {
                free(wave[j]);
            }
        }
    }
    for (unsigned i = 0; i < BURST; ++i) {
        wave[i] = malloc(24 + i % 40);
        memset(wave[i], 1, 24 + i % 40);
    }
    for (unsigned i = 0; i < BURST; ++i)
        free(wave[i]);

    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    const struct mallinfo2 m = mallinfo2();
    size_t (*spans_json)(char*, size_t) = NULL;
    void* symbol = dlsym(RTLD_DEFAULT, "sta_malloc_stats_json_spans");
    memcpy(&spans_json, &symbol, sizeof spans_json);
    if (spans_json != NULL) {
        const size_t length = spans_json(NULL, 0);
        char* text = malloc(length + 4096); /* the walk may find a little more */
        const size_t written = spans_json(text, length + 4096);
        FILE* f = fopen(argv[2], "w");
        if (text == NULL || written >= length + 4096 || f == NULL) {
            fprintf(stderr, "lived_heap_map: the spans' JSON could not be written\n");
            return 1;
        }
        fputs(text, f);
        fclose(f);
        free(text);
    }
    printf("{\"kind\": \"heap_map\", \"allocator\": \"%s\", \"survivors\": %zu, "
           "\"survivor_bytes\": %zu, \"rss_kib\": %ld, \"peak_kib\": %ld, "
           "\"mallinfo2\": {\"arena\": %zu, \"uordblks\": %zu, \"fordblks\": %zu, "
           "\"hblkhd\": %zu}, \"spans_file\": %s}\n",
           argv[1], survivors, kept_bytes, resident_kib(), usage.ru_maxrss, m.arena, m.uordblks,
           m.fordblks, m.hblkhd, spans_json != NULL ? "true" : "false");
    for (size_t i = 0; i < survivors; ++i)
        free(kept[i]);
    return 0;
}
