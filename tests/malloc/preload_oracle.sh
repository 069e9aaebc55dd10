#!/usr/bin/env bash
# An unchanged program on libsta_malloc.so, checked by an output oracle:
#
#   preload_oracle.sh LIB NAME COMMAND...
#
# runs COMMAND (through sh -c, so a pipeline is preloaded whole) once on glibc's malloc
# and once with LD_PRELOAD=LIB, in a scratch directory each, and passes only if
#   - both exit 0 and their standard outputs are byte-identical, and
#   - the preloaded run's stderr carries libsta_malloc's exit line (STA_MALLOC_STATS=1):
#     the library was loaded and served the process (more than one pool segment or
#     bytes in use), rather than being silently skipped.
# Environment for COMMAND: DATA (a scratch directory with the test's inputs), SRC (this
# directory).
set -euo pipefail
lib=$1 name=$2
shift 2
src=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/sta_preload_${name}.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/glibc" "$work/sta"
run() { # dir preload command
    local dir=$1 preload=$2 command=$3 status=0
    (cd "$work/$dir" && DATA="$work/$dir" SRC="$src" LD_PRELOAD="$preload" STA_MALLOC_STATS=1 \
        sh -c "$command" >"$work/$dir.out" 2>"$work/$dir.err") || status=$?
    if ((status != 0)); then
        echo "$name: the run on $dir failed (status $status); its stderr:" >&2
        tail -n 20 "$work/$dir.err" >&2
        exit 1
    fi
}
cmd="$*"
run glibc "" "$cmd"
run sta "$lib" "$cmd"
if ! cmp -s "$work/glibc.out" "$work/sta.out"; then
    echo "$name: the output on libsta_malloc differs from glibc's:" >&2
    diff <(head -c 20000 "$work/glibc.out") <(head -c 20000 "$work/sta.out") | head -n 20 >&2
    exit 1
fi
if ! grep -q '^sta_malloc: [0-9]* pools made' "$work/sta.err"; then
    echo "$name: libsta_malloc did not report at exit: was it preloaded?" >&2
    tail -n 20 "$work/sta.err" >&2
    exit 1
fi
if grep -q '^sta_malloc:' "$work/glibc.err"; then
    echo "$name: the glibc run reported libsta_malloc's line: the oracle is not glibc" >&2
    exit 1
fi
echo "$name: $(wc -c <"$work/sta.out") bytes of output, identical on glibc and libsta_malloc"
grep '^sta_malloc:' "$work/sta.err" # one line per process of the command
