#!/bin/sh
# Converts the documentation of each Swift module (SwiftRunLoop,
# SwiftRunLoopFoundation and, where GLib is, SwiftRunLoopGLib) with docc and
# fails on any warning (broken or ambiguous links, undocumented parameters).
# Uses the modules that `swift build` left in $BUILD (default .build/debug).
#
# Each archive goes to $DOCC_DIR/<Module>.doccarchive (default .build/docc),
# made for static hosting under the path /<Module>.doccarchive, so one web
# server at $DOCC_DIR serves them all (`make docs` does this and says how).
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-.build/debug}
OUT=${DOCC_DIR:-.build/docc}
DOCC=${DOCC:-$(command -v docc || echo "$(dirname "$(readlink -f "$(command -v swift)")")/docc")}
if [ ! -x "$DOCC" ]; then echo "docc-check: no docc binary next to swift; skipped"; exit 0; fi

# The C modules' maps: SwiftPM's generated one, or the target's own when its
# include/ has a module.modulemap (SwiftPM then generates none).
module_map() {
    if [ -f "$BUILD/$1.build/module.modulemap" ]; then echo "$BUILD/$1.build/module.modulemap"; else echo "$2"; fi
}
CRUNLOOP_MAP=$(module_map CRunLoop Sources/CRunLoop/include/module.modulemap)
CLANG_FLAGS="-Xcc -fmodule-map-file=$CRUNLOOP_MAP"
MODULES="SwiftRunLoop SwiftRunLoopFoundation"
if [ -f "$BUILD/Modules/SwiftRunLoopGLib.swiftmodule" ]; then
    MODULES="$MODULES SwiftRunLoopGLib"
    CLANG_FLAGS="$CLANG_FLAGS -Xcc -fmodule-map-file=$(module_map CRunLoopGLib Sources/CRunLoopGLib/include/module.modulemap)"
    CLANG_FLAGS="$CLANG_FLAGS -Xcc -fmodule-map-file=Sources/CGLib/module.modulemap -Xcc -ISources/CRunLoopGLib/include -Xcc -ISources/CRunLoop/include"
    for flag in $(pkg-config --cflags glib-2.0); do CLANG_FLAGS="$CLANG_FLAGS -Xcc $flag"; done
fi

mkdir -p "$OUT"
failed=0
for module in $MODULES; do
    work="$OUT/$module.work"
    rm -rf "$work" "$OUT/$module.doccarchive"
    mkdir -p "$work/symbols"
    # shellcheck disable=SC2086 # CLANG_FLAGS is a list of flags
    swift symbolgraph-extract -module-name "$module" -I "$BUILD/Modules" $CLANG_FLAGS \
        -target "$(uname -m)-unknown-linux-gnu" -minimum-access-level public -output-dir "$work/symbols"
    if ! "$DOCC" convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$work/symbols" \
        --fallback-display-name "$module" --fallback-bundle-identifier "$module" \
        --hosting-base-path "$module.doccarchive" \
        --output-path "$OUT/$module.doccarchive" > "$work/docc.log" 2>&1; then
        cat "$work/docc.log"; echo "docc-check: $module: docc failed"; failed=1; continue
    fi
    if grep -Eq "warning|error" "$work/docc.log"; then
        cat "$work/docc.log"
        echo "docc-check: $module: $(grep -Ec '^(warning|error)' "$work/docc.log") diagnostics"
        failed=1
    fi
    [ $failed -ne 0 ] || rm -rf "$work"
done
[ $failed -eq 0 ] || { echo "docc-check: FAILED"; exit 1; }
echo "docc-check: no warnings ($MODULES)"
