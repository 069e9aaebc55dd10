// Misuse: lose the last pointer to a pool block. Flagged by: valgrind memcheck
// ("definitely lost"), which sees pool blocks through the MALLOCLIKE hooks.
#include <sta/memory_pool.hpp>

#include <cstring>

void* volatile sink;

int main() {
    sink = sta::memory_pool::alloc(100);
    std::memset(sink, 1, 100);
    sink = nullptr;
    return 0;
}
