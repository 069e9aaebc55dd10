// Misuse: free a pointer the pool never handed out. Flagged by: the checked build.
#include <sta/memory_pool.hpp>

int main() {
    static long not_from_the_pool[4];
    void* keep = sta::memory_pool::alloc(16);
    sta::memory_pool::free(not_from_the_pool, sizeof not_from_the_pool);
    sta::memory_pool::free(keep, 16);
    return 0;
}
