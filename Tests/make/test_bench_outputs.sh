#!/bin/sh
# `make bench` and `make bench-quick` write under bench/build/ only, so a
# checkout stays clean, and `make bench-publish` copies the last full run into
# the committed files: checked on a copy of bench/run.py and
# bench/scripts/publish.py, re-rendering a saved run (run.py --render runs no
# workload). Then the committed README table is what bench/results.csv gives.
set -u
tmp=$(mktemp -d)
logs=$(mktemp -d)
trap 'rm -rf "$tmp" "$logs"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
mkdir -p "$tmp/bench/build" "$tmp/bench/scripts"
cp bench/run.py "$tmp/bench/" && cp bench/scripts/publish.py "$tmp/bench/scripts/" && cp README.md "$tmp/" || exit 1
printf '#!/bin/sh\nexit 1\n' > "$tmp/bench/build/bench_core" && chmod +x "$tmp/bench/build/bench_core"
cat > "$tmp/bench/build/raw.json" <<'JSON'
{"runs": 1, "raw": [[["core", "w1", 100000], [{"rt_per_s": 4321000.0, "cpu_us_per_rt": 1.5}]],
                    [["core", "w2", 10000], [{"add_ns": 150.0}]], [["core", "w2", 100000], [{"add_ns": 140.0}]]],
 "failed": [], "strace": {}}
JSON
snapshot() { (cd "$tmp" && find . -path ./bench/build -prune -o -type f -print | sort | xargs md5sum); }
before=$(snapshot)
for mode in --quick --full; do
    (cd "$tmp/bench" && PATH=/usr/bin:/bin python3 run.py $mode --render build/raw.json) >"$logs/run$mode.log" 2>&1 ||
        { bad "run.py $mode --render failed:"; tail -5 "$logs/run$mode.log"; }
done
after=$(snapshot)
[ "$after" = "$before" ] || bad "run.py wrote outside bench/build: $(printf '%s\n' "$after" | grep -vxF "$before")"
for f in quick-results.md results.md results.csv w2.svg w9.svg; do
    [ -s "$tmp/bench/build/$f" ] || bad "run.py did not write bench/build/$f"
done
grep -qs 'below target\|met\|n/a' "$tmp/bench/build/results.md" || bad "results.md has no targets"
grep -qs '\*\*missed\*\*' "$tmp/bench/build/results.md" && bad "results.md still calls an unmet target missed"

out=$(cd "$tmp" && python3 bench/scripts/publish.py 2>&1) || bad "publish failed: $out"
for f in results.md results.csv w2.svg w9.svg; do
    cmp -s "$tmp/bench/build/$f" "$tmp/bench/$f" || bad "publish did not copy bench/build/$f into bench/"
done
[ ! -e "$tmp/bench/quick-w2.svg" ] || bad "publish copied a quick run's chart"
grep -q '^| W1 cross-thread wake-up round trips/s ↑ | 4.32M |' "$tmp/README.md" ||
    bad "publish did not write the run's W1 into README's table: $(grep '^| W1 cross' "$tmp/README.md")"
out=$(cd "$tmp" && python3 bench/scripts/publish.py --check 2>&1) || bad "README's table after publish: $out"

out=$(python3 bench/scripts/publish.py --check 2>&1) || bad "$out"
[ "$fail" -eq 0 ] && echo "ok: bench runs write bench/build only; bench-publish copies a run into bench/ and README;" \
    "README's table is bench/results.csv's"
exit "$fail"
