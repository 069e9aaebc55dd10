#!/usr/bin/env python3
"""Draw libsta_malloc's heap as an SVG picture: one row a segment, one cell a span, coloured
by class and shaded by how full it is (scripts/report/heap_map_svg.py says how).

    scripts/heap_map.py STATS.json [-o MAP.svg] [--title TITLE]

STATS.json: the statistics with the heap's spans — sta_malloc_stats_json_spans() of
libsta_malloc.so, or STA_MALLOC_STATS=json-spans STA_MALLOC_STATS_FILE=STATS.json at exit
(docs/malloc.md, "Statistics"). Python 3's standard library only.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report.heap_map_svg import HeapMapError, render  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stats")
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--title", default="libsta_malloc heap map")
    args = ap.parse_args(argv)
    try:
        with open(args.stats, encoding="utf-8") as f:
            svg = render(json.load(f), args.title)
    except (OSError, ValueError, HeapMapError) as e:
        print(f"heap_map.py: {args.stats}: {e}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(svg)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(svg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
