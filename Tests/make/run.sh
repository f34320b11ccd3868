#!/bin/sh
# Runs the build's own checks (Tests/make/test_*.sh) and prints the totals as
# "N passed, N failed, N skipped". Each check is a shell script that exits 0
# when it holds and prints why when it does not; one whose tool is missing
# (cmake) exits 77, after a line saying what it could not check and how to get
# the tool. Usage: run.sh [test_x.sh ...]
cd "$(dirname "$0")/../.." || exit 1
[ $# -gt 0 ] || set -- Tests/make/test_*.sh
passed=0; failed=0; skipped=0; broken=""; missed=""
for t in "$@"; do
    echo "== $t"
    sh "$t"
    case $? in
        0) passed=$((passed + 1)) ;;
        77) skipped=$((skipped + 1)); missed="$missed $t" ;;
        *) failed=$((failed + 1)); broken="$broken $t" ;;
    esac
done
echo "$passed passed, $failed failed, $skipped skipped"
[ -z "$missed" ] || echo "skipped (a tool is missing: sudo make deps):$missed"
[ -z "$broken" ] || { echo "failing:$broken"; exit 1; }
