#!/bin/sh
# Compiles each case of cf_names_errors.c that must fail, and checks that it
# fails with the message that explains it, in C with $CC (no blocks) and, for
# a C string given as an object, in C++ with $CXX.
# Usage: cf_names_errors.sh INCLUDE_DIR
set -u
inc=$1
src="$(dirname "$0")/cf_names_errors.c"
status=0
expect() { # compiler-and-flags case message
    out=$($1 -DCASE=$2 -I"$inc" -fsyntax-only "$src" 2>&1) && {
        echo "cf_names_errors: case $2 compiled with $1, but must not"; status=1; return; }
    printf '%s\n' "$out" | grep -q "$3" || {
        echo "cf_names_errors: case $2 with $1 failed without saying \"$3\":"; printf '%s\n' "$out"; status=1; }
}
CC=${CC:-cc}
CXX=${CXX:-c++}
# The blocks variants are refused only where there are no blocks (gcc).
if ! $CC -dM -E -x c /dev/null | grep -q __BLOCKS__; then
    expect "$CC -std=c11" 1 "CFRunLoopPerformBlock needs blocks"
    expect "$CC -std=c11" 2 "CFRunLoopTimerCreateWithHandler needs blocks"
    expect "$CC -std=c11" 3 "CFRunLoopObserverCreateWithHandler needs blocks"
fi
expect "$CC -std=c11" 4 "a_C_string_is_not_a_CF_object"
expect "$CC -std=c11" 5 "a_C_string_is_not_a_CF_object"
expect "$CXX -x c++ -std=c++11" 4 "delete"
expect "$CXX -x c++ -std=c++11" 5 "delete"
[ $status -eq 0 ] && echo "cf_names_errors: every case refused, saying why"
exit $status
