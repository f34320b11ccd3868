#!/bin/sh
# Runs the build's own checks (Tests/make/test_*.sh) and prints the totals as
# "N passed, N failed". Each check is a shell script that exits 0 when it
# holds and prints why when it does not. Usage: run.sh [test_x.sh ...]
cd "$(dirname "$0")/../.." || exit 1
[ $# -gt 0 ] || set -- Tests/make/test_*.sh
passed=0; failed=0; broken=""
for t in "$@"; do
    echo "== $t"
    if sh "$t"; then passed=$((passed + 1)); else failed=$((failed + 1)); broken="$broken $t"; fi
done
echo "$passed passed, $failed failed"
[ -z "$broken" ] || { echo "failing:$broken"; exit 1; }
