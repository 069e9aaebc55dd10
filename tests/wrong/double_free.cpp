// Misuse: free the same block twice. Flagged by: the checked build.
#include <sta/memory_pool.hpp>

int main() {
    void* p = sta::memory_pool::alloc(48);
    sta::memory_pool::free(p, 48);
    sta::memory_pool::free(p, 48);
    return 0;
}
