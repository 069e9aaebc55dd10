#!/usr/bin/env bash
# The shared library of a general-purpose allocator peer, for LD_PRELOAD.
#
#   scripts/peer_library.sh mimalloc|jemalloc|tcmalloc
#
# Prints the path of the peer's 64-bit library (x86-64 entry of the ldconfig cache) and
# exits 0; exits 1 with a message on stderr when the cache has no such library.
# ldconfig's whole output is read before it is searched: a reader that stops at the
# first match would close the pipe early, ldconfig would die of SIGPIPE, and a caller
# under `set -o pipefail` would fail without a word once the cache outgrows a pipe
# buffer (64 KiB).
set -euo pipefail
case "${1:-}" in
    mimalloc) soname=libmimalloc.so.2 package=libmimalloc-dev ;;
    jemalloc) soname=libjemalloc.so.2 package=libjemalloc-dev ;;
    tcmalloc) soname=libtcmalloc.so.4 package=libgoogle-perftools-dev ;;
    *) echo "usage: $0 mimalloc|jemalloc|tcmalloc" >&2; exit 2 ;;
esac
cache="$(ldconfig -p)"
path="$(awk -v so="$soname" '$1 == so && /x86-64/ && path == "" { path = $NF } END { print path }' \
    <<<"$cache")"
if [[ -z "$path" || ! -e "$path" ]]; then
    echo "$soname is not in the ldconfig cache (Debian package $package)" >&2
    exit 1
fi
echo "$path"
