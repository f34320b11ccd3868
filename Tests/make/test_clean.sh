#!/bin/sh
# `make clean` removes every build output: what `make`, `make test`,
# `make examples`, `make fuzz`, `make bench` and the bench's Foundation bridge
# leave behind (each is listed in .gitignore). Checked on a copy of the
# Makefiles, so the real build is untouched.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for mk in Makefile Tests/fuzz/Makefile Examples/Makefile bench/Makefile; do
    mkdir -p "$tmp/$(dirname "$mk")" && cp "$mk" "$tmp/$mk"
done
outputs="build .build .build-tsan Examples/build Examples/swift/.build bench/build bench/bridge/.build"
for d in $outputs; do mkdir -p "$tmp/$d" && touch "$tmp/$d/output"; done
${MAKE:-make} --no-print-directory -C "$tmp" clean >"$tmp.log" 2>&1 || { cat "$tmp.log"; rm -f "$tmp.log"; exit 1; }
rm -f "$tmp.log"
left=$(cd "$tmp" && find . -name output | sed 's|^\./||; s|/output$||')
[ -z "$left" ] || { echo "FAIL: make clean left:" $left; exit 1; }
for d in $outputs; do
    git check-ignore -q "$d/output" || { echo "FAIL: $d is not in .gitignore"; exit 1; }
done
echo "ok: make clean removes $outputs"
