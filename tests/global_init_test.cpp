// The pool from global constructors and destructors in any translation unit.
#include "sta/containers.hpp"

#include <gtest/gtest.h>

namespace global_init {
const sta::vector<int>& numbers();
const sta::string& name();
const void* raw();
} // namespace global_init

namespace {

// Guards constant initialisation: a global in another TU built its containers on the
// pool before main, and they are intact now.
TEST(GlobalInit, GlobalInAnotherTranslationUnitAllocatedBeforeMain) {
    const auto& numbers = global_init::numbers();
    ASSERT_EQ(numbers.size(), 1000u);
    for (int i = 0; i < 1000; ++i)
        ASSERT_EQ(numbers[static_cast<std::size_t>(i)], i);
    EXPECT_EQ(global_init::name(), "constructed before main, possibly before the pool's TU");
    const auto* raw = static_cast<const unsigned char*>(global_init::raw());
    ASSERT_NE(raw, nullptr);
    for (int i = 0; i < 100; ++i)
        ASSERT_EQ(raw[i], 0x42);
    EXPECT_GE(sta::memory_pool::stats().mappings, 1u);
}

} // namespace
