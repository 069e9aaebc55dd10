#!/bin/sh
# Runs a Windows program under wine (the cross builds' CMAKE_CROSSCOMPILING_EMULATOR,
# and scripts/report.sh's Windows benchmarks).
# - ctest starts tests in parallel, and two wine processes that both find no prefix
#   both create it and one fails ("wine: chdir to /tmp/wine-…/server-…: No such file
#   or directory"). So the prefix is made once, under a lock, before any program runs.
# - A wineserver that wine starts itself exits 3 s after its last client, and a program
#   that starts in that moment fails with "wine client error:0: recvmsg: Connection
#   reset by peer". So every run first starts one that stays 60 s after its last client
#   (`wineserver -p60`; it exits with 2 at once when one already serves the prefix).
set -eu
prefix=${WINEPREFIX:-$HOME/.wine}
ready="$prefix/.sta_prefix_ready"
if [ ! -f "$ready" ]; then
    mkdir -p "$prefix"
    flock "$prefix.lock" sh -c '[ -f "$2" ] || { wineserver -p60 >/dev/null 2>&1; wineboot --init >/dev/null 2>&1 && touch "$2"; }' _ "$prefix" "$ready"
fi
wineserver -p60 >/dev/null 2>&1 || true
exec wine "$@"
