// sta-pool: what every invariant checker returns — the first few failures as text.
//
// The checkers (pool_checker.hpp, thread_heap_checker.hpp, arena_checker.hpp) record
// each broken invariant with fail(); finish() gives the text, empty when all hold.
#pragma once

#include <algorithm>
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
/// (e.g. "I5", "S6") and name the first bytes where the rule breaks.
inline void check_tiling(checker_report& report, const char* rule, std::vector<checked_range> areas,
                         std::vector<checked_range> pieces) {
    const std::string tag = std::string(rule) + ": ";
    const auto at = [](std::uintptr_t a) {
        return checker_report::hex(reinterpret_cast<const void*>(a));
    };
    auto by_begin = [](const checked_range& x, const checked_range& y) {
        return x.begin < y.begin;
    };
    std::sort(areas.begin(), areas.end(), by_begin);
    std::sort(pieces.begin(), pieces.end(), by_begin);
    auto outside = [&](const checked_range& piece) {
        report.fail(tag + "a " + piece.what + " at " + at(piece.begin) +
                    " lies outside every area");
    };
    std::size_t i = 0;
    for (const checked_range& area : areas) {
        for (; i < pieces.size() && pieces[i].begin < area.begin; ++i)
            outside(pieces[i]);
        std::uintptr_t expected = area.begin;
        for (; i < pieces.size() && pieces[i].begin < area.end; ++i) {
            if (pieces[i].begin != expected)
                report.fail(
                    tag +
                    (pieces[i].begin < expected
                         ? std::string("overlap")
                         : "a gap of " + std::to_string(pieces[i].begin - expected) + " bytes") +
                    " before a " + pieces[i].what + " at " + at(pieces[i].begin));
            expected = std::max(expected, pieces[i].end);
        }
        if (expected != area.end)
            report.fail(
                tag + area.what + " " + at(area.begin) + " is not covered to its end (" +
                std::to_string(expected < area.end ? area.end - expected : expected - area.end) +
                (expected < area.end ? " bytes unaccounted for)" : " bytes overrun)"));
    }
    for (; i < pieces.size(); ++i)
        outside(pieces[i]);
}

} // namespace sta::detail
