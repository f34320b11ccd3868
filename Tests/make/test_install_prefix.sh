#!/bin/sh
# `make install PREFIX=B` after `make install PREFIX=A` installs pkg-config
# files that point at B: the .pc files depend on the prefix they name, not
# only on the Makefile.
set -u
MAKE=${MAKE:-make}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for p in "$tmp/a" "$tmp/b"; do
    if ! $MAKE --no-print-directory PREFIX="$p" install >"$tmp/log" 2>&1; then
        echo "make install PREFIX=$p failed:"; tail -20 "$tmp/log"; exit 1
    fi
    for pc in "$p"/lib/pkgconfig/*.pc; do
        if ! grep -qx "prefix=$p" "$pc"; then
            echo "FAIL: $pc, installed with PREFIX=$p, says $(grep '^prefix=' "$pc")"; fail=1
        fi
    done
done
[ -f "$tmp/b/lib/pkgconfig/crunloop.pc" ] || { echo "FAIL: no crunloop.pc installed"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: each install's .pc files name its own prefix"
exit "$fail"
