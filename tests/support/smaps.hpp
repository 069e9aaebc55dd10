// sta-pool tests: what /proc/self/smaps says of the mapping that holds an address (Linux).
#pragma once

#if defined(__linux__)
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace sta_test {

/// Does the mapping that holds p carry the advice of huge pages (its smaps VmFlags has
/// "hg")?
inline bool advised_huge(const void* p) {
    std::FILE* f = std::fopen("/proc/self/smaps", "r");
    if (f == nullptr)
        return false;
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    bool inside = false;
    bool huge = false;
    char line[512];
    while (std::fgets(line, sizeof line, f) != nullptr) {
        unsigned long long begin = 0;
        unsigned long long end = 0;
        if (std::sscanf(line, "%llx-%llx ", &begin, &end) == 2) // a mapping's first line
            inside = begin <= at && at < end;
        else if (inside && std::strncmp(line, "VmFlags:", 8) == 0) {
            huge = std::strstr(line, " hg") != nullptr;
            break;
        }
    }
    std::fclose(f);
    return huge;
}

/// The permissions ("rw-p", "---p", ...) of the mapping that holds p; "" when none does.
inline std::string permissions_at(const void* p) {
    std::FILE* f = std::fopen("/proc/self/maps", "r");
    if (f == nullptr)
        return "";
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    std::string found;
    char line[512];
    while (std::fgets(line, sizeof line, f) != nullptr) {
        unsigned long long begin = 0;
        unsigned long long end = 0;
        char perms[8] = {};
        if (std::sscanf(line, "%llx-%llx %7s", &begin, &end, perms) == 3 && begin <= at &&
            at < end) {
            found = perms;
            break;
        }
    }
    std::fclose(f);
    return found;
}

} // namespace sta_test
#endif
