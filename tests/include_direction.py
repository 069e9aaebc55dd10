#!/usr/bin/env python3
"""The include direction of include/sta/detail (its README.md states the rule).

A header may include headers of its own layer and of the layers below it, never one
above and never a public header; every folder under detail/ is one of the README's
table. Exits 1 naming each include that breaks the rule, 0 with a summary otherwise.

    tests/include_direction.py [SOURCE_DIR]
"""
import pathlib
import re
import sys

ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*`([^`]+)`")
INCLUDE = re.compile(r'^\s*#\s*include\s*"sta/([^"]+)"', re.M)


def levels(readme):
    """folder (relative to detail/, '.' for the root) -> level, from the README's table."""
    out = {}
    for line in readme.read_text().splitlines():
        m = ROW.match(line)
        if m:
            out[m.group(2).rstrip("/")] = int(m.group(1))
    if not out:
        sys.exit(f"{readme}: no layer table found")
    return out


def problems(source):
    detail = source / "include" / "sta" / "detail"
    layer = levels(detail / "README.md")
    found = []
    for folder in sorted(p for p in detail.rglob("*") if p.is_dir()):
        name = folder.relative_to(detail).as_posix()
        if name not in layer:
            found.append(f"detail/{name}/ is no layer of detail/README.md's table")
    count = 0
    for header in sorted(detail.rglob("*.hpp")):
        own = header.parent.relative_to(detail).as_posix()
        for target in INCLUDE.findall(header.read_text()):
            count += 1
            where = f"{header.relative_to(source)} includes sta/{target}"
            if not target.startswith("detail/"):
                found.append(f"{where}: a public header, above every layer")
                continue
            folder = pathlib.PurePosixPath(target[len("detail/"):]).parent.as_posix()
            if folder not in layer:
                found.append(f"{where}: no such layer")
            elif own in layer and layer[folder] > layer[own]:
                found.append(f"{where}: layer {layer[folder]} ({folder}) is above "
                             f"layer {layer[own]} ({own})")
    return found, count


def main(argv):
    source = pathlib.Path(argv[1] if len(argv) > 1 else pathlib.Path(__file__).parents[1])
    found, count = problems(source.resolve())
    for line in found:
        print(line)
    if found:
        print(f"include direction: {len(found)} wrong")
        return 1
    print(f"include direction ok: {count} includes of detail/ headers, none upward")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
