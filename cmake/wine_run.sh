#!/bin/sh
# Runs a Windows program under wine (the cross builds' CMAKE_CROSSCOMPILING_EMULATOR).
# ctest starts tests in parallel, and two wine processes that both find no prefix
# both create it and one fails ("wine: chdir to /tmp/wine-…/server-…: No such file
# or directory"). So the prefix is made once, under a lock, before any program runs.
set -eu
prefix=${WINEPREFIX:-$HOME/.wine}
ready="$prefix/.sta_prefix_ready"
if [ ! -f "$ready" ]; then
    mkdir -p "$(dirname "$prefix")"
    flock "$prefix.lock" sh -c '[ -f "$2" ] || { wineboot --init >/dev/null 2>&1 && touch "$2"; }' _ "$prefix" "$ready"
fi
exec wine "$@"
