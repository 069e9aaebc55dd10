"""Under wine (issue 7; wine.md, com.md, box.md, wine.version): the Windows benchmarks,
cross-built with mingw-w64, their Markdown as they print it."""
import os

from ..core import read_text, skipped_note

SKIP = "wine"  # the --skip key: mingw-w64 or wine is not installed


def load(data, results):
    """data.wine: {"version", "tiers", "com", "box"} (None when skipped)."""
    def path(name):
        return os.path.join(results, name)

    data.wine = None if SKIP in data.skips else {
        "version": read_text(path("wine.version")).strip(),
        "tiers": read_text(path("wine.md")), "com": read_text(path("com.md")),
        "box": read_text(path("box.md"))}


def render(data):
    lines = ["## Under wine: the tiers against the Windows heaps", ""]
    if data.wine is None:
        return lines + skipped_note(data, SKIP)
    w = data.wine
    return lines + [
        "From `bench/windows/tiers_benchmark.cpp`, cross-built with mingw-w64 and run under "
        f"wine {w['version']}. Wine's heap is not Microsoft's: these figures say how the pool "
        "fares on wine, not on Windows.", "", w["tiers"].rstrip(), "",
        "### COM object creation: the activation slot against CoCreateInstance", "",
        "From `bench/com_benchmark.cpp` (method in [lazy_slot.md](lazy_slot.md)).", "",
        w["com"].rstrip(), "",
        "### Boxed values: the static `true` / `false` and pool boxes against the heap box", "",
        "From `bench/com_box_benchmark.cpp` (method and limits in [com_box.md](com_box.md)): "
        "a COM method that reads an `IReference<T>*` argument, the box made per call and "
        "released after it, against passing a pointer the caller already holds.", "",
        w["box"].rstrip(), ""]
