"""scripts/report.py on a small fixed input (tests/report/fixture).

The fixture has the formats scripts/report.sh writes: Google Benchmark JSON (aggregates
only, mean and median, time in real_time for manual-time runs and in cpu_time for the
others), the JSON lines of scenario_benchmark --rss and process_benchmark, the callgrind
CSV, and the Markdown of the client programs and of the wine run. Its figures are
chosen so that the fastest variant of a peer differs from the obvious one: mimalloc
through dlopen beats mimalloc under LD_PRELOAD in the gui scenario (the verdict must be
taken against the dlopen figure: 0.82x, missed; against LD_PRELOAD it would be 1.18x,
met), mimalloc through operator new is its fastest balanced variant, jemalloc is the
fastest general-purpose peer on the fresh path, and the best peer at cold start is
foonathan::memory_stack, not one of the pool's own `sta+...` experiments.

Every pool row is there in both layouts (the seed's shared cursor: sta-branch,
sta-table, sta-cursor, the clients' "pool"; spans: sta-spans-branch, sta-spans-table,
sta-spans, the clients' "spans"), with figures chosen so that some verdicts differ
between the layouts, and so that medians differ from means: the waves of sta-spans on
binary_trees have process ratios 1.05, 1.3, 1.02 (median 1.05, met; the mean would
miss), the phase change of sta-spans 65804, 90000, 66000 KiB (median 66000 KiB).

Every line of waves.jsonl leads with "kind" and names its allocator "allocator", as
waves_benchmark prints them; the first two lines of rss.jsonl lead with a "kind", the
others have none: a loader reads the keys it knows.

The threads section (issue 14, threads.jsonl, judged on the span layout only) has a
different best peer per column: mimalloc under LD_PRELOAD at churn32 on 1 thread (9.5 /
6.0 = 1.58x, met; the pool's processes 6.0, 5.8, 9.0: the mean would miss), mimalloc
through dlopen on 2 threads (9.8 / 7.0 = 1.40x, missed), jemalloc at churn_mixed on 2
threads, mimalloc through dlopen at prodcons (0.80x, missed); the producer/consumer peak
RSS of the pool is 1400, 1450, 5000 KiB (median 1450) against mimalloc's 1250 (1.16x,
met). The seed-mode rows (sta-spans-seed: spans in threads::one_owner) miss the 1.10x
bound at 32 B pure get ct (2.5 / 2.0) and in the gui scenario (900 / 750), and meet it
elsewhere.

The unchanged programs (issue 16, programs.jsonl: a real run of
bench/programs/run_programs.sh on a busy machine, 5 rounds, tcmalloc's rows left out as
skipped) are judged on the span layout only. Only binary_trees' rows carry shares of
perf samples inside the allocator (3 sampled runs each: glibc 27.3 %, mimalloc 17.8 %,
jemalloc 33.0 %, libsta_malloc 15.3 %, 0.86x the lowest peer's); the other programs' rows
have none, as from a run with PERF_RUNS=0. The allocator-bound rule (glibc / the best
general-purpose peer >= 1.15x) splits them: lua binary_trees (1.2695 / 0.8909 = 1.42x),
xmllint (1.195x) and python3 with PYTHONMALLOC=malloc (1.169x) are allocator-bound;
string_building (1.05x), plain python3, the sqlite3 shell and pigz are not; pigz, the
multi-threaded one, is judged at >= 1.0x. xmllint meets >= 1.05x the best peer and >= 1.3x
glibc (2.2469 / 2.0332, 2.6851 / 2.0332); binary_trees misses the first (1.02x), python3
with PYTHONMALLOC=malloc the second (1.29x); plain python3 meets >= 0.97x (glibc the best
peer), string_building meets it in time but misses on peak RSS (3924 / 2864 KiB = 1.37x
mimalloc), sqlite3 and pigz miss in time. Round by round (walls), mimalloc's time /
libsta_malloc's on xmllint is 0.76x..1.56x, median 1.06x: the medians' 1.11x is noise-deep.
The sta-unchecked lines of programs.jsonl (libsta_malloc.so with STA_MALLOC_CHECKS=0, issue
27) are synthetic, not from that run: each program's sta line with its walls times 0.99,
1.01, 0.98, 1.00, 0.97 (rotated by one a program; peak RSS 64 KiB less, binary_trees'
shares times 0.96), so checks off / on is 0.99x in the median round everywhere (the
release checks' target is met); on binary_trees the checks-off row is faster than every
peer, which it must never be taken for.

The memory given back (issue 24, memory_back.jsonl, judged on the span layout only) is a
real run of bench/programs/run_memory_back.sh at 64 MiB, 3 rounds, with the rows of glibc,
mimalloc, jemalloc and libsta_malloc kept: the light activity is missed in the tree mode
(libsta_malloc keeps 100 % of its peak, jemalloc 87.3 %: the median of 87.28, 82.53 and
87.31 %), met in the others; the busy activity is met in every mode. Shares are over the
program's baseline: the lowest of the allocators' RSS before the first block.
fixture_memory_back/memory_back.jsonl is that whole run, every peer with the extra ones:
there rpmalloc and mimalloc 3.4.3 are the best peers of most modes.

The real toolkit's scene (issue 38, toolkit.jsonl, judged on the span layout only) is a real
run of bench/programs/run_toolkit.sh (REPS=2 PERF_RUNS=1, on a machine busy with another
benchmark) with the rows of glibc, mimalloc, jemalloc and libsta_malloc kept: jemalloc is
the best peer (5.5372 CPU s against libsta_malloc's 6.6822: 0.83x, missed).

The field suite (issue 39, field_suite.jsonl, judged on the span layout only) is a real run
of bench/programs/run_field_suite.py (1 round) with the rows of glibc, mimalloc, jemalloc and
libsta_malloc kept: the single-threaded geometric mean of the best peer / sta over 7
programs is 1.098x (missed: 1.1x), and cache-thrashN (0.56x mimalloc) among others misses
the multi-threaded bound.

The extra LD_PRELOAD peers (mimalloc3, snmalloc, rpmalloc) have no rows in the fixture:
they are skipped as not present, as report.sh skips them when their folder lacks them.

Under wine (issue 28, wine.jsonl: g++ 12 and clang 14, five repetitions per row from two
processes, each row's values 0.9, 1.0, 1.5, 0.97, 1.05 times its median, so the mean is
not the median), judged on the span layout only: g++ misses the 1.15x seed-mode bound at
32 B pure_get rt (6.0 / 5.0) and the 10x heap-box bound with the int32 box (70 / 7.5 =
9.33x), and meets everything else; clang meets every wine target.

Run: python3 -B -m unittest discover -s tests/report   (ctest: report_py_test)
"""
import contextlib
import io
import json
import os
import shutil
import sys
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import report  # noqa: E402
from report import core  # noqa: E402
from report import heap_map_svg  # noqa: E402
from report.sections import field_suite, heap_map, memory_back, toolkit, traversal, waves  # noqa: E402,E501
from report.sections import programs as program_section  # noqa: E402

FIXTURE = os.path.join(HERE, "fixture")
# A real run of bench/programs/run_memory_back.sh at 64 MiB (3 rounds) with every peer:
# glibc, Debian's mimalloc, jemalloc and tcmalloc, the extra peers and libsta_malloc.so.
MEMORY_BACK_64 = os.path.join(HERE, "fixture_memory_back")
# The fixture has no rows of the extra peers: skipped as report.sh skips them when their
# folder does not have them.
NOT_PRESENT = {p: f"{f} is not present in /nowhere/shared/peers" for p, f in
               [("mimalloc3", "libmimalloc-v3.4.3.so"), ("snmalloc", "libsnmallocshim.so"),
                ("rpmalloc", "librpmalloc.so")]}
SKIPS = dict({"preload:tcmalloc": "libtcmalloc.so.4 is not installed"},
             **{f"preload:{p}": reason for p, reason in NOT_PRESENT.items()})
SKIP_ARGS = [a for key, reason in SKIPS.items() for a in ["--skip", f"{key}={reason}"]]


def run_main(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = report.main(argv)
    return status, out.getvalue(), err.getvalue()


class Sections(unittest.TestCase):
    def test_every_section_module_is_in_the_report(self):
        folder = os.path.join(HERE, "..", "..", "scripts", "report", "sections")
        modules = {f[:-3] for f in os.listdir(folder) if f.endswith(".py") and f != "__init__.py"}
        self.assertEqual({s.__name__.rsplit(".", 1)[1] for s in report.SECTIONS}, modules)
        self.assertTrue(all(s in report.SECTIONS for s in report.TARGET_ORDER))


class Peers(unittest.TestCase):
    def test_extra_peers_are_general_purpose_preload_peers(self):
        for p in ["mimalloc3", "snmalloc", "rpmalloc"]:
            self.assertIn(p, core.GROUPS["general"])
            self.assertIn(p, core.PRELOAD_PEERS)
            self.assertIn(p, core.variants("general"))
            self.assertIn(p + " (new)", core.variants("general"))
            self.assertIn("preload:" + p, report.SKIPPABLE)
        self.assertEqual(core.pretty("mimalloc3"), "mimalloc 3.4.3 (LD_PRELOAD)")
        self.assertEqual(core.pretty("snmalloc (new)"), "snmalloc (LD_PRELOAD, operator new)")
        # "mimalloc" stays Debian's: the targets against mimalloc do not take version 3
        self.assertNotIn("mimalloc3", core.variants("mimalloc"))


class Judging(unittest.TestCase):
    def setUp(self):
        self.data = report.load(FIXTURE, SKIPS)
        self.by_layout = report.measures_by_layout(self.data)
        self.measures = self.by_layout["shared_cursor"]
        self.all_verdicts = report.judge(self.data, self.by_layout)
        self.verdicts = {v.target.id: v for v in self.all_verdicts if v.layout == "shared_cursor"}
        self.spans = {v.target.id: v for v in self.all_verdicts if v.layout == "spans"}
        self.rows = {m.id: figures for m, figures in report.main_rows(self.measures)}

    def check(self, target, group, measure=None, layout="shared_cursor"):
        verdicts = self.verdicts if layout == "shared_cursor" else self.spans
        checks = [c for c in verdicts[target].checks if c.cond.group == group and
                  (measure is None or c.cond.measure == measure)]
        self.assertEqual(len(checks), 1, (target, group))
        return checks[0]

    def test_loading(self):
        d = self.data
        self.assertEqual(d.policy, "sta-branch")  # from get.json's context
        self.assertEqual(d.layout, "shared_cursor")
        self.assertEqual(d.row("spans"), "sta-spans-branch")
        self.assertEqual(d.row("spans", "sta-table"), "sta-spans-table")
        self.assertAlmostEqual(d.get[("sta-spans-branch", "pure_get", "ct", 32)], 2.5)
        self.assertAlmostEqual(d.scenarios[("sta-spans-branch", "gui")], 900)
        # medians, not means; per op; manual time for fresh, CPU time for balanced
        self.assertAlmostEqual(d.get[("sta-branch", "fresh", "ct", 32)], 1.0)
        self.assertAlmostEqual(d.get[("sta-branch", "balanced", "rt", 32)], 1.9)
        # LD_PRELOAD files: malloc -> the peer, std::allocator -> "(new)", others ignored
        self.assertAlmostEqual(d.get[("mimalloc", "fresh", "rt", 32)], 6.7)
        self.assertAlmostEqual(d.get[("mimalloc (new)", "balanced", "rt", 32)], 5.0)
        self.assertAlmostEqual(d.get[("boost-pool", "pure_get", "rt", 32)], 1.8)
        self.assertAlmostEqual(d.scenarios[("sta-branch", "gui")], 1340)  # µs per round
        self.assertAlmostEqual(d.cold["sta-branch"], 15.8)  # median of three processes
        self.assertEqual(d.rss_net[("sta-branch", "tree")], 3900)
        self.assertEqual(d.ir[("boost-pool", "balanced", "rt", 32)], 13.0)

    def test_cold_big_blocks_are_judged_size_by_size(self):
        """The 4 KiB and 32 KiB cold starts (lines with "bytes") stay out of the 32 B figure
        and are each judged against the best peer at that size: the span layout's 100 ns at
        4 KiB against mimalloc's 120 (1.2x), the shared cursor's 1500 ns at 32 KiB against
        mimalloc's 900."""
        d = self.data
        self.assertAlmostEqual(d.cold["sta-spans-branch"], 14.0)
        self.assertAlmostEqual(d.cold_big[("sta-spans-branch", 4096)], 100.0)
        self.assertEqual(d.cold_big_faults[("sta-branch", 32768)], 2048)
        spans = {c.cond.measure: c for c in self.spans["cold_big"].checks}
        self.assertAlmostEqual(spans["cold/4096"].value, 120 / 100)
        self.assertEqual(spans["cold/4096"].figure.variant, "mimalloc")
        cursor = {c.cond.measure: c for c in self.verdicts["cold_big"].checks}
        self.assertAlmostEqual(cursor["cold/32768"].value, 900 / 1500)
        self.assertFalse(cursor["cold/32768"].ok)

    def test_verdicts(self):
        common = {"ct32_fresh": True, "ct32_pure_get": False, "ct32_balanced": False,
                  "rt32_fresh": True, "rt32_pure_get": False, "ct32_mi_fresh": True,
                  "scenario_tree": True, "cold": False, "client_sqlite_sql_mix_20000_people": False}
        self.assertEqual({k: v.ok for k, v in self.verdicts.items()}, dict(common, **{
            "rt32_balanced": True, "ct32_mi_pure_get": False, "ct32_mi_balanced": True,
            "scenario_gui": False, "scale": False, "memory": True, "traversal": False,
            "phase": False, "bstr": True, "waves_lua_binary_trees_lua": False,
            "waves_tree": True, "client_lua_binary_trees_15_gc_heavy": False,
            "cold_big": False}))
        self.assertEqual({k: v.ok for k, v in self.spans.items()}, dict(common, **{
            "rt32_balanced": False, "ct32_mi_pure_get": True, "ct32_mi_balanced": False,
            "scenario_gui": True, "scale": True, "memory": False, "traversal": True,
            "phase": True, "bstr": False, "waves_lua_binary_trees_lua": True,
            "waves_tree": False, "client_lua_binary_trees_15_gc_heavy": True,
            "cold_big": True,
            # issue 14: judged on the span layout only
            "threads_churn32": False, "threads_churn_mixed": True, "threads_prodcons": False,
            "threads_rss": True, "seed_fresh": True, "seed_pure_get": False,
            "seed_balanced": True, "seed_scenario": False,
            # issue 16: the unchanged programs, judged on the span layout only
            "program_lua5_4_binary_trees_lua_15_gc_heavy": False,
            "program_lua5_4_string_building_lua_10000_gc_heavy": False,
            "program_xmllint_repeat_noout_iso_639_3_xml": True,
            "program_python3_dicts_py_pythonmalloc_malloc": False,
            "program_python3_dicts_py": True,
            "program_sqlite3_memory_generate_sql": False,
            "program_pigz_p_2_10_7_lines_of_seq_2_threads": False,
            # issue 27: the release checks against the checks off, the span layout only
            "release_checks": True,
            # issue 38: the real toolkit's scene, the span layout only
            "toolkit_scene": False,
            # issue 24: memory given back, judged on the span layout only
            "memory_back_light": False, "memory_back_busy": True,
            # issue 39: the field suite, the span layout only
            "field_suite_st": False, "field_suite_mt": False,
            # issue 41: the hardened library against the default, the span layout only
            "hardened_programs": True, "field_suite_hardened": True,
            # issue 28: under wine, each compiler, the span layout only
            "wine_g_12_get": False, "wine_g_12_scenario": True, "wine_g_12_box": True,
            "wine_g_12_heap_box": False, "wine_clang_14_get": True,
            "wine_clang_14_scenario": True, "wine_clang_14_box": True,
            "wine_clang_14_heap_box": True}))

    def test_threads(self):
        t = self.data.threads
        self.assertEqual(self.data.spans_threads, "per_thread")  # get.json's context
        spans = t[("sta-spans", "churn32", 1)]
        self.assertEqual(spans["processes"], 3)
        self.assertAlmostEqual(spans["ns_per_op"], 6.0)  # the median of 6.0, 5.8, 9.0
        self.assertAlmostEqual(t[("sta-spans", "prodcons", 1)]["net_peak_kib"], 1450)
        self.assertNotIn(("tcmalloc", "churn32", 1), t)  # skipped
        expected = [  # target, measure, variant, value, ok
            ("threads_churn32", "threads/churn32/1", "mimalloc", 9.5 / 6.0, True),
            ("threads_churn32", "threads/churn32/2", "mimalloc-dlopen", 9.8 / 7.0, False),
            ("threads_churn_mixed", "threads/churn_mixed/2", "jemalloc", 16.6 / 11.0, True),
            ("threads_prodcons", "threads/prodcons/1", "mimalloc-dlopen", 24.0 / 30.0, False),
            ("threads_rss", "threads_rss/prodcons/1", "mimalloc", 1450 / 1250, True),
            ("threads_rss", "threads_rss/prodcons/2", "mimalloc-dlopen", 2000 / 2700, True),
        ]
        for target, measure, variant, value, ok in expected:
            with self.subTest(measure=measure):
                c = next(c for c in self.spans[target].checks if c.cond.measure == measure)
                self.assertEqual(c.figure.variant, variant)
                self.assertAlmostEqual(c.value, value)
                self.assertEqual(c.ok, ok)
        # Round by round: the pool's k-th process against the fastest peer's k-th; the
        # fixture's peers ran one process each, so rounds 2 and 3 have no peer and count not.
        from report.sections import threads as threads_section
        r = threads_section.round_by_round(self.data, "sta-spans", "churn32", 1)
        self.assertAlmostEqual(r[0], 9.5 / 6.0)
        self.assertAlmostEqual(r[1], r[2])
        self.assertIsNone(threads_section.round_by_round(self.data, "sta-spans", "churn32", 3))
        # the shared cursor has one owner only: no verdict there
        self.assertNotIn("threads_churn32", self.verdicts)
        self.assertNotIn("seed_fresh", self.verdicts)

    def test_wine(self):
        f = self.data.wine["figures"]
        box = f[("g++ 12", "box/bool", "sta-spans")]
        self.assertEqual((box["n"], box["unit"]), (5, "ns"))
        self.assertAlmostEqual(box["median"], 8.0)  # not the mean, 8.672
        self.assertAlmostEqual(box["min"], 7.2)
        self.assertAlmostEqual(box["max"], 12.0)
        self.assertEqual(f[("clang 14", "scenario/gui", "malloc")]["unit"], "µs")
        expected = [  # target, measure, variant, value, ok
            ("wine_g_12_get", "wine/g_12/get/pure_get/rt/32", "sta-spans-seed", 6.0 / 5.0, False),
            ("wine_g_12_get", "wine/g_12/get/fresh/ct/32", "sta-spans-seed", 5.0 / 4.8, True),
            ("wine_g_12_scenario", "wine/g_12/scenario/tree", "sta-spans-seed", 1200 / 1100,
             True),
            ("wine_g_12_box", "wine/g_12/box/bool", "sta-spans-seed", 8.0 / 7.0, True),
            ("wine_g_12_heap_box", "wine/g_12/box/int32", "heap box", 70 / 7.5, False),
            ("wine_clang_14_heap_box", "wine/clang_14/box/bool", "heap box", 118 / 7.2, True),
        ]
        for target, measure, variant, value, ok in expected:
            with self.subTest(measure=measure):
                c = next(c for c in self.spans[target].checks if c.cond.measure == measure)
                self.assertEqual(c.figure.variant, variant)
                self.assertAlmostEqual(c.value, value)
                self.assertEqual(c.ok, ok)
        self.assertNotIn("wine_g_12_get", self.verdicts)  # the span layout only
        # the Windows heaps are named apart from glibc's rows
        m = self.by_layout["spans"]["wine/g_12/get/fresh/rt/32"]
        self.assertEqual(set(m.others), {"sta-spans-seed", "msvcrt malloc", "HeapAlloc"})

    def test_programs(self):
        d = self.data
        lua, strings = ("lua5.4 binary_trees.lua 15 (GC-heavy)",
                        "lua5.4 string_building.lua 10000 (GC-heavy)")
        xml = "xmllint --repeat --noout iso_639-3.xml"
        python, plain = "python3 dicts.py, PYTHONMALLOC=malloc", "python3 dicts.py"
        sqlite = "sqlite3 :memory: < generate.sql"
        pigz = "pigz -p 2, 10^7 lines of seq (2 threads)"
        programs = [lua, strings, xml, python, plain, sqlite, pigz]
        self.assertEqual(d.program_list, programs)  # the runner's order
        self.assertEqual(d.program_threads, {pigz})
        self.assertEqual(d.programs[("sta-malloc", xml)],
                         {"seconds": 2.0332, "min": 1.4445, "max": 2.2666, "cpu_seconds": 2.0269,
                          "maxrss_kib": 19752, "runs": 5,
                          "walls": [1.4445, 1.703, 2.2666, 2.252, 2.0332],
                          "alloc_share": None, "alloc_shares": None})  # not sampled
        self.assertEqual(d.programs[("sta-malloc", lua)]["alloc_share"], 0.153)
        self.assertEqual(d.programs[("sta-malloc", lua)]["alloc_shares"],
                         [0.1561, 0.1497, 0.153])
        self.assertIn(("malloc", xml), d.programs)  # the runner's "glibc"
        self.assertNotIn(("tcmalloc", xml), d.programs)  # skipped
        # allocator-bound: glibc / the best general-purpose peer >= 1.15x, from this run
        self.assertAlmostEqual(program_section.program_spread(d, lua), 1.2695 / 0.8909)
        self.assertAlmostEqual(program_section.program_spread(d, strings), 1.4304 / 1.3611)
        self.assertEqual([program_section.allocator_bound(d, p) for p in programs],
                         [True, False, True, True, False, False, False])
        expected = [  # program, group, measure kind, variant, value, ok
            (lua, "all", "program", "mimalloc", 0.8909 / 0.8753, False),
            (lua, "glibc", "program", "malloc", 1.2695 / 0.8753, True),
            (strings, "all", "program", "jemalloc", 1.3611 / 1.3329, True),
            (strings, "mimalloc", "program_rss", "mimalloc", 3924 / 2864, False),
            (xml, "all", "program", "mimalloc", 2.2469 / 2.0332, True),
            (xml, "glibc", "program", "malloc", 2.6851 / 2.0332, True),
            (python, "all", "program", "mimalloc", 1.001 / 0.9043, True),
            (python, "glibc", "program", "malloc", 1.1704 / 0.9043, False),
            (plain, "all", "program", "malloc", 0.7526 / 0.7268, True),  # glibc is the best
            (sqlite, "all", "program", "mimalloc", 2.4965 / 3.0471, False),
            (pigz, "all", "program", "malloc", 2.0878 / 2.3654, False),
            (pigz, "mimalloc", "program_rss", "mimalloc", 5044 / 4276, True),
        ]
        for program, group, kind, variant, value, ok in expected:
            with self.subTest(program=program, group=group, kind=kind):
                c = self.check(f"program_{core.slug(program)}", group, f"{kind}/{program}",
                               layout="spans")
                self.assertEqual(c.figure.variant, variant)
                self.assertAlmostEqual(c.value, value)
                self.assertEqual(c.ok, ok)
        thresholds = {p: [c.threshold for c in program_section.program_target(d, p).conds]
                      for p in programs}
        bound, other = [1.05, 1.3, 1.2], [0.97, 1.2]
        self.assertEqual(thresholds, {lua: bound, strings: other, xml: bound, python: bound,
                                      plain: other, sqlite: other,
                                      pigz: [1.0, 1.2]})  # pigz: multi-threaded
        # round by round: mimalloc's wall time / libsta_malloc's in each of the 5 rounds
        rounds = [2.2469 / 1.4445, 1.5701 / 1.703, 2.4058 / 2.2666, 2.6307 / 2.252,
                  1.541 / 2.0332]
        median, low, high = program_section.per_round(d, xml, "mimalloc")
        self.assertAlmostEqual(median, sorted(rounds)[2])
        self.assertAlmostEqual(low, min(rounds))
        self.assertAlmostEqual(high, max(rounds))
        self.assertNotIn(f"program_{core.slug(xml)}", self.verdicts)  # not on the cursor

    # The checks-off row (issue 27) is loaded under its report name, judged against the
    # checks-on row round by round, and never taken for a peer.
    def test_release_checks_against_checks_off(self):
        d = self.data
        xml = "xmllint --repeat --noout iso_639-3.xml"
        off = d.programs[(core.STA_MALLOC_UNCHECKED_ROW, xml)]  # the runner's "sta-unchecked"
        self.assertEqual(off["walls"], [1.4156, 1.703, 2.1986, 2.2295, 2.0535])
        self.assertEqual(off["seconds"], 2.0535)
        rounds = sorted(o / n for o, n in zip(off["walls"], [1.4445, 1.703, 2.2666, 2.252,
                                                               2.0332]))
        median, low, high = program_section.per_round(d, xml, core.STA_MALLOC_UNCHECKED_ROW)
        self.assertAlmostEqual(median, rounds[2])
        self.assertAlmostEqual((low, high), (rounds[0], rounds[-1]))
        checks = {c.cond.name: c for c in self.spans["release_checks"].checks}
        self.assertEqual(list(checks), d.program_list)  # one condition a program
        self.assertAlmostEqual(checks[xml].value, rounds[2])
        self.assertEqual(checks[xml].figure.variant, core.STA_MALLOC_UNCHECKED_ROW)
        self.assertTrue(all(c.ok and c.cond.threshold == 0.97 for c in checks.values()))
        self.assertNotIn("release_checks", self.verdicts)  # not on the cursor
        # lua binary_trees' checks-off row (0.8562 s) is faster than mimalloc (0.8909 s):
        # still the best peer is mimalloc, and the checks-off row is in no peer measure
        lua = "lua5.4 binary_trees.lua 15 (GC-heavy)"
        self.assertEqual(self.check(f"program_{core.slug(lua)}", "all", f"program/{lua}",
                                    layout="spans").figure.variant, "mimalloc")
        for m in self.by_layout["spans"].values():
            if not m.id.startswith("checks/"):
                self.assertNotIn(core.STA_MALLOC_UNCHECKED_ROW, m.others, m.id)

    def test_seed_mode(self):
        self.assertAlmostEqual(self.data.get[("sta-spans-seed", "pure_get", "ct", 32)], 2.0)
        expected = [  # target, measure, value (per-thread / seed), ok
            ("seed_pure_get", "seed/get/pure_get/ct/32", 2.5 / 2.0, False),
            ("seed_pure_get", "seed/get/pure_get/rt/32", 2.6 / 2.5, True),
            ("seed_fresh", "seed/get/fresh/ct/32", 1.5 / 1.4, True),
            ("seed_scenario", "seed/scenario/gui", 900 / 750, False),
            ("seed_scenario", "seed/scenario/tree", 1300 / 1250, True),
        ]
        for target, measure, value, ok in expected:
            with self.subTest(measure=measure):
                c = next(c for c in self.spans[target].checks if c.cond.measure == measure)
                self.assertEqual(c.figure.variant, "sta-spans-seed")
                self.assertAlmostEqual(c.value, value)
                self.assertEqual(c.ok, ok)
        # the seed row is the pool's, never a peer: only the seed-mode measures (seed/, and
        # wine/, which has no "best peer" target) name it beside ours
        for m in self.by_layout["spans"].values():
            if not m.id.startswith(("seed/", "wine/")):
                self.assertNotIn("sta-spans-seed", m.others, m.id)

    def test_waves(self):
        w = self.data.waves
        self.assertEqual(set(k[1] for k in w), {"lua binary_trees.lua", "tree"})
        spans = w[("sta-spans", "lua binary_trees.lua")]
        self.assertEqual(spans.processes, 3)
        self.assertAlmostEqual(spans.ratio, 1.05)  # the median of 1.05, 1.3, 1.02
        self.assertAlmostEqual(spans.waves[0], 0.20)  # the median of 0.20, 0.21, 0.20
        self.assertEqual(len(spans.waves), waves.WAVES)
        c = self.check("waves_lua_binary_trees_lua", "all", layout="spans")
        self.assertAlmostEqual(c.value, 1.05)
        self.assertEqual(c.figure.variant, "malloc")  # the flattest peer, shown beside
        self.assertAlmostEqual(self.check("waves_tree", "all").value, 1.08)

    def test_traversal_phase_bstr_clients(self):
        self.assertEqual(self.data.traversal["sta-cursor"],
                         traversal.Spread(1.38, 1.36, 1.50, 5))
        c = self.check("traversal", "mimalloc")
        self.assertEqual(c.figure.variant, "mimalloc")  # LD_PRELOAD beats dlopen here
        self.assertAlmostEqual(c.value, 1.10 / 1.38)
        self.assertAlmostEqual(self.check("traversal", "mimalloc", layout="spans").value,
                               1.10 / 0.95)
        self.assertAlmostEqual(self.check("phase", "all", layout="spans").value,
                               66000 / 65536)  # the median of three processes
        self.assertAlmostEqual(self.check("phase", "all").value, 131712 / 65536)
        self.assertAlmostEqual(self.check("bstr", "original CComBSTR").value, 1.921e7 / 1.073e5)
        self.assertAlmostEqual(self.check("bstr", "original CComBSTR", layout="spans").value,
                               1.921e7 / 6.0e5)
        lua = "client_lua_binary_trees_15_gc_heavy"
        self.assertAlmostEqual(self.check(lua, "mimalloc").value, 0.962 / 1.078)
        self.assertAlmostEqual(self.check(lua, "mimalloc", layout="spans").value, 0.962 / 0.90)
        rss = self.check("client_sqlite_sql_mix_20000_people", "glibc",
                         "client_rss/sqlite SQL mix, 20000 people", layout="spans")
        self.assertAlmostEqual(rss.value, 26000 / 20000)
        self.assertFalse(rss.ok)

    def test_each_verdict_is_taken_against_the_fastest_variant(self):
        expected = [  # target, group, measure, variant, ratio
            ("scenario_gui", "general", None, "mimalloc-dlopen", 1100 / 1340),
            ("scenario_tree", "general", None, "mimalloc-dlopen", 1650 / 1360),
            ("scenario_gui", "glibc", None, "std::allocator", 2500 / 1340),
            ("scenario_gui", "bump", None, "foonathan-stack", 1340 / 1250),
            ("ct32_fresh", "general", None, "jemalloc", 6.0 / 1.0),
            ("ct32_pure_get", "general", None, "mimalloc-dlopen", 2.9 / 3.0),
            ("ct32_balanced", "general", None, "mimalloc (new)", 5.0 / 2.0),
            ("ct32_balanced", "glibc", None, "malloc", 9.0 / 2.0),
            ("ct32_balanced", "boost::pool", None, "boost-pool", 2.0 / 1.2),
            ("rt32_balanced", "general", None, "mimalloc (new)", 5.0 / 1.9),
            ("cold", "all", None, "foonathan-stack", 14.6 / 15.8),
            ("memory", "glibc", "rss/tree", "std::allocator", 3900 / 3072),
        ]
        for target, group, measure, variant, value in expected:
            with self.subTest(target=target, group=group):
                c = self.check(target, group, measure)
                self.assertEqual(c.figure.variant, variant)
                self.assertAlmostEqual(c.value, value)

    def test_scale_spread(self):
        grow, churn = self.verdicts["scale"].checks
        self.assertTrue(grow.ok)
        self.assertAlmostEqual(grow.value[0], 18.4 / 20.8)
        self.assertFalse(churn.ok)
        self.assertAlmostEqual(churn.value[1], 6.64 / 2.57)

    def test_main_table_and_targets_agree(self):
        compared = 0
        for v in self.verdicts.values():
            for c in v.checks:
                if c.cond.group in report.MAIN_GROUPS and c.cond.measure in self.rows:
                    row = self.rows[c.cond.measure][c.cond.group]
                    self.assertEqual((row.variant, row.value), (c.figure.variant, c.figure.value),
                                     (v.target.id, c.cond.group))
                    compared += 1
        self.assertGreaterEqual(compared, 10)
        # the gui row's best general-purpose peer is the figure the scene's verdict used
        gui = self.rows["scenario/gui"]["general"]
        mi = self.check("scenario_gui", "general").figure
        self.assertEqual((gui.variant, gui.value), (mi.variant, mi.value))

    def test_rendered_tables_agree(self):
        rows = report.main_rows(self.measures)
        main_md = report.render_main(self.data, rows)
        targets_md = report.render_targets(self.all_verdicts, "shared_cursor")
        gui_row = next(line for line in main_md.splitlines() if "scenario gui" in line)
        self.assertIn("mimalloc (dlopen) 1100 µs | 0.82×", gui_row)
        self.assertIn("shared cursor (default): measured | verdict | spans: measured | verdict",
                      targets_md)
        gui_target = next(line for line in targets_md.splitlines() if "scenario gui" in line)
        self.assertIn("0.82× vs mimalloc (dlopen)", gui_target)
        # the shared cursor misses, spans meet it (1100 / 900)
        self.assertIn("| **missed** | 2.78× vs std::allocator (glibc), 1.22× vs mimalloc (dlopen)",
                      gui_target)
        self.assertTrue(gui_target.endswith("| met |"))


class Toolkit(unittest.TestCase):
    """The real toolkit's scene (issue 38): the section alone on the fixture's rows."""

    def load(self, results=FIXTURE, skips=SKIPS):
        data = core.Results(skips)
        toolkit.load(data, results)
        return data

    def verdict(self, data):
        measures = {m.id: m for m in toolkit.measures(data, "spans")}
        (target,) = toolkit.targets(data)
        return core.Verdict(target, "spans", "sta-spans-branch",
                            [core.check(measures, c) for c in target.conds])

    def test_loading_and_verdict(self):
        d = self.load()
        self.assertEqual(set(d.toolkit), {"malloc", "mimalloc", "jemalloc", "sta-malloc"})
        self.assertEqual(toolkit.complete(d), [])
        self.assertEqual(d.toolkit_setup["widgets"], 93635)
        self.assertAlmostEqual(d.toolkit["sta-malloc"]["phases"]["build"], 4.0073)
        (c,) = self.verdict(d).checks
        self.assertFalse(c.ok)
        self.assertEqual(c.figure.variant, "jemalloc")
        self.assertAlmostEqual(c.value, 5.5372 / 6.6822)
        rounds = toolkit.per_round(d, "jemalloc")
        self.assertAlmostEqual(rounds[1], 4.7658 / 7.241)
        why = toolkit.why_toolkit(d, self.verdict(d))
        self.assertIn("the two ranges overlap", why)
        self.assertIn("in the kernel: 13.1 % and 11.4 %", why)
        md = "\n".join(toolkit.render(d))
        self.assertIn("| libsta_malloc.so (LD_PRELOAD) | 6.682 | 6.123–7.241 | 2 | 0.85× | "
                      "0.83× |", md)

    def test_missing_rows_and_malformed_lines(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        with open(os.path.join(FIXTURE, "toolkit.jsonl")) as f:
            lines = [json.loads(line) for line in f]
        with open(os.path.join(tmp, "toolkit.jsonl"), "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in lines if r["allocator"] != "mimalloc")
        self.assertEqual(toolkit.complete(self.load(tmp)),
                         ["toolkit scene (toolkit.jsonl): no rows of mimalloc"])
        lines[0]["cpu_min"] = lines[0]["cpu_max"] + 1
        with open(os.path.join(tmp, "toolkit.jsonl"), "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in lines)
        with self.assertRaises(core.ReportError):
            self.load(tmp)


class FieldSuite(unittest.TestCase):
    """The field suite (issue 39): the section alone on the fixture's rows."""

    def load(self, results=FIXTURE, skips=SKIPS):
        data = core.Results(skips)
        field_suite.load(data, results)
        return data

    @staticmethod
    def write(folder, rows):
        with open(os.path.join(folder, "field_suite.jsonl"), "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)

    def verdicts(self, data):
        measures = {m.id: m for m in field_suite.measures(data, "spans")}
        return {t.id: core.Verdict(t, "spans", "sta-spans-branch",
                                   [core.check(measures, c) for c in t.conds])
                for t in field_suite.targets(data)}

    def test_loading_and_verdicts(self):
        d = self.load()
        self.assertEqual(len(d.field), 17)
        self.assertEqual(field_suite.complete(d), [])
        cfrac = d.field["cfrac"]
        self.assertEqual((cfrac["thr"], cfrac["unit"], cfrac["higher"]),
                         ("ST", "s (wall)", False))
        # a throughput is a cost inverted: the best peer is the highest figure
        self.assertEqual(field_suite.best_peer(d, d.field["larsonN"])[0], "jemalloc")
        self.assertAlmostEqual(field_suite.speedup(d, d.field["larsonN"]),
                               45526135 / 44075116)
        # glibc is shown, never the best peer (malloc-large: glibc 3.76 s, mimalloc 18.08)
        self.assertEqual(field_suite.best_peer(d, d.field["malloc-large"])[0], "mimalloc")
        v = self.verdicts(d)
        (st,) = v["field_suite_st"].checks
        self.assertAlmostEqual(st.value, 1.0977937, places=6)  # 7 programs
        self.assertFalse(st.ok)  # 1.098 < 1.1
        mt = {c.cond.measure: c.ok for c in v["field_suite_mt"].checks}
        self.assertEqual(len(mt), 10)
        self.assertTrue(mt["field/larsonN"])
        self.assertFalse(mt["field/cache-thrashN"])
        self.assertIn("cache-thrashN 0.56× of mimalloc (LD_PRELOAD)",
                      field_suite.why_field(d, v["field_suite_mt"]))
        md = "\n".join(field_suite.render(d))
        self.assertIn("| cache-thrashN | MT | s (wall) |", md)
        self.assertIn("Target *single-threaded geometric mean ≥ 1.1× the best peer*: "
                      "**missed**: 1.10×", md)

    def test_missing_rows_and_malformed_lines(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        with open(os.path.join(FIXTURE, "field_suite.jsonl")) as f:
            lines = [json.loads(line) for line in f]
        self.write(tmp, [r for r in lines
                         if (r["program"], r["allocator"]) != ("espresso", "jemalloc")])
        self.assertEqual(field_suite.complete(self.load(tmp)),
                         ["field suite, espresso (field_suite.jsonl): no rows of jemalloc"])
        lines[0]["min"] = lines[0]["max"] + 1
        self.write(tmp, lines)
        with self.assertRaises(core.ReportError):
            self.load(tmp)

    def test_a_peer_whose_runs_failed_is_no_best_peer(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        with open(os.path.join(FIXTURE, "field_suite.jsonl")) as f:
            lines = [json.loads(line) for line in f]

        def failed(r):  # every run crashed, as the runner writes it
            return dict(r, values=[], median=None, min=None, max=None, rss_kib=None,
                        failed_runs=1, exits=[139])

        def with_failed(allocator):  # cfrac's runs of `allocator` all failed
            self.write(tmp, [failed(r) if (r["program"], r["allocator"]) ==
                             ("cfrac", allocator) else r for r in lines])

        with_failed("mimalloc")
        d = self.load(tmp)
        self.assertEqual(field_suite.complete(d), [])
        # mimalloc was cfrac's best peer (1.28 s); now jemalloc's 1.31 s is
        self.assertEqual(field_suite.best_peer(d, d.field["cfrac"])[0], "jemalloc")
        self.assertIn("failed 1× (exit 139)", "\n".join(field_suite.render(d)))
        # libsta_malloc's runs never fail: a line of its with none is an error
        with_failed("sta")
        with self.assertRaises(core.ReportError):
            self.load(tmp)


class MemoryBack(unittest.TestCase):
    """The memory given back (issue 24): the section alone, on the real 64 MiB run with
    every peer (MEMORY_BACK_64), and on the fixture's rows (Debian's peers; tcmalloc and
    the extra peers skipped)."""

    def load(self, results, skips):
        data = core.Results(skips)
        memory_back.load(data, results)
        return data

    def verdicts(self, data):
        """target id -> [Check], as report.judge takes them on the span layout."""
        measures = {m.id: m for m in memory_back.measures(data, "spans")}
        return {t.id: [core.check(measures, c) for c in t.conds]
                for t in memory_back.targets(data)}

    def test_loading_medians(self):
        d = self.load(FIXTURE, SKIPS)
        self.assertEqual(d.memory_back_setup, {"mib": 64, "activity_ms": 1000,
                                               "blocks_per_ms": {"light": 8, "busy": 256}})
        self.assertEqual(d.memory_back_modes, ["all", "older_half", "after_exit", "tree"])
        ours = d.memory_back[("light", "all", "sta-malloc")]  # the runner's "sta"
        self.assertEqual(ours["runs"], 3)
        # over the program's baseline, glibc's median 196 KiB (runs 196, 200, 196), the
        # lowest; libsta_malloc's own is 240 KiB (runs 236, 240, 240)
        self.assertAlmostEqual(ours["base_mib"], 240 / 1024)
        self.assertAlmostEqual(ours["share"], (53672 - 196) / (76188 - 196))
        self.assertAlmostEqual(ours["peak_mib"], (76188 - 196) / 1024)
        self.assertAlmostEqual(ours["after_mib"], (53672 - 196) / 1024)
        # jemalloc's light tree: shares 0.8728, 0.8253, 0.8731: the median, not the mean
        self.assertAlmostEqual(d.memory_back[("light", "tree", "jemalloc")]["share"], 0.8728,
                               places=4)
        self.assertIn(("busy", "tree", "malloc"), d.memory_back)  # the runner's "glibc"
        self.assertEqual(memory_back.complete(d), [])

    def test_verdicts_both_ways(self):
        checks = self.verdicts(self.load(FIXTURE, SKIPS))
        light = {c.cond.name: c for c in checks["memory_back_light"]}
        self.assertEqual({m: c.ok for m, c in light.items()},
                         {"all": True, "older_half": True, "after_exit": True, "tree": False})
        tree = light["tree"]
        self.assertEqual(tree.figure.variant, "jemalloc")  # the lowest general-purpose share
        self.assertAlmostEqual(tree.value, 1.0002, places=4)
        self.assertAlmostEqual(tree.figure.value, 0.8728, places=4)
        self.assertTrue(all(c.ok for c in checks["memory_back_busy"]))
        # glibc is shown, not judged: its 100 % never is the best peer
        self.assertNotIn("malloc", {c.figure.variant for cs in checks.values() for c in cs})

    def test_extra_peers_present_are_the_best_peers(self):
        d = self.load(MEMORY_BACK_64, {})
        self.assertEqual(memory_back.complete(d), [])
        checks = self.verdicts(d)
        light = {c.cond.name: c for c in checks["memory_back_light"]}
        busy = {c.cond.name: c for c in checks["memory_back_busy"]}
        expected = [  # checks, mode, best peer, its share, ours, ok
            (light, "all", "rpmalloc", 0.1054, 0.7037, False),
            (light, "older_half", "mimalloc3", 0.5506, 0.9466, False),
            (light, "after_exit", "jemalloc", 0.8267, 0.6516, True),
            (light, "tree", "rpmalloc", 0.0819, 1.0002, False),
            (busy, "all", "mimalloc3", 0.0848, 0.1239, False),
            (busy, "after_exit", "jemalloc", 0.8674, 0.0695, True),
            (busy, "tree", "mimalloc3", 0.0673, 0.0067, True),
        ]
        for checks_, mode, peer, theirs, ours, ok in expected:
            with self.subTest(mode=mode, peer=peer):
                c = checks_[mode]
                self.assertEqual(c.figure.variant, peer)
                self.assertAlmostEqual(c.figure.value, theirs, places=3)
                self.assertAlmostEqual(c.value, ours, places=3)
                self.assertEqual(c.ok, ok)

    def test_the_baseline_is_the_programs_not_the_allocators(self):
        # busy tree, 64 MiB: mimalloc 3.4.3 has 4356-4360 KiB resident before the program's
        # first block, glibc 196-200 KiB. Over its own baseline mimalloc 3.4.3 would keep
        # (4748 - 4356) / (67852 - 4356) = 0.62 % of its peak, below libsta_malloc's 0.67 %,
        # by purging its own start-up pages; over the program's (glibc's median, 196 KiB)
        # it keeps 6.7 %.
        d = self.load(MEMORY_BACK_64, {})
        theirs = d.memory_back[("busy", "tree", "mimalloc3")]
        self.assertAlmostEqual(theirs["base_mib"], 4356 / 1024)
        self.assertAlmostEqual(theirs["share"], (4748 - 196) / (67852 - 196))
        self.assertAlmostEqual(theirs["after_mib"], (4748 - 196) / 1024)
        ours = d.memory_back[("busy", "tree", "sta-malloc")]
        self.assertAlmostEqual(ours["share"], (836 - 196) / (95196 - 196))
        busy = {c.cond.name: c for c in self.verdicts(d)["memory_back_busy"]}
        self.assertTrue(busy["tree"].ok)

    def test_absent_extra_peers(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        extras = [f'"allocator": "{p}"' for p in NOT_PRESENT]
        with open(os.path.join(MEMORY_BACK_64, "memory_back.jsonl")) as f:
            lines = [line for line in f if not any(e in line for e in extras)]
        with open(os.path.join(tmp, "memory_back.jsonl"), "w") as f:
            f.writelines(lines)
        skips = {f"preload:{p}": reason for p, reason in NOT_PRESENT.items()}
        d = self.load(tmp, skips)
        self.assertEqual(memory_back.complete(d), [])
        light = {c.cond.name: c for c in self.verdicts(d)["memory_back_light"]}
        self.assertEqual(light["all"].figure.variant, "jemalloc")  # rpmalloc is not there
        self.assertTrue(light["all"].ok)
        text = "\n".join(memory_back.render(d) + memory_back.method(d))
        self.assertNotIn("snmalloc", text)
        self.assertIn("lowest share among mimalloc, jemalloc and tcmalloc;", text)
        fixture = "\n".join(memory_back.render(self.load(FIXTURE, SKIPS)))
        self.assertIn("lowest share among mimalloc and jemalloc;", fixture)  # tcmalloc skipped
        # not skipped and not there: the rows are missing
        problems = memory_back.complete(self.load(tmp, {}))
        self.assertIn("memory given back, light all (memory_back.jsonl): no rows of mimalloc3, "
                      "snmalloc, rpmalloc", problems)

    def test_rendered_with_every_peer(self):
        d = self.load(MEMORY_BACK_64, {})
        md = "\n".join(memory_back.render(d))
        self.assertIn("### Light activity: 8 blocks a millisecond after the frees", md)
        self.assertIn("### Busy activity: 256 blocks a millisecond after the frees", md)
        self.assertIn("lowest share among mimalloc, jemalloc, tcmalloc, mimalloc 3.4.3, snmalloc "
                      "and rpmalloc;", md)
        self.assertIn("| all | libsta_malloc.so (LD_PRELOAD) | 0.2 | 74.2 | 52.2 | 70.4 % | "
                      "**missed**: 10.5 % (rpmalloc (LD_PRELOAD)) |", md)
        self.assertIn("| after_exit | libsta_malloc.so (LD_PRELOAD) | 0.2 | 74.2 | 5.2 | 7.0 % | "
                      "met: 86.7 % (jemalloc (LD_PRELOAD)) |", md)
        self.assertIn("| tree | rpmalloc (LD_PRELOAD) | 0.2 | 62.5 | 5.1 | 8.2 % |  |", md)
        self.assertIn("| tree | mimalloc 3.4.3 (LD_PRELOAD) | 4.3 | 66.1 | 4.4 | 6.7 % |  |", md)

    def test_why_missed_names_the_best_peer_and_both_shares(self):
        d = self.load(MEMORY_BACK_64, {})
        target = next(t for t in memory_back.targets(d) if t.id == "memory_back_light")
        measures = {m.id: m for m in memory_back.measures(d, "spans")}
        v = core.Verdict(target, "spans", "sta-spans-branch",
                         [core.check(measures, c) for c in target.conds])
        why = memory_back.why_memory_back(d, v)
        self.assertIn("tree: libsta_malloc.so keeps 100.0 % of its peak (92.8 of 92.8 MiB), the "
                      "best peer rpmalloc (LD_PRELOAD) 8.2 % (5.1 of 62.5 MiB)", why)
        self.assertNotIn("after_exit", why)  # met

    def test_malformed_lines_are_errors(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        path = os.path.join(tmp, "memory_back.jsonl")
        shutil.copy(os.path.join(FIXTURE, "memory_back.jsonl"), path)
        with open(path, "a") as f:
            f.write('{"kind": "memory_back", "allocator": "glibc", "activity": "light"}\n')
        with self.assertRaisesRegex(core.ReportError, "a malformed memory_back line"):
            self.load(tmp, SKIPS)
        shutil.copy(os.path.join(FIXTURE, "memory_back.jsonl"), path)
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace('"mib": 64,', '"mib": 128,', 1))
        with self.assertRaisesRegex(core.ReportError, "several mib in one run"):
            self.load(tmp, SKIPS)


class Report(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.results = os.path.join(self.tmp, "results")
        shutil.copytree(FIXTURE, self.results)
        self.docs = os.path.join(self.tmp, "docs")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_report(self, *extra):
        return run_main([self.results, "--docs", self.docs, *SKIP_ARGS, *extra])

    def markdown(self):
        with open(os.path.join(self.docs, "benchmarks.md")) as f:
            return f.read()

    def test_every_section_is_written(self):
        status, out, err = self.run_report()
        self.assertEqual(status, 0, err)
        self.assertIn("| scenario gui:", out)
        md = self.markdown()
        for heading in ["## Main table", "## Targets", "### Why the missed targets are missed",
                        "### get, 32 B (ns per op)", "## Instructions per operation at 32 B",
                        "## Scenarios", "## Cold start", "## Scale", "### demo_benchmark",
                        "## Real programs on the pool", "lua binary_trees 15",
                        "## Phase change", "## Waves", "### lua binary_trees.lua", "### tree",
                        "## Traversal", "sta (spans, huge pages)",
                        "### The pool, every dispatch × layout",
                        "## Under wine", "wine-8.0", "### COM object creation", "868.87",
                        "### Boxed values", "#### g++ 12", "#### clang 14",
                        "### The per-thread pool against the seed's mode",
                        "repetitions: g++ 12 5, clang 14 5",
                        "## Threads: per-thread pools", "### CPU ns per op",
                        "## Per-thread pools vs the seed's mode (span layout, one thread)",
                        "`threads::per_thread` in this build",
                        "## Unchanged programs on libsta_malloc.so (LD_PRELOAD)",
                        "### Every allocator (wall seconds: median, min–max; CPU seconds; "
                        "peak RSS)",
                        "## Memory given back after a big free (RSS)",
                        "### Light activity: 8 blocks a millisecond after the frees"]:
            self.assertIn(heading, md)
        self.assertIn("- *xmllint --repeat --noout iso_639-3.xml*: glibc / mimalloc (LD_PRELOAD)"
                      " = 1.20× → allocator-bound", md)
        self.assertIn("- *sqlite3 :memory: < generate.sql*: glibc / mimalloc (LD_PRELOAD)"
                      " = 1.13× → not allocator-bound", md)
        self.assertIn("at least 1.15× the best general-purpose peer's", md)
        program_row = next(line for line in md.splitlines()
                           if line.startswith("| python3 dicts.py, PYTHONMALLOC=malloc | 0.904"))
        self.assertIn("| 0.904 (0.646–0.988) | 1.29× | 1.11× (mimalloc (LD_PRELOAD)) | "
                      "1.11× (0.92–1.46) | 1.17× | yes |", program_row)
        target_row = next(line for line in md.splitlines() if line.startswith(
            "| program xmllint --repeat --noout iso_639-3.xml (allocator-bound):"))
        self.assertIn("time ≥1.05× the best peer, time ≥1.3× glibc, peak RSS ≤1.2× mimalloc | "
                      "n/a | n/a | time 1.11× vs mimalloc (LD_PRELOAD), time 1.32× vs glibc "
                      "malloc, peak RSS 1.07× of mimalloc (LD_PRELOAD) | met |", target_row)
        self.assertIn("| program pigz -p 2, 10^7 lines of seq (2 threads) (multi-threaded): time "
                      "≥1× the best peer, peak RSS ≤1.2× mimalloc |", md)
        why = next(line for line in md.splitlines() if line.startswith(
            "- *program lua5.4 binary_trees.lua 15 (GC-heavy) (allocator-bound)* (spans):"))
        self.assertIn("time 1.02× vs mimalloc (LD_PRELOAD)", why)  # why it is missed
        self.assertIn("round by round mimalloc (LD_PRELOAD) / libsta_malloc = 1.07× (0.87–1.14)",
                      why)
        self.assertIn("the two time ranges overlap: within this run's noise", md)
        threads_row = next(line for line in md.splitlines()
                           if line.startswith("| **sta (spans): × vs the best peer**"))
        self.assertIn("| 1.58× (mimalloc (LD_PRELOAD)) | 1.40× (mimalloc (dlopen)) |",
                      threads_row)
        self.assertIn("1.16× of mimalloc (LD_PRELOAD)", threads_row)
        seed_row = next(line for line in md.splitlines() if line.startswith("| 32 B pure_get ct"))
        self.assertIn("| 2.50 ns | 2.00 ns | 1.25× |", seed_row)
        target_row = next(line for line in md.splitlines()
                          if line.startswith("| threads: churn 32 B, per thread:"))
        self.assertIn("1 thread ≥1.5× the best peer, 2 threads ≥1.5× the best peer",
                      target_row)
        self.assertIn("| n/a | n/a |", target_row)  # no verdict on the shared cursor
        self.assertIn("*threads: churn 32 B, per thread* (spans):", md)  # why it is missed
        self.assertIn("Skipped under LD_PRELOAD: tcmalloc (libtcmalloc.so.4 is not installed)",
                      md)
        self.assertTrue(os.path.getsize(os.path.join(self.docs, "benchmarks.svg")) > 0)

    def test_absent_extra_peers_are_said(self):
        status, _, err = self.run_report()
        self.assertEqual(status, 0, err)
        md = self.markdown()
        bullet = next(line for line in md.splitlines()
                      if line.startswith("- **the newest releases** of the peers"))
        self.assertIn("Not present here, so not measured: mimalloc 3.4.3, snmalloc and rpmalloc "
                      "(libmimalloc-v3.4.3.so is not present in /nowhere/shared/peers; ", bullet)
        self.assertNotIn("Measured in this run", bullet)
        # the Debian peer skipped stays on its own line
        self.assertIn("Skipped under LD_PRELOAD: tcmalloc (libtcmalloc.so.4 is not installed).",
                      md)

    def test_extra_peers_are_required_unless_skipped(self):
        status, _, err = run_main([self.results, "--docs", self.docs, "--skip",
                                   "preload:tcmalloc=libtcmalloc.so.4 is not installed"])
        self.assertEqual(status, 1)
        self.assertIn("get-mimalloc3.json", err)

    def test_missing_policy_is_an_error(self):
        path = os.path.join(self.results, "get.json")
        with open(path) as f:
            doc = json.load(f)
        del doc["context"]["sta_default_policy"]
        with open(path, "w") as f:
            json.dump(doc, f)
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("sta_default_policy", err)
        self.assertFalse(os.path.exists(os.path.join(self.docs, "benchmarks.md")))

    def test_missing_section_is_an_error_unless_skipped(self):
        os.remove(os.path.join(self.results, "clients.md"))
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("clients.md", err)
        status, _, err = self.run_report("--skip", "clients=the client programs were not built")
        self.assertEqual(status, 0, err)
        md = self.markdown()
        self.assertIn("## Real programs on the pool: Lua, SQLite, libxml2\n\n"
                      "Skipped: the client programs were not built.", md)

    def test_missing_programs_are_an_error_unless_skipped(self):
        os.remove(os.path.join(self.results, "programs.jsonl"))
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("programs.jsonl", err)
        status, _, err = self.run_report("--skip", "programs=pigz is not installed")
        self.assertEqual(status, 0, err)
        md = self.markdown()
        self.assertIn("## Unchanged programs on libsta_malloc.so (LD_PRELOAD)\n\n"
                      "Skipped: pigz is not installed.", md)
        self.assertNotIn("| program | allocator | median s |", md)  # no table of the programs

    def test_missing_toolkit_is_an_error_unless_skipped(self):
        os.remove(os.path.join(self.results, "toolkit.jsonl"))
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("toolkit.jsonl", err)
        status, _, err = self.run_report("--skip", "toolkit=qt6-base-dev is not installed")
        self.assertEqual(status, 0, err)
        md = self.markdown()
        self.assertIn("## A real toolkit: a Qt 6 Widgets scene on libsta_malloc.so (LD_PRELOAD)"
                      "\n\nSkipped: qt6-base-dev is not installed.", md)
        self.assertNotIn("the real toolkit's scene (Qt 6 Widgets", md)  # no target

    def test_missing_field_suite_is_an_error_unless_skipped(self):
        os.remove(os.path.join(self.results, "field_suite.jsonl"))
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("field_suite.jsonl", err)
        status, _, err = self.run_report("--skip", "field_suite=no field suite at /nowhere")
        self.assertEqual(status, 0, err)
        md = self.markdown()
        self.assertIn("## The field suite: mimalloc-bench's programs on libsta_malloc.so "
                      "(LD_PRELOAD)\n\nSkipped: no field suite at /nowhere.", md)
        self.assertNotIn("the field suite, single-threaded programs", md)  # no target

    def test_allocator_shares_are_tabled_with_the_lowest_peer(self):
        status, _, err = self.run_report()
        self.assertEqual(status, 0, err)
        md = self.markdown()
        self.assertIn("### Share of CPU samples inside the allocator (perf)", md)
        # binary_trees: sampled (3 runs each, tcmalloc's rows absent); the lowest peer
        # share is mimalloc's 17.8 %, and 15.3 / 17.8 = 0.86
        # (the checks-off column, 14.7 %, is no peer: not the lowest)
        # (the hardened column: the fixture's hardened rows were not sampled)
        self.assertIn("| lua5.4 binary_trees.lua 15 (GC-heavy) | 27.3 % (27.1–28.0) | "
                      "17.8 % (17.6–18.0) | 33.0 % (32.9–33.4) | – | 15.3 % (15.0–15.6) | "
                      "14.7 % (14.4–15.0) | – | 0.86 (mimalloc (LD_PRELOAD)) |", md)
        self.assertIn("| xmllint --repeat --noout iso_639-3.xml | – | – | – | – | – | – | – | – |",
                      md)

    # Issue 41: the hardened library's rows (6 % slower on every program of the fixture,
    # 5 % on every field-suite program) give speeds of 1 / 1.06 and 1 / 1.05, at least
    # 1 / 1.1: both targets met; its row is in the programs' and the field suite's tables.
    def test_hardened_library_is_judged_against_the_default(self):
        status, _, err = self.run_report()
        self.assertEqual(status, 0, err)
        md = self.markdown()
        self.assertRegex(md, r"\| the hardened library on the unchanged programs [^|]*\| n/a \| "
                             r"n/a \| [^|]*0\.94[^|]* \| met \|")
        self.assertRegex(md, r"\| the hardened library on the field suite [^|]*\| n/a \| n/a \| "
                             r"[^|]*0\.95[^|]* \| met \|")
        self.assertIn("| libsta_malloc-hardened.so (LD_PRELOAD) |", md)
        self.assertIn("| libsta_malloc-hardened.so |", md.replace(" (LD_PRELOAD) |", " |"))

    # Issue 38: a small program (" (small)" in its name) is judged by its peak RSS alone —
    # at most mimalloc 3.4.3's and at most glibc's + 2 MiB — and is left out of the release
    # checks' and the hardened library's targets (its few milliseconds are noise). The
    # fixture's rows of python3 dicts.py, renamed, with mimalloc 3.4.3's beside them.
    def add_small_program(self, rss):
        path = os.path.join(self.results, "programs.jsonl")
        with open(path) as f:
            rows = [json.loads(line) for line in f]
        small = []
        for r in rows:
            if r["program"] == "python3 dicts.py":
                # ten times faster than the fixture's own rows, but checks off twice as fast
                # and the hardened library half as fast again: were the small program judged
                # there, both the release checks' and the hardened library's targets would move
                divisor = {"sta-unchecked": 20, "sta-hardened": 5}.get(r["allocator"], 10)
                walls = [w / divisor for w in r["walls"]]
                small.append(dict(r, program="python3 -c pass (small)", walls=walls,
                                  seconds=sorted(walls)[len(walls) // 2], min=min(walls),
                                  max=max(walls), maxrss_kib=rss.get(r["allocator"], 9000)))
        for r in list(rows):  # mimalloc 3.4.3 on every program, as a report run with it has
            if r["allocator"] == "mimalloc":
                small_rss = rss["mimalloc3"] if r["program"] == "python3 dicts.py" else None
                rows.append(dict(r, allocator="mimalloc3"))
                if small_rss is not None:
                    mine = next(x for x in small if x["allocator"] == "mimalloc")
                    small.append(dict(mine, allocator="mimalloc3", maxrss_kib=small_rss))
        with open(path, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows + small)

    def test_small_programs_are_judged_by_their_peak_rss(self):
        self.add_small_program({"sta": 9000, "glibc": 8000, "mimalloc3": 20000})
        status, _, err = self.run_report()
        self.assertEqual(status, 0, err)
        md = self.markdown()
        row = next(line for line in md.splitlines()
                   if line.startswith("| program python3 -c pass (small): "))
        self.assertIn("≤1× mimalloc 3.4.3, ≤ glibc + 2 MiB", row)
        self.assertIn("8.79 MiB (glibc malloc 7.81 MiB)", row)
        self.assertTrue(row.endswith("| met |"))
        self.assertIn("- *python3 -c pass (small)*: glibc / ", md)
        self.assertIn("→ small: its peak RSS is judged", md)
        checks = next(line for line in md.splitlines()
                      if line.startswith("| release checks within the noise (issue 27; "))
        self.assertNotIn("(small)", checks)
        self.assertRegex(md, r"\| the hardened library on the unchanged programs [^|]*\| n/a \| "
                             r"n/a \| [^|]*0\.94[^|]* \| met \|")
        # over glibc's + 2 MiB: missed, and the why-missed line gives the three peaks
        shutil.copy(os.path.join(FIXTURE, "programs.jsonl"), self.results)
        self.add_small_program({"sta": 10300, "glibc": 8000, "mimalloc3": 20000})
        status, _, err = self.run_report()
        self.assertEqual(status, 0, err)
        md = self.markdown()
        row = next(line for line in md.splitlines()
                   if line.startswith("| program python3 -c pass (small): "))
        self.assertTrue(row.endswith("| **missed** |"))
        why = next(line for line in md.splitlines()
                   if line.startswith("- *program python3 -c pass (small)*"))
        self.assertIn("10.1 MiB (glibc malloc 7.81 MiB); peak RSS: libsta_malloc.so "
                      "(LD_PRELOAD) 10.1 MiB, mimalloc 3.4.3 (LD_PRELOAD) 19.5 MiB, glibc "
                      "malloc 7.81 MiB.", why)

    # The section shows libsta_malloc.so with its checks on against the checks off, and
    # the targets table the release checks' target with its rule.
    def test_release_checks_are_shown_against_checks_off(self):
        status, _, err = self.run_report()
        self.assertEqual(status, 0, err)
        md = self.markdown()
        self.assertIn("### Release checks on and off (issue 27)", md)
        self.assertIn("that median ≥ 0.97 for every program", md)
        self.assertIn("| program | checks on s (min–max) | checks off s (min–max) | off / on, "
                      "round by round (median, min–max) | in allocator, on / off | ≥ 0.97 |", md)
        # xmllint: off / on = 0.98, 1.00, 0.97, 0.99, 1.01 round by round
        self.assertIn("| xmllint --repeat --noout iso_639-3.xml | 2.033 (1.444–2.267) | "
                      "2.054 (1.416–2.229) | 0.99× (0.97–1.01) | – / – | met |", md)
        self.assertIn("| lua5.4 binary_trees.lua 15 (GC-heavy) | 0.875 (0.818–1.021) | "
                      "0.856 (0.826–1.021) | 0.99× (0.97–1.01) | 15.3 % / 14.7 % | met |", md)
        self.assertIn("| xmllint --repeat --noout iso_639-3.xml | libsta_malloc.so (checks off) "
                      "| 2.054 | 1.416–2.229 | 5 |", md)  # in the table of every allocator
        target_row = next(line for line in md.splitlines()
                          if line.startswith("| release checks within the noise (issue 27; "))
        self.assertIn("the median of the rounds): lua5.4 binary_trees.lua 15 (GC-heavy) ≥0.97× "
                      "checks off, ", target_row)
        self.assertIn("| n/a | n/a | lua5.4 binary_trees.lua 15 (GC-heavy) 0.99× vs "
                      "libsta_malloc.so (checks off), ", target_row)
        self.assertTrue(target_row.endswith("| met |"))

    # Checks on much slower than checks off (0.8x round by round on xmllint) misses the
    # target, and the why-missed line names the program and its figures.
    def test_release_checks_much_slower_miss_the_target(self):
        path = os.path.join(self.results, "programs.jsonl")
        with open(path) as f:
            rows = [json.loads(line) for line in f]
        xml = "xmllint --repeat --noout iso_639-3.xml"
        on = next(r for r in rows if r["program"] == xml and r["allocator"] == "sta")
        off = next(r for r in rows if r["program"] == xml and r["allocator"] == "sta-unchecked")
        off["walls"] = [round(0.8 * w, 4) for w in on["walls"]]
        off.update(seconds=sorted(off["walls"])[2], min=min(off["walls"]), max=max(off["walls"]))
        with open(path, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
        status, _, err = self.run_report()
        self.assertEqual(status, 0, err)
        md = self.markdown()
        target_row = next(line for line in md.splitlines()
                          if line.startswith("| release checks within the noise (issue 27; "))
        self.assertIn(f"{xml} 0.80× vs libsta_malloc.so (checks off)", target_row)
        self.assertTrue(target_row.endswith("| **missed** |"))
        self.assertIn("| xmllint --repeat --noout iso_639-3.xml | 2.033 (1.444–2.267) | "
                      "1.627 (1.156–1.813) | 0.80× (0.80–0.80) | – / – | **missed** |", md)
        why = next(line for line in md.splitlines()
                   if line.startswith("- *release checks within the noise (issue 27; "))
        self.assertIn(f"{xml}: libsta_malloc.so (LD_PRELOAD) 2.033 s (1.444–2.267), "
                      "libsta_malloc.so (checks off) 1.627 s (1.156–1.813); round by round "
                      "checks off / on = 0.80× (0.80–0.80)", why)
        self.assertNotIn("lua5.4", why)  # met there

    # A programs.jsonl from before issue 27 (no sta-unchecked rows) is reported, not an
    # error: the section says the checks off were not measured and the target is missed.
    def test_without_checks_off_rows_it_is_said_and_missed(self):
        self.remove_lines("programs.jsonl", '"allocator": "sta-unchecked"')
        status, _, err = self.run_report()
        self.assertEqual(status, 0, err)
        md = self.markdown()
        self.assertIn("### Release checks on and off (issue 27)\n\n**Not measured**: "
                      "programs.jsonl has no `sta-unchecked` rows", md)
        self.assertNotIn("| program | checks on s (min–max) |", md)
        target_row = next(line for line in md.splitlines()
                          if line.startswith("| release checks within the noise (issue 27; "))
        self.assertIn("lua5.4 binary_trees.lua 15 (GC-heavy) n/a vs checks off", target_row)
        self.assertTrue(target_row.endswith("| **missed** |"))
        self.assertIn("xmllint --repeat --noout iso_639-3.xml: not measured (programs.jsonl has "
                      "no sta-unchecked row)", md)
        # one program without them: said in the section, missed in the target
        shutil.copy(os.path.join(FIXTURE, "programs.jsonl"), self.results)
        self.remove_lines("programs.jsonl", '"program": "python3 dicts.py", "allocator": '
                          '"sta-unchecked"')
        status, _, err = self.run_report()
        self.assertEqual(status, 0, err)
        md = self.markdown()
        self.assertIn("No checks-off rows for python3 dicts.py: not measured there", md)
        self.assertIn("| python3 dicts.py | 0.727 (0.660–0.929) | n/a | n/a | – / – | n/a |", md)
        why = next(line for line in md.splitlines()
                   if line.startswith("- *release checks within the noise (issue 27; "))
        self.assertIn("python3 dicts.py: not measured (programs.jsonl has no sta-unchecked "
                      "row).", why)

    def test_a_share_outside_its_runs_is_an_error(self):
        self.replace_in("programs.jsonl", '"alloc_share": 0.153,', '"alloc_share": 0.5,')
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("a malformed program line", err)

    def test_missing_program_peer_is_an_error(self):
        self.remove_lines("programs.jsonl", '"program": "sqlite3 :memory: < generate.sql", '
                          '"allocator": "jemalloc"')
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("program sqlite3 :memory: < generate.sql (programs.jsonl): no rows of "
                      "jemalloc", err)
        self.remove_lines("programs.jsonl", '"allocator": "sta"')
        status, _, err = self.run_report()
        self.assertIn("no rows of sta-malloc", err)

    def test_malformed_program_line_is_an_error(self):
        with open(os.path.join(self.results, "programs.jsonl"), "a") as f:
            f.write('{"program": "x", "allocator": "glibc", "seconds": 1.0, "min": 1.2, '
                    '"max": 1.3, "cpu_seconds": 1.0, "maxrss_kib": 1, "runs": 3, '
                    '"threads": false, "walls": [1.2, 1.0, 1.3]}\n')
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("programs.jsonl: not a program result", err)

    def test_missing_preload_peer_is_an_error(self):
        os.remove(os.path.join(self.results, "scenario-jemalloc.r1.json"))
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("scenario-jemalloc.r1.json: missing", err)

    def test_scenarios_take_the_median_of_their_rounds(self):
        """Three rounds of the in-process scenarios (900, 700 and 1200 µs for the default
        pool's gui): the figure judged is their median, and the table gives their range."""
        data = report.load(self.results, SKIPS)
        self.assertEqual(data.scenario_runs[("sta-spans-branch", "gui")], [900, 700, 1200])
        self.assertAlmostEqual(data.scenarios[("sta-spans-branch", "gui")], 900)
        self.assertEqual(len(data.scenario_runs[("jemalloc", "gui")]), 1)
        status, _, err = self.run_report()
        self.assertEqual(status, 0, err)
        table = self.markdown().split("## Scenarios")[1]
        row = next(line for line in table.splitlines() if line.startswith("| sta spans (inline"))
        self.assertIn("| 900 (700–1200) |", row)

    def test_missing_peer_rows_are_an_error(self):
        path = os.path.join(self.results, "cold.jsonl")
        with open(path) as f:
            lines = [line for line in f if '"jemalloc"' not in line]
        with open(path, "w") as f:
            f.writelines(lines)
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("cold start (cold.jsonl): no rows of jemalloc", err)

    def test_failed_benchmark_is_an_error(self):
        path = os.path.join(self.results, "extra-demo_benchmark.json")
        with open(path) as f:
            doc = json.load(f)
        doc["benchmarks"][0].update(error_occurred=True, error_message="peer not available")
        with open(path, "w") as f:
            json.dump(doc, f)
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("peer not available", err)

    def test_malformed_line_is_an_error(self):
        with open(os.path.join(self.results, "scale.jsonl"), "a") as f:
            f.write('{"kind": "scale", "allocator": "malloc", \n')
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("scale.jsonl:", err)

    def test_missing_spans_threads_is_an_error(self):
        path = os.path.join(self.results, "get.json")
        with open(path) as f:
            doc = json.load(f)
        del doc["context"]["sta_spans_threads"]
        with open(path, "w") as f:
            json.dump(doc, f)
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("sta_spans_threads", err)

    def test_missing_wine_rows_are_an_error(self):
        self.remove_lines("wine.jsonl", '"allocator": "HeapAlloc", "compiler": "clang 14"')
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("wine, clang 14 (wine.jsonl): no rows of HeapAlloc get/fresh/rt/32, "
                      "HeapAlloc get/pure_get/rt/32, HeapAlloc get/balanced/rt/32", err)
        self.remove_lines("wine.jsonl", '"compiler": "g++ 12"')
        status, _, err = self.run_report()
        self.assertIn("wine (wine.jsonl): no results of g++", err)

    def test_wine_skipped(self):
        os.remove(os.path.join(self.results, "wine.jsonl"))
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("wine.jsonl", err)
        status, _, err = self.run_report("--skip", "wine=wine is not installed")
        self.assertEqual(status, 0, err)
        self.assertIn("Skipped: wine is not installed.", self.markdown())
        self.assertNotIn("wine, g++ 12", self.markdown())

    def test_missing_seed_rows_are_an_error(self):
        self.remove_lines("threads.jsonl", '"allocator": "sta-spans-seed", "workload": "churn32"')
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("threads churn32 at 1 (threads.jsonl): no rows of sta-spans-seed", err)
        for round_number in (1, 2, 3):
            path = os.path.join(self.results, f"scenario.r{round_number}.json")
            with open(path) as f:
                doc = json.load(f)
            doc["benchmarks"] = [b for b in doc["benchmarks"]
                                 if "sta-spans-seed" not in b["name"]]
            with open(path, "w") as f:
                json.dump(doc, f)
        status, _, err = self.run_report()
        self.assertIn("scenarios (scenario.rN.json, scenario-PEER.rN.json): no rows of "
                      "sta-spans-seed", err)

    def test_missing_thread_peer_is_an_error(self):
        self.remove_lines("threads.jsonl", '"allocator": "jemalloc", "workload": "prodcons", '
                          '"threads": 2')
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("threads prodcons at 2 (threads.jsonl): no rows of jemalloc", err)

    def test_malformed_threads_line_is_an_error(self):
        with open(os.path.join(self.results, "threads.jsonl"), "a") as f:
            f.write('{"kind": "threads", "allocator": "malloc", "workload": "churn32"}\n')
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("threads.jsonl: a malformed threads line", err)

    def test_missing_layout_is_an_error(self):
        path = os.path.join(self.results, "get.json")
        with open(path) as f:
            doc = json.load(f)
        del doc["context"]["sta_default_layout"]
        with open(path, "w") as f:
            json.dump(doc, f)
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("sta_default_layout", err)

    def remove_lines(self, name, needle):
        path = os.path.join(self.results, name)
        with open(path) as f:
            lines = [line for line in f if needle not in line]
        with open(path, "w") as f:
            f.writelines(lines)

    def replace_in(self, name, old, new):
        path = os.path.join(self.results, name)
        with open(path) as f:
            text = f.read()
        self.assertIn(old, text)
        with open(path, "w") as f:
            f.write(text.replace(old, new, 1))

    def test_missing_span_rows_are_an_error(self):
        self.remove_lines("scale.jsonl", '"sta-spans-table"')
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("scale (scale.jsonl): no rows of sta-spans-table", err)

    def test_missing_wave_allocator_is_an_error(self):
        self.remove_lines("waves.jsonl", '"workload": "tree", "allocator": "sta-spans"')
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("waves tree (waves.jsonl): no rows of sta-spans", err)

    def test_short_wave_process_is_an_error(self):
        self.remove_lines("waves.jsonl", '"allocator": "malloc", "wave": 10,')
        status, _, err = self.run_report()
        self.assertEqual(status, 1)
        self.assertIn("waves.jsonl", err)

    def test_each_new_section_is_required(self):
        for name in ["waves.jsonl", "traversal.jsonl", "phase.jsonl", "clients.jsonl",
                     "extra-bstr_benchmark.json", "threads.jsonl", "programs.jsonl",
                     "memory_back.jsonl"]:
            with self.subTest(name=name):
                path = os.path.join(self.results, name)
                saved = path + ".saved"
                os.rename(path, saved)
                status, _, err = self.run_report()
                os.rename(saved, path)
                self.assertEqual(status, 1)
                self.assertIn(name, err)

    def test_unknown_skip_key_is_an_error(self):
        status, _, err = self.run_report("--skip", "get=no reason")
        self.assertEqual(status, 1)
        self.assertIn("--skip", err)


if __name__ == "__main__":
    unittest.main()


class HeapMap(unittest.TestCase):
    """The heap map (issue 42): the renderer, the section and the command on a real run of
    bench/programs/run_heap_map.py (heap_map.jsonl: every allocator; heap_map_spans.json:
    its real figures and four of its 32 segments, one with plain pages)."""

    def spans(self):
        with open(os.path.join(FIXTURE, "heap_map_spans.json"), encoding="utf-8") as f:
            return json.load(f)

    def test_renders_a_cell_a_span_coloured_by_role_and_fullness(self):
        stats = self.spans()
        root = ElementTree.fromstring(heap_map_svg.render(stats, "fixture"))
        cells = [e for e in root.iter() if e.get("class") == "span"]
        self.assertEqual(len(cells), 32 * len(stats["heap"]))
        kinds = [span[0] for seg in stats["heap"] for span in seg["spans"]]
        for cell, kind in zip(cells, kinds):
            if kind == "c":
                self.assertEqual(cell.get("fill"), heap_map_svg.CLEAN)
            elif kind == "p":
                self.assertEqual((cell.get("fill"), cell.get("stroke")),
                                 (heap_map_svg.PURGED, "#999999"))
            else:
                self.assertTrue(cell.get("fill").startswith("hsl("))
        self.assertIn("c", kinds)
        self.assertIn("p", kinds)
        self.assertIn("u", kinds)
        # a full span is deeper than a sparse one of its class; classes differ in hue
        full, sparse = heap_map_svg.span_fill(["u", 64, 100, 0]), \
            heap_map_svg.span_fill(["u", 64, 100, 90])
        self.assertLess(int(full.split(",")[2].rstrip("%)")),
                        int(sparse.split(",")[2].rstrip("%)")))
        self.assertNotEqual(heap_map_svg.class_hue(16), heap_map_svg.class_hue(2048))
        self.assertIn("huge", ElementTree.tostring(root, encoding="unicode"))

    def test_statistics_without_spans_are_refused(self):
        with self.assertRaises(heap_map_svg.HeapMapError):
            heap_map_svg.render({"bytes": {"in_use": 1}})
        with self.assertRaises(heap_map_svg.HeapMapError):
            heap_map_svg.render({"heap": [{"pool": 0, "spans": [["c"]] * 31}]})

    def test_the_section_shows_the_map_beside_every_allocator(self):
        data = core.Results(SKIPS)
        heap_map.load(data, FIXTURE)
        self.assertEqual(heap_map.complete(data), [])
        self.assertEqual(data.heap_map[core.STA_MALLOC_ROW]["rss_kib"], 69876)
        text = "\n".join(heap_map.render(data))
        self.assertIn(f"]({heap_map.SVG_NAME})", text)
        # resident MiB, and over the least of the allocators shown (glibc's here)
        self.assertIn("| glibc malloc | 52.5 | 52.1 | 1.00× | 37.4 | 11.4 | 48.9 |", text)
        self.assertIn(f"| {core.pretty(core.STA_MALLOC_ROW)} | 68.2 | 67.9 | 1.30× | 38.5 |",
                      text)
        self.assertTrue(heap_map.svg(data).startswith("<svg"))

    def test_a_spans_file_without_the_heap_fails_the_section(self):
        with tempfile.TemporaryDirectory() as folder:
            shutil.copy(os.path.join(FIXTURE, "heap_map.jsonl"), folder)
            with open(os.path.join(folder, "heap_map_spans.json"), "w") as f:
                json.dump({"bytes": {}}, f)
            with self.assertRaises(core.ReportError):
                heap_map.load(core.Results(SKIPS), folder)

    def test_the_command_writes_the_picture(self):
        script = os.path.join(HERE, "..", "..", "scripts", "heap_map.py")
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "map.svg")
            ok = subprocess.run([sys.executable, "-B", script,
                                 os.path.join(FIXTURE, "heap_map_spans.json"), "-o", out],
                                capture_output=True, text=True, check=False)
            self.assertEqual(ok.returncode, 0, ok.stderr)
            ElementTree.parse(out)
            bad = subprocess.run([sys.executable, "-B", script,
                                  os.path.join(FIXTURE, "heap_map.jsonl")],
                                 capture_output=True, text=True, check=False)
            self.assertEqual(bad.returncode, 1)
            self.assertIn("heap_map.py:", bad.stderr)

