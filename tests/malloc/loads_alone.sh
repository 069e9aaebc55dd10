#!/usr/bin/env bash
# libsta_malloc.so brings no C++ runtime into a C program:
#
#   loads_alone.sh LIB
#
# passes only if a C program (cat) run with LD_PRELOAD=LIB has LIB mapped and neither
# libstdc++ nor libgcc_s, and LIB's dynamic section needs nothing but the C library.
set -euo pipefail
lib=$(realpath "$1")
maps=$(LD_PRELOAD="$lib" cat /proc/self/maps)
if ! grep -qF "$lib" <<<"$maps"; then
    echo "loads_alone: $lib is not mapped in the preloaded cat: the preload did not happen" >&2
    exit 1
fi
if grep -E 'libstdc\+\+|libgcc_s' <<<"$maps" >&2; then
    echo "loads_alone: the preloaded cat maps a C++ runtime (above)" >&2
    exit 1
fi
needed=$(LC_ALL=C readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
if [[ "$needed" != "libc.so.6" ]]; then
    echo "loads_alone: $lib needs more than libc.so.6:" $needed >&2
    exit 1
fi
echo "loads_alone: $lib needs libc.so.6 alone and maps no C++ runtime into cat"
