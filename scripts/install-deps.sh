#!/usr/bin/env bash
# Install what building and testing sta-pool needs, from Debian 12's packages.
#   scripts/install-deps.sh          the toolchain and test dependencies
#   scripts/install-deps.sh --bench  also the peers the benchmark report measures
set -euo pipefail
packages=(cmake make g++ clang libclang-rt-14-dev googletest libgtest-dev libbenchmark-dev
          valgrind python3
          libexpat1-dev shared-mime-info iso-codes # the XML DOM test: Expat and real files
          liblua5.4-dev lua-dkjson libsqlite3-dev libxml2-dev # tests/clients (issue 8)
          lua5.4 sqlite3 libxml2-utils pigz pkgconf # tests/malloc: unchanged programs (issue 16)
          g++-mingw-w64-x86-64-posix wine # the Windows build, tested under wine
          lld # the windows-clang build links with lld
          systemtap-sdt-dev) # <sys/sdt.h>: the drop-in's USDT probes (os/probes.hpp)
if [[ "${1:-}" == "--bench" ]]; then
    packages+=(libmimalloc-dev libjemalloc-dev libgoogle-perftools-dev libboost-dev
               libfoonathan-memory-dev hyperfine
               time      # GNU time: the peak RSS of bench/programs/run_programs.sh (issue 16)
               linux-perf  # perf record: its share of samples in the allocator
               qt6-base-dev) # Qt 6 Widgets: a real toolkit's scene (bench/programs/qt_scene.cpp)
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
    echo "installing: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
