// A user's program: it only includes the public headers and links sta::pool.
#include <sta/containers.hpp>
#include <sta/pmr.hpp>

#include <cstdio>

int main() {
    sta::vector<sta::string> names;
    for (int i = 0; i < 100; ++i)
        names.emplace_back("consumer");
    void* p = sta::memory_pool::alloc(24);
    sta::memory_pool::free(p, 24);
    const bool ok = names.size() == 100 && p != nullptr && sta::memory_pool::stats().mappings == 1;
    std::puts(ok ? "consumer ok" : "consumer FAILED");
    return ok ? 0 : 1;
}
