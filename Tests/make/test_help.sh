#!/bin/sh
# `make help` lists every public target of the root Makefile (its .PHONY
# targets), one line each.
set -u
out=$(${MAKE:-make} --no-print-directory help 2>&1) || { echo "FAIL: make help failed:"; echo "$out"; exit 1; }
targets=$(sed -n '/^\.PHONY:/,/[^\\]$/p' Makefile | sed 's/^\.PHONY://; s/\\//g' | tr -s ' \t' '\n' | grep -v '^$')
fail=0
for t in $targets; do
    n=$(printf '%s\n' "$out" | grep -cE "^ *$t( |$)")
    [ "$n" -eq 1 ] || { echo "FAIL: make help lists '$t' $n times"; fail=1; }
done
[ "$fail" -eq 0 ] && echo "ok: make help lists each of the $(echo $targets | wc -w) public targets once"
exit "$fail"
