#!/usr/bin/env python3
"""glibc's introspection through libsta_malloc.so (issue 42): runs introspection.c's
program with LD_PRELOAD and checks that mallinfo2 counts the 85 MB two threads hold (80 MB
of blocks, their arrays of pointers) within 10 %, that the JSON statistics parse and their bytes in use are mallinfo2's, that
malloc_info writes sta's XML and malloc_stats sta's lines.

    introspection.py LIBRARY PROGRAM
"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree


def fail(what):
    print(f"FAIL: {what}")
    sys.exit(1)


def main():
    library, program = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as scratch:
        json_path = os.path.join(scratch, "stats.json")
        xml_path = os.path.join(scratch, "info.xml")
        env = dict(os.environ, LD_PRELOAD=library)
        run = subprocess.run([program, json_path, xml_path], env=env, capture_output=True,
                             text=True, timeout=120, check=False)
        if run.returncode != 0:
            fail(f"the program exited {run.returncode}: {run.stdout}{run.stderr}")
        figures = dict(line.split() for line in run.stdout.splitlines())
        figures = {name: int(value) for name, value in figures.items()}
        with open(json_path, encoding="utf-8") as f:
            text = f.read()
        with open(xml_path, encoding="utf-8") as f:
            xml = f.read()

    asked, in_use = figures["asked"], figures["uordblks"]
    print(f"asked {asked} bytes, mallinfo2().uordblks {in_use} ({in_use / asked:.3f}x)")
    if abs(in_use - asked) > asked // 10:
        fail(f"uordblks {in_use} is not within 10 % of the {asked} bytes held")
    if figures["arena"] < in_use:
        fail(f"arena {figures['arena']} is below uordblks {in_use}")

    if figures["length"] != len(text):
        fail(f"sta_malloc_stats_json said {figures['length']} bytes, wrote {len(text)}")
    stats = json.loads(text)  # raises on malformed JSON
    if stats["bytes"]["in_use"] != in_use:
        fail(f"JSON in_use {stats['bytes']['in_use']} is not mallinfo2's {in_use}")
    parts = stats["bytes"]
    if parts["in_use_classes"] + parts["in_use_heap"] + parts["in_use_big"] != in_use:
        fail("JSON: the tiers' bytes in use do not add up to in_use")
    if sum(c["bytes_in_use"] for c in stats["classes"]) != parts["in_use_classes"]:
        fail("JSON: the classes' bytes in use do not add up to in_use_classes")
    if stats["pools"]["made"] < 3 or stats["big_blocks"] < 2 * 10:
        fail(f"JSON: pools {stats['pools']}, big blocks {stats['big_blocks']}: "
             "three threads' pools and their 1 MiB blocks expected")
    print(f"JSON parses; {len(stats['classes'])} classes, pools {stats['pools']}")

    root = ElementTree.fromstring(xml)
    if root.tag != "malloc" or root.get("version") != "sta-1":
        fail(f"malloc_info: root {root.tag} version {root.get('version')}")
    sta = root.find("sta")
    if sta is None or int(sta.get("in_use")) <= 0:
        fail("malloc_info: no <sta in_use=...> element")
    if "sta_malloc: every pool of the process" not in run.stderr or \
            "in use bytes" not in run.stderr:
        fail(f"malloc_stats printed: {run.stderr}")
    print("malloc_info's XML and malloc_stats' lines are sta's")

    # STA_MALLOC_STATS=json: the same object at exit, into STA_MALLOC_STATS_FILE or on
    # stderr, from an unchanged program.
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "at_exit.json")
        env = dict(os.environ, LD_PRELOAD=library, STA_MALLOC_STATS="json",
                   STA_MALLOC_STATS_FILE=path)
        subprocess.run(["ls", "/"], env=env, capture_output=True, check=True, timeout=60)
        with open(path, encoding="utf-8") as f:
            at_exit = json.load(f)
    del env["STA_MALLOC_STATS_FILE"]
    # (not ls, which closes stderr before the library's destructor runs, nor dash, which
    # leaves by _exit)
    run = subprocess.run([sys.executable, "-c", "pass"], env=env, capture_output=True, text=True, check=True,
                         timeout=60)
    on_stderr = json.loads(run.stderr)
    for figures in (at_exit, on_stderr):
        if figures["pools"]["made"] < 1 or figures["bytes"]["mapped"] <= 0:
            fail(f"STA_MALLOC_STATS=json: {figures}")
    print("STA_MALLOC_STATS=json writes the object at exit, to a file or stderr")


if __name__ == "__main__":
    main()
