#!/usr/bin/env bash
# The main job. Until the benchmark report lands (issue 3), it builds Release and
# runs the GUI-scene example: sta containers against std containers on glibc.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target gui_scene
build/release/examples/gui_scene "$@"
