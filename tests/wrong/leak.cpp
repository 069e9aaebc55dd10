// Misuse: lose the last pointer to pool blocks. Flagged by: valgrind memcheck
// ("definitely lost"), which sees pool blocks through the MALLOCLIKE hooks.
// Ten blocks are lost, not one: a stale copy of the last pointer in a register at
// exit would make that one "still reachable".
#include <sta/memory_pool.hpp>

#include <cstring>

void* volatile sink;

__attribute__((noinline)) void lose_ten_blocks() {
    for (int i = 0; i < 10; ++i) {
        sink = sta::memory_pool::alloc(100);
        std::memset(sink, 1, 100);
    }
    sink = nullptr;
}

int main() {
    lose_ten_blocks();
    return 0;
}
