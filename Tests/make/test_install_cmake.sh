#!/bin/sh
# After `make install PREFIX=P`, a CMake project finds the package with
# CMAKE_PREFIX_PATH=P (Tests/make/cmake-consumer): find_package(CRunLoop X.Y)
# with this version's major.minor, and the README's C quick start built
# against CRunLoop::crunloop (runs from P through CMake's rpath, without
# LD_LIBRARY_PATH) and CRunLoop::crunloop-static (needs no libcrunloop.so);
# where the GLib bridge is built, the README's GLib host against
# CRunLoop::crunloop-glib and -glib-static. Requests the version file must
# refuse (the next minor and major; before 1.0 the previous minor) fail.
# Skipped (77) without cmake.
set -u
MAKE=${MAKE:-make}
CMAKE=${CMAKE:-cmake}
command -v "$CMAKE" >/dev/null 2>&1 || { echo "SKIPPED: $CMAKE not found (sudo make deps installs it):" \
    "the installed CMake package is not checked"; exit 77; }
. Tests/make/readme_c_programs.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
version=$(sed -n 's/^VERSION *:= *//p' Makefile)
major=${version%%.*}
minor=${version%.*}
P=$tmp/prefix
if ! $MAKE --no-print-directory PREFIX="$P" install >"$tmp/install.log" 2>&1; then
    echo "make install PREFIX=$P failed:"; tail -20 "$tmp/install.log"; exit 1
fi
readme_c_programs "$tmp/src" || exit 1
glib_source=""
[ -e "$P/lib/libcrunloop-glib.so" ] && glib_source=$tmp/src/glib_host.c
B=$tmp/build
configure() { # version wanted; output in $tmp/configure.log
    "$CMAKE" -S Tests/make/cmake-consumer -B "$B" -DCMAKE_PREFIX_PATH="$P" -DCRUNLOOP_VERSION="$1" \
        -DHELLO_SOURCE="$tmp/src/hello.c" -DGLIB_HOST_SOURCE="$glib_source" >"$tmp/configure.log" 2>&1
}
if ! configure "$minor"; then
    echo "FAIL: find_package(CRunLoop $minor) with CMAKE_PREFIX_PATH=$P:"; tail -30 "$tmp/configure.log"; exit 1
fi
if ! "$CMAKE" --build "$B" >"$tmp/build.log" 2>&1; then
    echo "FAIL: building the consumer:"; tail -30 "$tmp/build.log"; exit 1
fi
programs="hello hello_static"
[ -z "$glib_source" ] || programs="$programs glib_host glib_host_static"
for prog in $programs; do
    out=$(env -u LD_LIBRARY_PATH timeout 30 "$B/$prog" 2>&1) || bad "$prog failed: $out"
    printf '%s\n' "$out" | grep -q 'tick 3' || bad "$prog did not tick 3 times: $out"
done
ldd "$B/hello" | grep -q "libcrunloop.so.* => $P/lib/" || bad "hello does not load libcrunloop from $P/lib"
ldd "$B/hello_static" | grep -q "libcrunloop" && bad "hello_static loads a shared libcrunloop"

# Versions the package must refuse, then one it must take (the exact version).
refused="$(echo "$version" | awk -F. '{ print $1 "." $2 + 1 }') $((major + 1)).0"
[ "$major" != 0 ] || [ "${minor#*.}" = 0 ] || refused="$refused 0.$((${minor#*.} - 1))"
for v in $refused; do
    if configure "$v"; then
        bad "find_package(CRunLoop $v) accepted version $version"
    elif ! grep -q "compatible with requested version \"$v\"" "$tmp/configure.log"; then
        bad "find_package(CRunLoop $v) failed for another reason than the version:"; tail -20 "$tmp/configure.log"
    fi
done
configure "$version" || { bad "find_package(CRunLoop $version) refused it:"; tail -20 "$tmp/configure.log"; }
[ "$fail" -eq 0 ] && echo "ok: find_package(CRunLoop $minor) from $P; $programs build and run; refuses $refused"
exit "$fail"
