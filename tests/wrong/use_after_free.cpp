// Misuse: read a pool block after freeing it, with the pool in use again since.
// Flagged by: ASan, valgrind memcheck.
#include <sta/memory_pool.hpp>

int main() {
    auto* p = static_cast<volatile char*>(sta::memory_pool::alloc(32));
    p[3] = 7;
    sta::memory_pool::free(const_cast<char*>(p), 32);
    // Another class: the freed block stays on its free list, still free.
    void* other = sta::memory_pool::alloc(64);
    const int stale = p[3]; // an ordinary access to the tools, unless the pool tells them
    sta::memory_pool::free(other, 64);
    return stale;
}
