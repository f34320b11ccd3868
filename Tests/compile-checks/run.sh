#!/bin/sh
# Compile-time soundness checks for the Swift layer, in Swift 6 mode.
#
# racy/*.swift: programs with a data race; each must FAIL to compile with a
#   Sendable or isolation diagnostic (not any error: a typo would pass).
# ok/*.swift: the correct versions (Mutex, Atomic, actors pinned to a loop's
#   thread, Sendable timers, the main-actor entry point); each must compile,
#   without nonisolated(unsafe) or @unchecked.
#
# Each file is compiled with swiftc against the module that `swift build`
# left in $BUILD (default .build/debug), through SIL (where region-based
# isolation is checked), without linking.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-.build/debug}
# The C module's map: SwiftPM's generated one, or the package's own when
# Sources/CRunLoop/include has a module.modulemap (SwiftPM then generates none).
CRUNLOOP_MAP=$BUILD/CRunLoop.build/module.modulemap
[ -f "$CRUNLOOP_MAP" ] || CRUNLOOP_MAP=Sources/CRunLoop/include/module.modulemap
SWIFTC=${SWIFTC:-swiftc}
DIR=Tests/compile-checks
if [ ! -f "$BUILD/Modules/SwiftRunLoop.swiftmodule" ]; then
    echo "compile-checks: $BUILD/Modules/SwiftRunLoop.swiftmodule missing: run swift build first" >&2
    exit 1
fi
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
compile() {
    # -parse-as-library for files that declare @main, top-level code otherwise.
    lib=""
    grep -q '^@main' "$1" && lib="-parse-as-library"
    "$SWIFTC" -swift-version 6 $lib -emit-sil -o /dev/null \
        -I "$BUILD/Modules" -Xcc -fmodule-map-file="$CRUNLOOP_MAP" \
        -Xcc -ISources/CRunLoop/include "$1" >"$LOG" 2>&1
}
pass=0; fail=0
for f in "$DIR"/racy/*.swift; do
    if compile "$f"; then
        echo "FAIL (compiled, but it races): $f"; fail=$((fail + 1))
    elif grep -Eq "error: .*([Ss]endable|concurrently-executing|isolated|data race|actor-isolated)" "$LOG"; then
        pass=$((pass + 1))
    else
        echo "FAIL (rejected, but not for a race): $f"; sed 's/^/    /' "$LOG" | head -20; fail=$((fail + 1))
    fi
done
for f in "$DIR"/ok/*.swift; do
    if grep -Eq "nonisolated\(unsafe\)|@unchecked" "$f"; then
        echo "FAIL (uses an escape hatch): $f"; fail=$((fail + 1))
    elif compile "$f" && ! grep -q "warning:" "$LOG"; then
        pass=$((pass + 1))
    else
        echo "FAIL (correct code must compile without warnings): $f"; sed 's/^/    /' "$LOG" | head -20; fail=$((fail + 1))
    fi
done
echo "compile-checks: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
