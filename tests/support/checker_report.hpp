// sta-pool: what every invariant checker returns — the first few failures as text.
//
// The checkers (pool_checker.hpp, thread_heap_checker.hpp, arena_checker.hpp) record
// each broken invariant with fail(); finish() gives the text, empty when all hold.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

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

/// An address range a checker accounts for: an area to tile (a page, a span) or a piece
/// that tiles it (a live block, a free block, a bump range).
struct checked_range {
    std::uintptr_t begin, end;
    const char* what;
};

/// The tiling rule every pool checker enforces: the pieces cover each area exactly, with
/// no gap, no overlap, and no piece outside every area. Failures are tagged `rule`
/// (e.g. "I5", "S6") and name the first bytes where the rule breaks. (checkers.cpp)
void check_tiling(checker_report& report, const char* rule, std::vector<checked_range> areas,
                  std::vector<checked_range> pieces);

} // namespace sta::detail
