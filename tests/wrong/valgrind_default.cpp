// Not a misuse: the STA_POOL_VALGRIND default of detail/config.hpp, checked at compile
// time. Built once per case in tests/wrong/CMakeLists.txt with the value that case must
// give in STA_EXPECTED_VALGRIND; a wrong default fails the build.
#include <sta/memory_pool.hpp>

static_assert(STA_POOL_VALGRIND == STA_EXPECTED_VALGRIND,
              "STA_POOL_VALGRIND does not have the value detail/config.hpp promises");

void* valgrind_default_probe() {
    return sta::memory_pool::alloc(16);
}
