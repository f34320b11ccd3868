#!/bin/sh
# Only `make deps` installs system packages (bench/'s own `deps` target
# installs the peers it measures against): every other target whose tool is
# missing says so and fails. .ci/run installs through `make deps` too, so the
# list of packages lives in one place (apt-get there installs make alone).
set -u
fail=0
# apt-get in a recipe line of any target but deps (comments aside).
for mk in Makefile Tests/fuzz/Makefile Examples/Makefile; do
    found=$(awk '
        /^[^\t#][^:=]*:([^=]|$)/ { target = $0; sub(/:.*/, "", target) }
        /^\t/ && /apt-get|APT_GET/ && target != "deps" { print FILENAME ":" FNR ": (" target ") " $0 }
    ' "$mk")
    [ -z "$found" ] || { printf '%s\n' "$found"; echo "FAIL: a target of $mk besides deps installs packages"; fail=1; }
done
grep -q '^deps:' Makefile || { echo "FAIL: the Makefile has no deps target"; fail=1; }
grep -q '^make deps$' .ci/run || { echo "FAIL: .ci/run does not install through make deps"; fail=1; }
extra=$(grep 'apt-get install' .ci/run | grep -v 'apt-get install -y -qq make$')
[ -z "$extra" ] || { echo "FAIL: .ci/run installs packages itself: $extra"; fail=1; }
# make deps with everything installed installs nothing (APT_GET=false would fail).
out=$(${MAKE:-make} --no-print-directory deps DEPS_DEBIAN=dpkg APT_GET=false 2>&1) ||
    { echo "FAIL: make deps with its packages installed: $out"; fail=1; }
# A missing valgrind: a clear message and a failure, before building anything.
out=$(${MAKE:-make} --no-print-directory test-valgrind VALGRIND=/nonexistent/valgrind 2>&1); rc=$?
if [ "$rc" -eq 0 ] || ! printf '%s' "$out" | grep -q 'valgrind.*not found'; then
    echo "FAIL: make test-valgrind without valgrind: exit $rc, said:"; printf '%s\n' "$out" | tail -5; fail=1
fi
[ "$fail" -eq 0 ] && echo "ok: only make deps runs apt-get (.ci/run uses it); a missing valgrind is reported"
exit "$fail"
