/* glibc's introspection answered by libsta_malloc.so for the whole process (issue 42), run
 * under LD_PRELOAD by introspection.py, which checks what it prints: two threads each hold
 * 40 MB in blocks of four tiers (64 B and 1000 B pooled, 100,000 B in the private heap,
 * 1 MiB big blocks; with the arrays that hold them, 42.5 MB) and wait; the main thread then writes,
 * one after the other with no allocation between, the JSON statistics (sta_malloc_stats_json, into
 * JSON_FILE) and mallinfo2's figures (stdout), then malloc_info's XML (into XML_FILE) and
 * malloc_stats (stderr). Built with -fno-builtin: the blocks are only written, never read.
 *
 *   introspection JSON_FILE XML_FILE */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PER_THREAD 40000000u /* bytes of blocks asked by each thread */
#define TIERS 4

static pthread_barrier_t held, done;
static const size_t sizes[TIERS] = {64, 1000, 100000, 1u << 20};
static size_t asked[2]; /* each thread's bytes, its arrays of pointers included */

static void* hold(void* which) {
    size_t* const total = which;
    void** blocks[TIERS];
    size_t counts[TIERS];
    for (int t = 0; t < TIERS; ++t) {
        counts[t] = PER_THREAD / TIERS / sizes[t];
        blocks[t] = malloc(counts[t] * sizeof(void*));
        *total += counts[t] * (sizes[t] + sizeof(void*));
        for (size_t i = 0; i < counts[t]; ++i) {
            blocks[t][i] = malloc(sizes[t]);
            memset(blocks[t][i], 0x5a, sizes[t]);
        }
    }
    pthread_barrier_wait(&held);
    pthread_barrier_wait(&done);
    for (int t = 0; t < TIERS; ++t) {
        for (size_t i = 0; i < counts[t]; ++i)
            free(blocks[t][i]);
        free(blocks[t]);
    }
    return NULL;
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: introspection JSON_FILE XML_FILE\n");
        return 2;
    }
    size_t (*stats_json)(char*, size_t);
    void* symbol = dlsym(RTLD_DEFAULT, "sta_malloc_stats_json");
    if (symbol == NULL) {
        fprintf(stderr, "introspection: sta_malloc_stats_json is not exported\n");
        return 1;
    }
    memcpy(&stats_json, &symbol, sizeof stats_json);
    static char json[65536];
    FILE* json_file = fopen(argv[1], "w");
    FILE* xml_file = fopen(argv[2], "w");
    if (json_file == NULL || xml_file == NULL)
        return 1;
    pthread_barrier_init(&held, NULL, 3);
    pthread_barrier_init(&done, NULL, 3);
    pthread_t a, b;
    pthread_create(&a, NULL, hold, &asked[0]);
    pthread_create(&b, NULL, hold, &asked[1]);
    pthread_barrier_wait(&held);

    const size_t length = stats_json(json, sizeof json);
    const struct mallinfo2 m = mallinfo2();
    printf("asked %zu\nlength %zu\narena %zu\nordblks %zu\nuordblks %zu\nfordblks %zu\n"
           "keepcost %zu\n",
           asked[0] + asked[1], length, m.arena, m.ordblks, m.uordblks, m.fordblks, m.keepcost);
    fputs(json, json_file);
    fclose(json_file);
    if (malloc_info(0, xml_file) != 0)
        return 1;
    fclose(xml_file);
    malloc_stats();

    pthread_barrier_wait(&done);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
