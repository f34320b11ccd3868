#!/bin/sh
# Builds every ```swift code block of README.md, of the DocC catalogs and of
# the documentation comments of the Swift modules (SwiftRunLoop,
# SwiftRunLoopFoundation and, where GLib is, SwiftRunLoopGLib), so none can
# rot.
#
# The README's Package.swift block is used verbatim as the manifest of a
# temporary package that depends on this one by path (the repository is
# linked as ../SwiftRunLoop), with the README's quick start as its target;
# every other block becomes one more target of that package (appended to the
# manifest with `package.targets +=`): a test target when it imports XCTest
# or Testing, an executable target otherwise. A block holding `@main` is
# compiled as a library file, a test block as a test file, the others as
# top-level code. Blocks are built, not run.
set -eu
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
WORK=${SNIPPETS_DIR:-$ROOT/.build/doc-snippets}
SWIFT=${SWIFT:-swift}
rm -rf "$WORK/App"
mkdir -p "$WORK/App/Sources" "$WORK/App/Tests"
ln -sfn "$ROOT" "$WORK/SwiftRunLoop"

# extract FILE: writes each swift block of FILE to $WORK/blocks/<name>-<n>.swift
mkdir -p "$WORK/blocks"
rm -f "$WORK"/blocks/*.swift
extract() {
    # In a Swift source the blocks are inside `///` comments; in Markdown a
    # block's own `///` lines are code.
    in_source=0
    case $1 in *.swift) in_source=1 ;; esac
    awk -v out="$WORK/blocks/$2" -v in_source="$in_source" '
        { line = $0; doc = 0 }
        in_source && line ~ /^[ \t]*\/\/\/ ?/ { sub(/^[ \t]*\/\/\/ ?/, "", line); doc = 1 }
        !inside && line ~ /^[ \t]*```swift[ \t]*$/ { inside = 1; n++; file = sprintf("%s-%02d.swift", out, n); printf "" > file; next }
        inside && line ~ /^[ \t]*```[ \t]*$/ { inside = 0; close(file); next }
        inside { print line >> file }
    ' "$1"
}
extract README.md readme
MODULES="SwiftRunLoop SwiftRunLoopFoundation"
# The GLib product exists only where GLib's development files are (Package.swift).
[ -f /usr/include/glib-2.0/glib.h ] && MODULES="$MODULES SwiftRunLoopGLib"
for module in $MODULES; do
    for f in "Sources/$module/$module.docc"/*.md; do
        [ -e "$f" ] && extract "$f" "docc-$module-$(basename "$f" .md)"
    done
    for f in "Sources/$module"/*.swift; do extract "$f" "source-$module-$(basename "$f" .swift)"; done
done

# The daemon article shows the example program (from its first import on):
# the two must not drift apart.
daemon_block="$WORK/blocks/docc-SwiftRunLoop-LinuxDaemon-01.swift"
if ! sed -n '/^import SwiftRunLoop/,$p' Examples/swift/Sources/Daemon/Daemon.swift | cmp -s - "$daemon_block"; then
    echo "doc-snippets: LinuxDaemon.md's program differs from Examples/swift/Sources/Daemon/Daemon.swift" >&2
    exit 1
fi

manifest=""
targets=""
count=0
for block in "$WORK"/blocks/*.swift; do
    [ -e "$block" ] || continue
    if grep -q "^let package = Package(" "$block"; then
        [ -z "$manifest" ] || { echo "doc-snippets: two Package.swift blocks ($manifest, $block)" >&2; exit 1; }
        manifest=$block
        continue
    fi
    count=$((count + 1))
    name=$(basename "$block" .swift | tr -c 'A-Za-z0-9\n' '_')
    products='.product(name: "SwiftRunLoop", package: "SwiftRunLoop"), .product(name: "SwiftRunLoopFoundation", package: "SwiftRunLoop")'
    case $name in *SwiftRunLoopGLib*) products="$products, .product(name: \"SwiftRunLoopGLib\", package: \"SwiftRunLoop\")" ;; esac
    folder=Sources
    file=main.swift
    grep -q "^@main" "$block" && file=Program.swift
    if [ ! -d "$WORK/App/Sources/App" ] && [ "${name#readme}" != "$name" ]; then
        target=App       # the README's first program: the manifest's own target
    elif grep -Eq "^import (XCTest|Testing)$" "$block"; then
        target="TestSnippet_$name"
        folder=Tests
        file=Tests.swift
        targets="$targets .testTarget(name: \"$target\", dependencies: [$products]),"
    else
        target="Snippet_$name"
        targets="$targets .executableTarget(name: \"$target\", dependencies: [$products]),"
    fi
    mkdir -p "$WORK/App/$folder/$target"
    printf '// From %s\n' "$(basename "$block")" > "$WORK/App/$folder/$target/$file"
    cat "$block" >> "$WORK/App/$folder/$target/$file"
done
[ -n "$manifest" ] || { echo "doc-snippets: README.md shows no Package.swift block" >&2; exit 1; }
[ -d "$WORK/App/Sources/App" ] || { echo "doc-snippets: README.md shows no Swift program" >&2; exit 1; }
cp "$manifest" "$WORK/App/Package.swift"
printf '\n// Added by Tests/doc-snippets/run.sh: the other documentation blocks.\npackage.targets += [%s]\n' "$targets" >> "$WORK/App/Package.swift"

echo "doc-snippets: building $count blocks (and the README's Package.swift) in $WORK/App"
if ! "$SWIFT" build --build-tests --package-path "$WORK/App" --scratch-path "$WORK/scratch" -Xswiftc -warnings-as-errors \
        > "$WORK/build.log" 2>&1; then
    grep -E "error|warning" "$WORK/build.log" | head -40
    echo "doc-snippets: FAILED (full log: $WORK/build.log)"
    exit 1
fi
echo "doc-snippets: all $count blocks build"
