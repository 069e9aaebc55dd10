// sta::pool_resource: std::pmr containers on the pool.
#include "sta/pmr.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory_resource>
#include <string>
#include <vector>

namespace {

std::size_t in_use() {
    return sta::memory_pool::stats().bytes_in_use;
}

// Guards pmr containers drawing from the pool and giving everything back.
TEST(PoolResource, PmrContainersUseThePool) {
    sta::pool_resource resource;
    const std::size_t before = in_use();
    {
        std::pmr::vector<std::pmr::string> names(&resource);
        std::pmr::map<int, std::pmr::string> by_id(&resource);
        for (int i = 0; i < 2000; ++i) {
            names.emplace_back("element name number " + std::to_string(i));
            by_id.emplace(i, names.back());
        }
        EXPECT_EQ(by_id.at(1234), "element name number 1234");
        EXPECT_GT(in_use(), before + 2000 * 32);
    }
    EXPECT_EQ(in_use(), before);
}

// Guards alignment requests: up to 16 from the pool (rounded up), beyond from aligned new.
TEST(PoolResource, HonoursEveryAlignment) {
    sta::pool_resource r;
    for (std::size_t alignment : {1u, 2u, 4u, 8u, 16u, 32u, 64u, 4096u}) {
        for (std::size_t bytes : {0u, 1u, 8u, 24u, 100u, 40000u}) {
            void* p = r.allocate(bytes, alignment);
            EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % alignment, 0u)
                << bytes << " @ " << alignment;
            r.deallocate(p, bytes, alignment);
        }
    }
}

// Guards is_equal: every pool_resource over the same pool can free the others' memory.
TEST(PoolResource, ResourcesOverOnePoolCompareEqual) {
    sta::pool_resource a, b;
    EXPECT_TRUE(a.is_equal(b));
    EXPECT_TRUE(a == *sta::pool_resource_instance());
    EXPECT_FALSE(a.is_equal(*std::pmr::new_delete_resource()));
    void* p = a.allocate(48, 16);
    b.deallocate(p, 48, 16);
}

} // namespace
