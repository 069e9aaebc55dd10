#!/usr/bin/env bash
# The shared library of a general-purpose allocator peer, for LD_PRELOAD.
#
#   scripts/peer_library.sh PEER       the path of PEER's library
#   scripts/peer_library.sh --list     every peer's name: Debian's, then the extra ones
#   scripts/peer_library.sh --extra    the extra peers' names
#
# Debian's peers (mimalloc, jemalloc, tcmalloc): the 64-bit library of the package (the
# x86-64 entry of the ldconfig cache). ldconfig's whole output is read before it is
# searched: a reader that stops at the first match would close the pipe early, ldconfig
# would die of SIGPIPE, and a caller under `set -o pipefail` would fail without a word
# once the cache outgrows a pipe buffer (64 KiB).
#
# The extra peers (mimalloc3, snmalloc, rpmalloc): the newest releases of the best
# peers, built apart as LD_PRELOAD libraries (not packaged by Debian 12), from the folder
# STA_EXTRA_PEERS_DIR; unset, it is shared/peers beside the repository's folder
# ($(dirname REPO)/shared/peers); empty, there are none. Its README.md says how they were
# built. A user's machine usually has no such folder: the callers leave these peers out
# and say so.
#
# PEER: prints the path and exits 0; exits 1 with the reason on stderr (one line) when
# the library is not there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd -P)"
debian=(mimalloc jemalloc tcmalloc)
extra=(mimalloc3 snmalloc rpmalloc)
case "${1:-}" in
    --list) printf '%s\n' "${debian[@]}" "${extra[@]}"; exit 0 ;;
    --extra) printf '%s\n' "${extra[@]}"; exit 0 ;;
    mimalloc) soname=libmimalloc.so.2 package=libmimalloc-dev ;;
    jemalloc) soname=libjemalloc.so.2 package=libjemalloc-dev ;;
    tcmalloc) soname=libtcmalloc.so.4 package=libgoogle-perftools-dev ;;
    mimalloc3) file=libmimalloc-v3.4.3.so ;;
    snmalloc) file=libsnmallocshim.so ;;
    rpmalloc) file=librpmalloc.so ;;
    *) echo "usage: $0 --list | --extra | $(IFS='|'; echo "${debian[*]}|${extra[*]}")" >&2
       exit 2 ;;
esac
if [[ -n "${file:-}" ]]; then
    dir="${STA_EXTRA_PEERS_DIR-$(dirname "$root")/shared/peers}"
    if [[ -z "$dir" ]]; then
        echo "$file: STA_EXTRA_PEERS_DIR is empty (no extra peers)" >&2
        exit 1
    fi
    if [[ ! -f "$dir/$file" ]]; then
        echo "$file is not present in $dir (the newest releases of the peers, built apart;" \
            "STA_EXTRA_PEERS_DIR names their folder)" >&2
        exit 1
    fi
    realpath "$dir/$file"
    exit 0
fi
cache="$(ldconfig -p)"
path="$(awk -v so="$soname" '$1 == so && /x86-64/ && path == "" { path = $NF } END { print path }' \
    <<<"$cache")"
if [[ -z "$path" || ! -e "$path" ]]; then
    echo "$soname is not in the ldconfig cache (Debian package $package)" >&2
    exit 1
fi
echo "$path"
