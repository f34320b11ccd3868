#!/bin/sh
# Compiles and links every ```c block of README.md and of the DocC articles
# (Sources/*/*.docc) against the static library (built, not run), with the
# Makefile's warnings, so none can rot.
# Usage: c.sh LIBRARY OUTDIR   (the Makefile passes $(BUILD)/libcrunloop.a)
set -eu
cd "$(dirname "$0")/../.."
LIB=$1
OUT=$2
CC=${CC:-cc}
CFLAGS=${CFLAGS:-}
mkdir -p "$OUT"
rm -f "$OUT"/readme-*.c "$OUT"/docc-*.c
extract() {
    awk -v out="$OUT/$2" '
        !inside && /^```c[ \t]*$/ { inside = 1; n++; file = sprintf("%s-%02d.c", out, n); printf "" > file; next }
        inside && /^```[ \t]*$/ { inside = 0; close(file); next }
        inside { print >> file }
    ' "$1"
}
extract README.md readme
for f in Sources/*/*.docc/*.md; do [ -e "$f" ] && extract "$f" "docc-$(basename "$f" .md)"; done
for block in "$OUT"/readme-*.c "$OUT"/docc-*.c; do
    [ -e "$block" ] || continue
    # A block using the GLib bridge also links libcrunloop-glib (next to LIB)
    # and GLib; without GLib's development files it is skipped.
    extra_cflags=""; extra_libs=""
    if grep -q '<CRunLoopGLib.h>' "$block"; then
        pkg-config --exists glib-2.0 2>/dev/null || { echo "doc-snippets: $block needs GLib: skipped"; continue; }
        extra_cflags="-ISources/CRunLoopGLib/include $(pkg-config --cflags glib-2.0 | sed 's/-I/-isystem /g')"
        extra_libs="$(dirname "$LIB")/libcrunloop-glib.a $(pkg-config --libs glib-2.0)"
    fi
    # A block written for macOS (CF names) must be real CoreFoundation code
    # too: where clang and the Swift toolchain's CoreFoundation headers are,
    # it is also compiled against them with the one include swapped back.
    cf_include="$(dirname "$(command -v clang 2>/dev/null || echo /nonexistent/x)")/../lib/swift"
    if grep -q '<CRunLoopCFNames.h>' "$block" && [ -e "$cf_include/CoreFoundation/CoreFoundation.h" ]; then
        echo "doc-snippets: $block against CoreFoundation's headers"
        sed 's|<CRunLoopCFNames.h>|<CoreFoundation/CoreFoundation.h>|' "$block" > "${block%.c}-cf.c"
        clang -std=c11 -fblocks -D_GNU_SOURCE -Wall -Wextra -Werror -isystem "$cf_include" -fsyntax-only "${block%.c}-cf.c"
    fi
    echo "doc-snippets: $block"
    $CC -std=c11 -pthread -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -ISources/CRunLoop/include $extra_cflags $CFLAGS "$block" -o "${block%.c}" $extra_libs "$LIB" -pthread -ldl -lm
done
