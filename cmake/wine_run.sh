#!/bin/sh
# Runs a Windows program under wine (the cross builds' CMAKE_CROSSCOMPILING_EMULATOR,
# and scripts/report.sh's Windows benchmarks).
# - ctest starts tests in parallel, and two wine processes that both find no prefix
#   both create it and one fails ("wine: chdir to /tmp/wine-…/server-…: No such file
#   or directory"). So the prefix is made once, under a lock, before any program runs.
# - The wineserver that wine starts exits 3 s after its last client, and a program that
#   starts in that moment fails with "wine client error:…: Connection reset by peer"
#   before it runs a line of its own. Such a run is made once more. (A server kept
#   alive with `wineserver -p60` avoids the race but keeps wine's services, which hold
#   ctest's output pipe, alive for the 60 s: every test then lasted a minute.)
set -eu
prefix=${WINEPREFIX:-$HOME/.wine}
ready="$prefix/.sta_prefix_ready"
if [ ! -f "$ready" ]; then
    mkdir -p "$prefix"
    flock "$prefix.lock" sh -c '[ -f "$2" ] || { wineboot --init >/dev/null 2>&1 && touch "$2"; }' _ "$prefix" "$ready"
fi
err=$(mktemp)
trap 'rm -f "$err"' EXIT
for attempt in 1 2; do
    rc=0
    wine "$@" 2>"$err" || rc=$?
    if [ "$rc" -ne 0 ] && [ "$attempt" -eq 1 ] && grep -q 'wine client error' "$err"; then
        continue
    fi
    cat "$err" >&2
    exit "$rc"
done
