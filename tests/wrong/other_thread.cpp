// Misuse: use a seed-mode pool (threads::one_owner) from a thread that does not own it.
// Flagged by: the checked build. (sta::memory_pool itself is per-thread: any thread may
// call it.)
#include <sta/memory_pool.hpp>

#include <thread>

using seed_pool = sta::basic_memory_pool<sta::dispatch::default_policy, void,
                                         sta::layout::default_layout, sta::threads::one_owner>;

int main() {
    void* p = seed_pool::alloc(64); // main owns the pool now
    std::thread([p] { seed_pool::free(p, 64); }).join();
    return 0;
}
