// Test support: the classes of a class set (include/sta/detail/pool/size_class.hpp) as a
// list, for tests that walk every class.
#pragma once

#include "sta/detail/pool/size_class.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sta_test {

/// A class of a set: its slot and block bytes.
struct class_entry {
    std::uint32_t slot;
    std::size_t bytes;
};

/// Every class of a set, smallest first.
template <class Classes>
std::vector<class_entry> classes_of() {
    std::vector<class_entry> out;
    for (std::uint32_t ordinal = 0; ordinal < Classes::count; ++ordinal) {
        const std::uint32_t slot = Classes::slot_of_ordinal(ordinal);
        out.push_back({slot, Classes::bytes_of_slot(slot)});
    }
    return out;
}

} // namespace sta_test
