"""A heap map: libsta_malloc's statistics with the heap's spans (sta_malloc_stats_json_spans,
STA_MALLOC_STATS=json-spans; sta/stats_json.hpp has the shape) drawn as an SVG picture.
One row a segment (2 MiB), grouped by pool; one cell a span (64 KiB). A span serving a
class is coloured by its class (the hue runs from 16 B, red, to 32 KiB, violet) and
shaded by how full it is (pale: few blocks in use, deep: full); a clean span (free, its
pages kept for the purge delay) is grey, a purged one (its pages given back) white with a
grey outline, one read while its role changed black. Python 3's standard library only:
scripts/heap_map.py is the command, the report's "Heap map" section the other user."""
import math
from xml.sax.saxutils import escape

CELL, GAP, LABEL, TOP = 14, 2, 190, 46
CLEAN, PURGED, CHANGING = "#c8c8c8", "#ffffff", "#000000"


class HeapMapError(Exception):
    pass


def class_hue(block_bytes):
    """16 B -> 0 (red) ... 32 KiB -> 280 (violet), by the log of the size."""
    low, high = math.log2(16), math.log2(32768)
    at = min(max(math.log2(max(block_bytes, 1)), low), high)
    return round(280 * (at - low) / (high - low))


def span_fill(span):
    """The fill colour of one span element of the JSON."""
    kind = span[0] if span else "?"
    if kind == "c":
        return CLEAN
    if kind == "p":
        return PURGED
    if kind != "u" or len(span) != 4:
        return CHANGING
    _, block_bytes, blocks, free = span
    full = 0.0 if blocks <= 0 else min(max((blocks - free) / blocks, 0.0), 1.0)
    lightness = round(88 - 55 * full)  # pale when empty, deep when full
    return f"hsl({class_hue(block_bytes)},70%,{lightness}%)"


def segments_of(stats):
    """The JSON's segments, checked: [{"pool", "parked", "base", "huge", "spans"[32]}]."""
    heap = stats.get("heap") if isinstance(stats, dict) else None
    if not isinstance(heap, list):
        raise HeapMapError("no \"heap\" member: write the statistics with the heap's spans "
                           "(sta_malloc_stats_json_spans, or STA_MALLOC_STATS=json-spans)")
    for n, seg in enumerate(heap):
        spans = seg.get("spans") if isinstance(seg, dict) else None
        if not isinstance(spans, list) or len(spans) != 32 or "pool" not in seg:
            raise HeapMapError(f"segment {n}: a pool and 32 spans expected, got {seg!r:.120}")
    return heap


def render(stats, title="libsta_malloc heap map"):
    """The SVG text of the map of `stats` (a parsed JSON object)."""
    heap = segments_of(stats)
    rows = len(heap)
    width = LABEL + 32 * (CELL + GAP) + 20
    out = []
    b = stats.get("bytes", {})
    mib = 1 << 20
    out.append(f'<text x="8" y="18" font-size="14">{escape(title)}</text>')
    out.append(f'<text x="8" y="36">{len(heap)} segments of 2 MiB in '
               f'{stats.get("pools", {}).get("made", "?")} pools; '
               f'{b.get("in_use", 0) / mib:.1f} MiB in use, '
               f'{b.get("free_in_spans", 0) / mib:.1f} MiB free in spans, '
               f'{b.get("clean", 0) / mib:.1f} MiB clean, '
               f'{b.get("held", 0) / mib:.1f} MiB held</text>')
    for row, seg in enumerate(heap):
        y = TOP + row * (CELL + GAP)
        label = f'pool {seg["pool"]}{" parked" if seg.get("parked") else ""} ' \
                f'{seg.get("base", "")}{" huge" if seg.get("huge") else ""}'
        out.append(f'<text x="8" y="{y + CELL - 3}">{escape(label)}</text>')
        for k, span in enumerate(seg["spans"]):
            x = LABEL + k * (CELL + GAP)
            fill = span_fill(span)
            stroke = ' stroke="#999999"' if fill == PURGED else ""
            tip = escape(" ".join(str(v) for v in span))
            out.append(f'<rect class="span" x="{x}" y="{y}" width="{CELL}" height="{CELL}" '
                       f'fill="{fill}"{stroke}><title>{tip}</title></rect>')
    y = TOP + rows * (CELL + GAP) + 16
    classes = sorted({s[1] for seg in heap for s in seg["spans"] if s and s[0] == "u"})
    x = 8
    out.append(f'<text x="{x}" y="{y}">classes (full / a quarter full):</text>')
    x += 190
    for block_bytes in classes[:24]:
        for n, full in enumerate((1.0, 0.25)):
            fill = span_fill(["u", block_bytes, 100, round(100 * (1 - full))])
            out.append(f'<rect x="{x + n * (CELL // 2)}" y="{y - 11}" width="{CELL // 2}" '
                       f'height="{CELL}" fill="{fill}"/>')
        out.append(f'<text x="{x + CELL + 3}" y="{y}">{block_bytes}</text>')
        x += CELL + 8 + 7 * len(str(block_bytes))
        if x > width - 60:
            x, y = 198, y + CELL + 6
    y += CELL + 10
    out.append(f'<rect x="8" y="{y - 11}" width="{CELL}" height="{CELL}" fill="{CLEAN}"/>'
               f'<text x="{8 + CELL + 4}" y="{y}">clean (kept for the purge delay)</text>'
               f'<rect x="230" y="{y - 11}" width="{CELL}" height="{CELL}" fill="{PURGED}" '
               f'stroke="#999999"/><text x="{230 + CELL + 4}" y="{y}">purged (given back)</text>')
    height = y + 12
    head = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'font-family="sans-serif" font-size="11">',
            f'<rect width="{width}" height="{height}" fill="white"/>']
    return "\n".join(head + out + ["</svg>"]) + "\n"
