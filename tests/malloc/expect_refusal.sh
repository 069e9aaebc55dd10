#!/bin/sh
# expect_refusal.sh LIBRARY PROGRAM MODE PATTERN [VAR=VALUE...]
# Runs PROGRAM MODE with LD_PRELOAD=LIBRARY (and the variables given) and passes only if
# it died of SIGABRT after one line on stderr matching the extended regex PATTERN.
# PATTERN "-" expects the opposite: a normal exit 0 with "not stopped" on stdout and
# nothing on stderr (a check turned off).
set -u
lib=$1 program=$2 mode=$3 pattern=$4
shift 4
err=$(mktemp) out=$(mktemp)
trap 'rm -f "$err" "$out"' EXIT
env LD_PRELOAD="$lib" "$@" "$program" "$mode" >"$out" 2>"$err"
rc=$?
if [ "$pattern" = "-" ]; then
    if [ $rc -eq 0 ] && grep -q "not stopped" "$out" && [ ! -s "$err" ]; then
        echo "ok: $mode went on, unchecked"
        exit 0
    fi
    echo "FAIL: $mode: exit $rc, expected 0 and 'not stopped'"; cat "$out" "$err"
    exit 1
fi
# (sh adds "Aborted" for the child the signal killed; not the program's)
sed -i '/^Aborted/d' "$err"
lines=$(wc -l <"$err")
if [ $rc -eq 134 ] && [ "$lines" -eq 1 ] && grep -Eq "$pattern" "$err"; then
    echo "ok: $(cat "$err")"
    exit 0
fi
echo "FAIL: $mode: exit $rc (SIGABRT is 134), $lines line(s) on stderr, expected one matching: $pattern"
cat "$out" "$err"
exit 1
