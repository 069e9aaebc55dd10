#!/bin/sh
# probes.sh LIBRARY
# The USDT probes of os/probes.hpp are in LIBRARY: `readelf -n` lists each under the
# provider "sta" (a build without <sys/sdt.h> has none, and fails here: CI installs
# systemtap-sdt-dev).
set -u
lib=$1
notes=$(readelf -n "$lib") || { echo "FAIL: readelf -n $lib"; exit 1; }
missing=""
for probe in segment_mapped segment_unmapped span_purged refill free_refused limit_reached; do
    printf '%s\n' "$notes" | grep -A1 "Provider: sta$" | grep -q "Name: $probe$" ||
        missing="$missing $probe"
done
if [ -n "$missing" ]; then
    echo "FAIL: probes missing from $lib:$missing"
    exit 1
fi
echo "ok: $(printf '%s\n' "$notes" | grep -c 'Provider: sta$') probe sites, every probe named"
