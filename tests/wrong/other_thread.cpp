// Misuse: use a pool from a thread that does not own it. Flagged by: the checked build.
#include <sta/memory_pool.hpp>

#include <thread>

int main() {
    void* p = sta::memory_pool::alloc(64); // main owns the pool now
    std::thread([p] { sta::memory_pool::free(p, 64); }).join();
    return 0;
}
