#!/bin/sh
# Converts the module's documentation with docc and fails on any warning
# (broken or ambiguous links, undocumented parameters). Uses the module that
# `swift build` left in $BUILD (default .build/debug).
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-.build/debug}
# The C module's map: SwiftPM's generated one, or the package's own when
# Sources/CRunLoop/include has a module.modulemap (SwiftPM then generates none).
CRUNLOOP_MAP=$BUILD/CRunLoop.build/module.modulemap
[ -f "$CRUNLOOP_MAP" ] || CRUNLOOP_MAP=Sources/CRunLoop/include/module.modulemap
OUT=${DOCC_DIR:-.build/docc}
DOCC=${DOCC:-$(command -v docc || echo "$(dirname "$(readlink -f "$(command -v swift)")")/docc")}
if [ ! -x "$DOCC" ]; then echo "docc-check: no docc binary next to swift; skipped"; exit 0; fi
rm -rf "$OUT"
mkdir -p "$OUT/symbols"
swift symbolgraph-extract -module-name SwiftRunLoop -I "$BUILD/Modules" \
    -Xcc -fmodule-map-file="$CRUNLOOP_MAP" \
    -target "$(uname -m)-unknown-linux-gnu" -minimum-access-level public -output-dir "$OUT/symbols"
"$DOCC" convert Sources/SwiftRunLoop/SwiftRunLoop.docc --additional-symbol-graph-dir "$OUT/symbols" \
    --fallback-display-name SwiftRunLoop --fallback-bundle-identifier SwiftRunLoop \
    --output-path "$OUT/SwiftRunLoop.doccarchive" > "$OUT/docc.log" 2>&1 || { cat "$OUT/docc.log"; exit 1; }
if grep -Eq "warning|error" "$OUT/docc.log"; then
    cat "$OUT/docc.log"
    echo "docc-check: FAILED: $(grep -Ec '^(warning|error)' "$OUT/docc.log") diagnostics"
    exit 1
fi
echo "docc-check: no warnings"
