// A global in another translation unit that uses the pool in its constructor and
// destructor. Static initialisation order across translation units is unspecified,
// so this only works because the pool's state is constant-initialised.
#include "sta/containers.hpp"

#include <cstring>

namespace global_init {

struct uses_pool_at_startup {
    sta::vector<int> numbers;
    sta::string name;
    void* raw = nullptr;
    uses_pool_at_startup() : name("constructed before main, possibly before the pool's TU") {
        for (int i = 0; i < 1000; ++i)
            numbers.push_back(i);
        raw = sta::memory_pool::alloc(100);
        std::memset(raw, 0x42, 100);
    }
    ~uses_pool_at_startup() {
        // Runs after main returns; the pool must still be there.
        sta::memory_pool::free(raw, 100);
        numbers.clear();
        numbers.shrink_to_fit();
        sta::string after("allocated in a global destructor, after main returned");
        (void)after;
    }
};

uses_pool_at_startup the_global;

const sta::vector<int>& numbers() {
    return the_global.numbers;
}
const sta::string& name() {
    return the_global.name;
}
const void* raw() {
    return the_global.raw;
}

} // namespace global_init
