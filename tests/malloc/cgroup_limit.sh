#!/bin/sh
# cgroup_limit.sh LIBRARY PROGRAM
# The drop-in's default memory limit follows the control group (os/memory_account.hpp,
# os_cgroup_memory_room): in a group of its own with an 80 MiB limit, PROGRAM (memory_limit)
# preloading LIBRARY must see malloc refuse 1 MiB blocks with NULL and ENOMEM after 48 to
# 80 MiB and live on, where the same run with the limit off (STA_MALLOC_LIMIT_MIB=0) must
# be killed by the kernel (which shows the group's limit is real). Makes the group under
# cgroup v2 (/sys/fs/cgroup, with the memory controller) or v1 (/sys/fs/cgroup/memory);
# exits 77 (ctest: skipped, with the reason printed) where neither can be made: it needs
# root and a writable hierarchy.
set -u
lib=$1 program=$2
limit=$((80 << 20))
group=""
if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null &&
    mkdir "/sys/fs/cgroup/sta_limit_test.$$" 2>/dev/null; then
    group=/sys/fs/cgroup/sta_limit_test.$$
    echo "$limit" >"$group/memory.max" && echo 0 >"$group/memory.swap.max" 2>/dev/null
elif [ -d /sys/fs/cgroup/memory ] && mkdir "/sys/fs/cgroup/memory/sta_limit_test.$$" 2>/dev/null; then
    group=/sys/fs/cgroup/memory/sta_limit_test.$$
    echo "$limit" >"$group/memory.limit_in_bytes"
fi
if [ -z "$group" ]; then
    echo "skipped: no control group can be made here (needs root and a writable cgroup v2 memory or v1 memory hierarchy)"
    exit 77
fi
trap 'rmdir "$group" 2>/dev/null' EXIT
echo "group: $group, limit $limit bytes"
run() { # VAR=VALUE...: the program in the group, its exit status
    sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec env "$@"' sh "$group" \
        LD_PRELOAD="$lib" "$@" "$program" big 48 80
}
run
rc=$?
if [ $rc -ne 0 ]; then
    echo "FAIL: with the group's limit: exit $rc (137: killed by the kernel)"
    exit 1
fi
run STA_MALLOC_LIMIT_MIB=0 >/dev/null 2>&1
rc=$?
if [ $rc -eq 0 ]; then
    echo "FAIL: without the limit the program was not stopped: the group's limit is not enforced here"
    exit 1
fi
echo "ok: refused within the group's limit; without it the program ended with exit $rc"
