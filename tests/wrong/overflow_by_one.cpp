// Misuse: write one byte past the requested size. The block (16 B class) has room,
// so only a pool that unpoisons exactly the requested bytes gets this caught.
// Flagged by: ASan, valgrind memcheck.
#include <sta/memory_pool.hpp>

int main() {
    auto* p = static_cast<volatile char*>(sta::memory_pool::alloc(13));
    p[13] = 1;
    sta::memory_pool::free(const_cast<char*>(p), 13);
    return 0;
}
