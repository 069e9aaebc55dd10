// Misuse: branch on pool memory that was never written. Flagged by: valgrind memcheck.
#include <sta/memory_pool.hpp>

#include <cstdio>

int main() {
    auto* p = static_cast<char*>(sta::memory_pool::alloc(16));
    if (p[5] == 'x')
        std::puts("x");
    sta::memory_pool::free(p, 16);
    return 0;
}
