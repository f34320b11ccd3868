#!/bin/sh
# `make format-check` fails and names each C or Swift file that `make format`
# would change; after `make format` it passes. Checked on a copy of the
# Makefile and the format configurations, with one badly laid out file each.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp Makefile .clang-format .swift-format "$tmp/" || exit 1
mkdir -p "$tmp/Sources/CRunLoop/include" "$tmp/Tests/T"
printf 'int  f(int a){\nreturn a;}\n' > "$tmp/Sources/CRunLoop/bad.c"
printf 'int g(int a) {\n    return a;\n}\n' > "$tmp/Sources/CRunLoop/good.c"
printf 'func f( ) -> Int {\n  return 1 }\n' > "$tmp/Tests/T/Bad.swift"
printf 'func g() -> Int {\n    return 1\n}\n' > "$tmp/Tests/T/Good.swift"
M="${MAKE:-make} --no-print-directory -C $tmp"
fail=0
if out=$($M format-check 2>&1); then
    echo "FAIL: format-check passed on badly laid out files"; fail=1
fi
for f in Sources/CRunLoop/bad.c Tests/T/Bad.swift; do
    printf '%s\n' "$out" | grep -q "$f" || { echo "FAIL: format-check did not name $f:"; printf '%s\n' "$out"; fail=1; }
done
for f in good.c Good.swift; do
    printf '%s\n' "$out" | grep -q "$f" && { echo "FAIL: format-check named $f, which is well laid out"; fail=1; }
done
$M format >/dev/null 2>&1 || { echo "FAIL: make format failed"; fail=1; }
out=$($M format-check 2>&1) || { echo "FAIL: format-check fails after make format:"; printf '%s\n' "$out"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: format-check names the files format would change, and passes after format"
exit "$fail"
