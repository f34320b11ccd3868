#!/bin/sh
# The C API reference (docs/c_api_reference.py, made by `make docs`) covers
# the public API: every function the headers declare has a comment, and
# every function the shared libraries export is declared in a header. The
# callout frames (RL_IS_CALLING_OUT_TO_*, RL_IS_SERVICING_*) are exported
# for backtraces only, not to be called.
set -u
BUILD=${BUILD:-build}
${MAKE:-make} --no-print-directory lib >/dev/null 2>&1 || { echo "FAIL: make lib failed"; exit 1; }
headers="Sources/CRunLoop/include/*.h"
libs="$BUILD/libcrunloop.so"
if [ -f "$BUILD/libcrunloop-glib.so" ]; then
    headers="$headers Sources/CRunLoopGLib/include/*.h"
    libs="$libs $BUILD/libcrunloop-glib.so"
fi
exported=$(mktemp)
out=$(mktemp -d)
trap 'rm -rf "$exported" "$out"' EXIT
# shellcheck disable=SC2086 # lists of files
nm -D --defined-only $libs | awk '$2 == "T" || $2 == "D" || $2 == "R" { print $3 }' | grep -v '^RL_IS_' \
    | sort -u > "$exported"
[ -s "$exported" ] || { echo "FAIL: no exported names found in $libs"; exit 1; }
# shellcheck disable=SC2086
python3 docs/c_api_reference.py --check --exported "$exported" --out "$out" $headers || exit 1
for page in index.html index.md CRunLoopCore.h.html CRunLoopCore.h.md CRunLoopCFNames.h.html; do
    [ -s "$out/$page" ] || { echo "FAIL: the reference has no $page"; exit 1; }
done
echo "ok: the C API reference documents every function of the headers, and the headers every exported name"
