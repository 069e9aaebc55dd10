// Misuse: read a pool block after freeing it. Flagged by: ASan, valgrind memcheck.
#include <sta/memory_pool.hpp>

int main() {
    auto* p = static_cast<volatile char*>(sta::memory_pool::alloc(32));
    p[3] = 7;
    sta::memory_pool::free(const_cast<char*>(p), 32);
    return p[3]; // the block is free: an ordinary access to the tools, unless the pool tells them
}
