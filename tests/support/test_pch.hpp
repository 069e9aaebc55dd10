// sta-pool tests: the precompiled header of the GoogleTest programs (tests/CMakeLists.txt,
// sta_add_test): GoogleTest, the std headers most tests include and the pool's own,
// parsed once per build instead of once per test program. A test still includes what it
// uses; this header only makes the parse cheaper (the packaging, examples and misuse
// programs compile without it and keep the headers self-contained).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sta/memory_pool.hpp"
