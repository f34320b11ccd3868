#!/bin/sh
# Builds every ```swift code block of README.md, of the DocC catalog and of
# the documentation comments in Sources/SwiftRunLoop, so none can rot.
#
# The README's Package.swift block is used verbatim as the manifest of a
# temporary package that depends on this one by path (the repository is
# linked as ../SwiftRunLoop), with the README's quick start as its target;
# every other block becomes one more executable target of that package
# (appended to the manifest with `package.targets +=`). A block holding
# `@main` is compiled as a library file; the others as top-level code.
# Blocks are built, not run.
set -eu
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
WORK=${SNIPPETS_DIR:-$ROOT/.build/doc-snippets}
SWIFT=${SWIFT:-swift}
rm -rf "$WORK/App"
mkdir -p "$WORK/App/Sources"
ln -sfn "$ROOT" "$WORK/SwiftRunLoop"

# extract FILE: writes each swift block of FILE to $WORK/blocks/<name>-<n>.swift
mkdir -p "$WORK/blocks"
rm -f "$WORK"/blocks/*.swift
extract() {
    awk -v out="$WORK/blocks/$2" '
        { line = $0; doc = 0 }
        line ~ /^[ \t]*\/\/\/ ?/ { sub(/^[ \t]*\/\/\/ ?/, "", line); doc = 1 }
        !inside && line ~ /^[ \t]*```swift[ \t]*$/ { inside = 1; n++; file = sprintf("%s-%02d.swift", out, n); printf "" > file; next }
        inside && line ~ /^[ \t]*```[ \t]*$/ { inside = 0; close(file); next }
        inside { print line >> file }
    ' "$1"
}
extract README.md readme
for f in Sources/SwiftRunLoop/SwiftRunLoop.docc/*.md; do extract "$f" "docc-$(basename "$f" .md)"; done
for f in Sources/SwiftRunLoop/*.swift; do extract "$f" "source-$(basename "$f" .swift)"; done

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
    if [ ! -d "$WORK/App/Sources/App" ] && [ "${name#readme}" != "$name" ]; then
        target=App       # the README's first program: the manifest's own target
    else
        target="Snippet_$name"
        targets="$targets .executableTarget(name: \"$target\", dependencies: [.product(name: \"SwiftRunLoop\", package: \"SwiftRunLoop\"), .product(name: \"SwiftRunLoopFoundation\", package: \"SwiftRunLoop\")]),"
    fi
    mkdir -p "$WORK/App/Sources/$target"
    file=main.swift
    grep -q "^@main" "$block" && file=Program.swift
    printf '// From %s\n' "$(basename "$block")" > "$WORK/App/Sources/$target/$file"
    cat "$block" >> "$WORK/App/Sources/$target/$file"
done
[ -n "$manifest" ] || { echo "doc-snippets: README.md shows no Package.swift block" >&2; exit 1; }
[ -d "$WORK/App/Sources/App" ] || { echo "doc-snippets: README.md shows no Swift program" >&2; exit 1; }
cp "$manifest" "$WORK/App/Package.swift"
printf '\n// Added by Tests/doc-snippets/run.sh: the other documentation blocks.\npackage.targets += [%s]\n' "$targets" >> "$WORK/App/Package.swift"

echo "doc-snippets: building $count blocks (and the README's Package.swift) in $WORK/App"
if ! "$SWIFT" build --package-path "$WORK/App" --scratch-path "$WORK/scratch" -Xswiftc -warnings-as-errors \
        > "$WORK/build.log" 2>&1; then
    grep -E "error|warning" "$WORK/build.log" | head -40
    echo "doc-snippets: FAILED (full log: $WORK/build.log)"
    exit 1
fi
echo "doc-snippets: all $count blocks build"
