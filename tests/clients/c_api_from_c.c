/* The C API used from C (C11): declarations compile as C, the functions link with C
 * linkage, and the contract holds. Returns 0, or the line of the first failed check. */
#include "sta/pool.h"

#include <stdint.h>
#include <string.h>

#define CHECK(condition)                                                                           \
    do {                                                                                           \
        if (!(condition))                                                                          \
            return __LINE__;                                                                       \
    } while (0)

int sta_c_api_from_c(void);

int sta_c_api_from_c(void) {
    char* text;
    char* grown;
    size_t i;
    CHECK(sta_malloc(0) == NULL);
    CHECK(sta_malloc(SIZE_MAX) == NULL);
    sta_free(NULL);
    text = (char*)sta_malloc(12);
    CHECK(text != NULL);
    CHECK(((uintptr_t)text % STA_POOL_C_HEADER_BYTES) == 0);
    strcpy(text, "from C code");
    CHECK(sta_usable_size(text) >= 12); /* 12 with a header, the class on spans */
    grown = (char*)sta_realloc(text, 5000);
    CHECK(grown != NULL);
    CHECK(strcmp(grown, "from C code") == 0);
    for (i = 12; i < 5000; ++i)
        grown[i] = (char)i;
    text = (char*)sta_realloc(grown, 4);
    CHECK(text != NULL); /* a shrink in the pool never fails */
    CHECK(memcmp(text, "from", 4) == 0);
    CHECK(sta_good_size(1) >= 1 && sta_good_size(1) <= 16);
    CHECK(sta_good_size(1) == sta_good_size(sta_good_size(1)));
    CHECK(sta_realloc(text, 0) == NULL);
    return 0;
}
