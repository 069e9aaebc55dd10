// Misuse: free the same block twice. Flagged by: the checked build. 64 B is a class of
// its own in both class sets (powers of two and quarter classes), so the report names it.
#include <sta/memory_pool.hpp>

int main() {
    void* p = sta::memory_pool::alloc(64);
    sta::memory_pool::free(p, 64);
    sta::memory_pool::free(p, 64);
    return 0;
}
