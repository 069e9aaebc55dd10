#!/usr/bin/env python3
"""Writes include/sta/detail/pool/quarter_slot_table.hpp: the quarter classes' slot of
every key / 8 (pool/size_class.hpp), spelled out. The pool computed it at compile time
before; a constant evaluation of 4096 stores cost every unit that includes the pool
0.05 s of g++'s time, a literal costs nothing. tests/size_class_test.cpp checks every
entry against the formula, so an edit that breaks it fails there.

    scripts/quarter_slot_table.py        (rewrites the header)
"""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "include", "sta", "detail", "pool", "quarter_slot_table.hpp")
MAX_CLASS_BYTES = 32768
PER_LINE = 16


def slot_of_key(key):
    """slot = 4 b - 20 + (key >> (b - 2)), b = bit_width(key | 32) - 1."""
    b = (key | 32).bit_length() - 1
    return 4 * b - 20 + (key >> (b - 2))


def main():
    entries = [slot_of_key(i * 8) for i in range(MAX_CLASS_BYTES // 8)]
    lines = []
    for start in range(0, len(entries), PER_LINE):
        row = ", ".join(f"{v:2d}" for v in entries[start:start + PER_LINE])
        lines.append(f"    {row}, // keys {start * 8}..{(start + PER_LINE) * 8 - 1}")
    text = f"""// sta-pool: the quarter classes' slot of every key / 8 (pool/size_class.hpp), written by
// scripts/quarter_slot_table.py: a literal costs a unit nothing to compile, where computing
// the table took each unit 0.05 s. tests/size_class_test.cpp checks every entry against
// the formula.
#pragma once

#include <array>
#include <cstdint>

namespace sta::detail {{

// clang-format off
inline constexpr std::array<std::uint8_t, {len(entries)}> quarter_slot_table = {{
{chr(10).join(lines)}
}};
// clang-format on

}} // namespace sta::detail
"""
    with open(OUT, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
