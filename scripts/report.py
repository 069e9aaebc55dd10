#!/usr/bin/env python3
"""Turn the raw results of scripts/report.sh into the benchmark report.

    scripts/report.py RESULTS_DIR [--docs DIR] [--skip KEY=REASON]...

Reads RESULTS_DIR (Google Benchmark JSON, JSON lines, the callgrind CSV, the Markdown of
the client programs and of the wine run), prints the main Markdown table and the targets
to stdout, and writes DIR/benchmarks.md and DIR/benchmarks.svg.

Every section's input must be there and well formed, or the report fails with the reason
(exit status 1). A section may be left out only by `--skip KEY=REASON`, and the report
then says so under that section's heading. KEY is `preload:PEER` for an LD_PRELOAD peer,
a section's SKIP (report.SKIPPABLE), or `package:NAME` for a peer package that is not
installed.

The report is the package scripts/report/ (`import report` below: on the path, a package
comes before a module of the same name); one section of it is one module of
scripts/report/sections/.
"""
import sys

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
import report  # noqa: E402

if __name__ == "__main__":
    sys.exit(report.main())
