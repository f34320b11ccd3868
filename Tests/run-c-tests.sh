#!/bin/sh
# Runs each C test program given as an argument (under $RL_TEST_WRAPPER, e.g.
# valgrind, if set), then prints the totals as "N passed, N failed".
passed=0; failed=0; broken=""
for t in "$@"; do
    echo "== $t"
    out=$($RL_TEST_WRAPPER "$t" 2>&1); rc=$?
    printf '%s\n' "$out" | grep -v '^ok ' 
    line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)
    p=$(echo "$line" | cut -d' ' -f1); f=$(echo "$line" | cut -d' ' -f3)
    [ -n "$p" ] || { p=0; f=1; }
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    passed=$((passed + p)); failed=$((failed + f))
    [ "$rc" -eq 0 ] || broken="$broken $t"
done
echo "$passed passed, $failed failed"
[ -z "$broken" ] || { echo "failing:$broken"; exit 1; }
