#!/bin/sh
# What `make install` does last (packaging/after-install.sh), with a stand-in
# ldconfig that lists the directories it was told the linker searches and
# records being run: into a searched prefix as root it runs ldconfig (as
# another user it says to); into any other prefix it runs nothing and says to
# link with an rpath or use LD_LIBRARY_PATH; with DESTDIR it does nothing.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
mkdir -p "$tmp/searched/lib" "$tmp/elsewhere/lib"
cat >"$tmp/ldconfig" <<STUB
#!/bin/sh
if [ "\$*" = "-N -X -v" ]; then echo "$tmp/searched/lib: (from stub.conf:1)"; echo "	libc.so.6 -> libc.so.6"; exit 0; fi
echo "ldconfig \$*" >> "$tmp/ran"
STUB
chmod +x "$tmp/ldconfig"
after() { LDCONFIG="$tmp/ldconfig" sh packaging/after-install.sh "$1" "$2" libcrunloop.so.0.2 2>&1; }

rm -f "$tmp/ran"; out=$(after "" "$tmp/searched")
if [ "$(id -u)" = 0 ]; then
    [ "$(cat "$tmp/ran" 2>/dev/null)" = "ldconfig " ] || bad "as root into a searched prefix, ldconfig did not run: $out"
else
    [ ! -e "$tmp/ran" ] || bad "as user $(id -u), ldconfig ran"
    printf '%s' "$out" | grep -q "run ldconfig as root" || bad "as a user into a searched prefix, it said: $out"
fi
rm -f "$tmp/ran"; out=$(after "" "$tmp/elsewhere")
[ ! -e "$tmp/ran" ] || bad "ldconfig ran for a prefix the linker does not search"
printf '%s' "$out" | grep -q -- "-Wl,-rpath,$tmp/elsewhere/lib" || bad "into another prefix, no rpath advice: $out"
printf '%s' "$out" | grep -q "LD_LIBRARY_PATH=$tmp/elsewhere/lib" || bad "into another prefix, no LD_LIBRARY_PATH: $out"
rm -f "$tmp/ran"; out=$(after "$tmp/stage" "$tmp/searched")
[ ! -e "$tmp/ran" ] && [ -z "$out" ] || bad "with DESTDIR it ran ldconfig or said: $out"
[ "$fail" -eq 0 ] && echo "ok: make install runs ldconfig only into a searched prefix, for real, as root; else says how"
exit "$fail"
