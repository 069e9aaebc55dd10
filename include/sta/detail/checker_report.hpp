// sta-pool: what every invariant checker returns — the first few failures as text.
//
// The checkers (pool_checker.hpp, thread_heap_checker.hpp, arena_checker.hpp) record
// each broken invariant with fail(); finish() gives the text, empty when all hold.
#pragma once

#include <cstdio>
#include <string>

namespace sta::detail {

class checker_report {
  public:
    static constexpr int shown = 8;

    void fail(const std::string& what) {
        if (++failures_ <= shown)
            text_ += what + "\n";
    }

    /// The report: empty when every invariant held.
    std::string finish() const {
        if (failures_ <= shown)
            return text_;
        return text_ + "... and " + std::to_string(failures_ - shown) + " more\n";
    }

    static std::string hex(const void* p) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%p", p);
        return buf;
    }

  private:
    std::string text_;
    int failures_ = 0;
};

} // namespace sta::detail
