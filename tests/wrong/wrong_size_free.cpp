// Misuse: a sized free with a size that is not the allocated one (even within the
// same class). Flagged by: the checked build.
#include <sta/memory_pool.hpp>

int main() {
    void* p = sta::memory_pool::alloc(48);
    sta::memory_pool::free(p, 64);
    return 0;
}
