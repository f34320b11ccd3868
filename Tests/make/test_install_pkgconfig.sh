#!/bin/sh
# After `make install PREFIX=P` into a prefix the dynamic linker does not
# search, the README's C quick start builds with pkg-config (its version
# check passes, a later minor's fails) and runs with the rpath `make install`
# tells to add; so does the README's GLib host program through
# crunloop-glib.pc where the bridge is built.
set -u
MAKE=${MAKE:-make}
. Tests/make/readme_c_programs.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
version=$(sed -n 's/^VERSION *:= *//p' Makefile)
P=$tmp/prefix
if ! $MAKE --no-print-directory PREFIX="$P" install >"$tmp/install.log" 2>&1; then
    echo "make install PREFIX=$P failed:"; tail -20 "$tmp/install.log"; exit 1
fi
grep -q -- "-Wl,-rpath,$P/lib" "$tmp/install.log" || bad "make install into $P did not say to link with an rpath"
readme_c_programs "$tmp/src" || exit 1
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
pkg-config --atleast-version="$version" crunloop || bad "pkg-config --atleast-version=$version crunloop fails"
next=$(echo "$version" | awk -F. '{ print $1 "." $2 + 1 ".0" }')
pkg-config --atleast-version="$next" crunloop && bad "pkg-config --atleast-version=$next crunloop passes"

# build_and_run NAME SOURCE PKG: links against P's shared library, runs, expects "tick 3".
build_and_run() {
    # shellcheck disable=SC2046
    if ! ${CC:-cc} "$2" $(pkg-config --cflags --libs "$3") -Wl,-rpath,"$P/lib" -o "$tmp/$1" >"$tmp/$1.log" 2>&1; then
        bad "cc $2 \$(pkg-config --cflags --libs $3):"; cat "$tmp/$1.log"; return
    fi
    ldd "$tmp/$1" | grep -q "libcrunloop.so.* => $P/lib/" || bad "$1 does not load libcrunloop from $P/lib: $(ldd "$tmp/$1")"
    out=$(env -u LD_LIBRARY_PATH timeout 30 "$tmp/$1" 2>&1) || bad "$1 failed: $out"
    printf '%s\n' "$out" | grep -q 'tick 3' || bad "$1 did not tick 3 times: $out"
}
build_and_run hello "$tmp/src/hello.c" crunloop
if [ -e "$P/lib/pkgconfig/crunloop-glib.pc" ]; then
    [ -e "$tmp/src/glib_host.c" ] || bad "README.md has no GLib host program"
    build_and_run glib_host "$tmp/src/glib_host.c" crunloop-glib
    glib="; the GLib host through crunloop-glib.pc"
else
    glib=" (GLib bridge not built: its program skipped)"
fi
[ "$fail" -eq 0 ] && echo "ok: README's quick start builds with pkg-config (>= $version) and runs from $P$glib"
exit "$fail"
