#!/bin/sh
# No make target installs system packages: .ci/run installs what the tests
# need, and a target whose tool is missing says so and fails. (bench/'s
# `deps` target is the exception: it installs the peers it measures against.)
set -u
fail=0
for mk in Makefile Tests/fuzz/Makefile Examples/Makefile; do
    if grep -n 'apt-get' "$mk" | grep -v '^[0-9]*:#'; then
        echo "FAIL: $mk runs apt-get (above)"; fail=1
    fi
done
[ "$fail" -eq 0 ] || exit 1
# A missing valgrind: a clear message and a failure, before building anything.
out=$(${MAKE:-make} --no-print-directory test-valgrind VALGRIND=/nonexistent/valgrind 2>&1); rc=$?
if [ "$rc" -eq 0 ] || ! printf '%s' "$out" | grep -q 'valgrind.*not found'; then
    echo "FAIL: make test-valgrind without valgrind: exit $rc, said:"; printf '%s\n' "$out" | tail -5; fail=1
fi
[ "$fail" -eq 0 ] && echo "ok: no make target runs apt-get; a missing valgrind is reported"
exit "$fail"
