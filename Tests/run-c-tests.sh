#!/bin/sh
# Runs each C test program given as an argument (under $RL_TEST_WRAPPER, e.g.
# valgrind, if set), $RL_TEST_JOBS at a time (default: two per CPU; most
# tests spend their time asleep), then prints each program's output in the
# order given and the totals as "N passed, N failed".
jobs=${RL_TEST_JOBS:-$((2 * $(nproc 2>/dev/null || echo 1)))}
out=$(mktemp -d "${TMPDIR:-/tmp}/rl-tests.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT INT TERM
i=0
for t in "$@"; do
    i=$((i + 1))
    printf '%s %s\n' "$i" "$t"
done | xargs -P "$jobs" -L 1 sh -c '$RL_TEST_WRAPPER "$2" >"$0/$1.log" 2>&1; echo $? >"$0/$1.rc"' "$out"
passed=0; failed=0; broken=""; i=0
for t in "$@"; do
    i=$((i + 1))
    echo "== $t"
    rc=$(cat "$out/$i.rc" 2>/dev/null || echo 1)
    grep -v '^ok ' "$out/$i.log"
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out/$i.log" | tail -1)
    p=$(echo "$line" | cut -d' ' -f1); f=$(echo "$line" | cut -d' ' -f3)
    [ -n "$p" ] || { p=0; f=1; }
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    passed=$((passed + p)); failed=$((failed + f))
    [ "$rc" -eq 0 ] || broken="$broken $t"
done
echo "$passed passed, $failed failed"
[ -z "$broken" ] || { echo "failing:$broken"; exit 1; }
