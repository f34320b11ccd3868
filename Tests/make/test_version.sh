#!/bin/sh
# One version: the Makefile's VERSION is what the installed shared libraries
# are named and sonamed after (libcrunloop.so.VERSION, soname
# libcrunloop.so.MAJOR.MINOR before 1.0, .MAJOR after), what pkg-config and
# the CMake package report, CHANGELOG.md's newest entry, and every version the
# README shows (SwiftPM's from:, pkg-config's and CMake's version checks).
set -u
MAKE=${MAKE:-make}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

version=$(sed -n 's/^VERSION *:= *//p' Makefile)
printf '%s\n' "$version" | grep -qxE '[0-9]+\.[0-9]+\.[0-9]+' || { echo "FAIL: Makefile's VERSION '$version'"; exit 1; }
major=${version%%.*}
minor=${version%.*}
if [ "$major" = 0 ]; then soversion=$minor; else soversion=$major; fi

P=$tmp/prefix
if ! $MAKE --no-print-directory PREFIX="$P" install >"$tmp/log" 2>&1; then
    echo "make install PREFIX=$P failed:"; tail -20 "$tmp/log"; exit 1
fi
libs=libcrunloop
[ -e "$P/lib/libcrunloop-glib.so" ] && libs="$libs libcrunloop-glib"
for lib in $libs; do
    file=$P/lib/$lib.so.$version
    [ -f "$file" ] || { bad "no $lib.so.$version installed: $(ls "$P/lib" | tr '\n' ' ')"; continue; }
    soname=$(readelf -d "$file" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ "$soname" = "$lib.so.$soversion" ] || bad "$lib.so.$version's soname is '$soname', not $lib.so.$soversion"
    for link in "$lib.so" "$lib.so.$soversion"; do
        [ "$(readlink -f "$P/lib/$link")" = "$(readlink -f "$file")" ] || bad "$link does not lead to $lib.so.$version"
    done
done
for pc in crunloop $( [ -e "$P/lib/pkgconfig/crunloop-glib.pc" ] && echo crunloop-glib); do
    got=$(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --modversion "$pc" 2>&1)
    [ "$got" = "$version" ] || bad "pkg-config --modversion $pc says '$got'"
done
grep -q "^set(PACKAGE_VERSION \"$version\")" "$P/lib/cmake/CRunLoop/CRunLoopConfigVersion.cmake" ||
    bad "CRunLoopConfigVersion.cmake does not set PACKAGE_VERSION to $version"

newest=$(sed -n 's/^## \[\{0,1\}\([0-9][0-9.]*\)\]\{0,1\}.*/\1/p' CHANGELOG.md 2>/dev/null | head -1)
[ "$newest" = "$version" ] || bad "CHANGELOG.md's newest entry is '$newest', not $version"

# The README's versions: each form must be there, and each must be this one.
check_readme() { # label, extended regex with the version as its one group, wanted
    found=$(sed -nE "s/.*$2.*/\\1/p" README.md)
    [ -n "$found" ] || { bad "README.md shows no $1"; return; }
    for v in $found; do [ "$v" = "$3" ] || bad "README.md's $1 says $v, not $3"; done
}
check_readme 'SwiftPM from: "x.y.z"' 'from: "([0-9.]+)"' "$version"
check_readme 'pkg-config --atleast-version' '--atleast-version=([0-9.]+)' "$version"
check_readme 'autoconf check (crunloop >= x.y.z)' 'crunloop >= ([0-9.]+)' "$version"
check_readme 'find_package(CRunLoop x.y)' 'find_package\(CRunLoop ([0-9.]+)' "$minor"
check_readme 'soname' 'soname `libcrunloop\.so\.([0-9.]+)`' "$soversion"
check_readme 'version named in Versions' 'Makefile \(now ([0-9.]+)\)' "$version"
[ "$fail" -eq 0 ] && echo "ok: version $version (soname .so.$soversion) in the libraries, pkg-config, CMake, CHANGELOG.md" \
    "and README.md"
exit "$fail"
