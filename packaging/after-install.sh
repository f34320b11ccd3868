#!/bin/sh
# Run by `make install` last: makes the installed shared library findable by
# the dynamic linker, or says how. Usage: after-install.sh DESTDIR PREFIX SONAME
#
# A program linked with -lcrunloop asks the dynamic linker for the soname
# (libcrunloop.so.0.2); in the directories the linker searches, it finds it
# through its cache, which only ldconfig refreshes. So: into a real prefix
# (no DESTDIR: a staged install is the packager's business) whose lib/ the
# linker searches, as root, run ldconfig. Any other prefix needs the program
# to say where to look: an rpath at link time, or LD_LIBRARY_PATH at run time.
set -u
destdir=$1 prefix=$2 soname=$3
LDCONFIG=${LDCONFIG:-ldconfig}
[ -z "$destdir" ] || exit 0
libdir=$(readlink -f "$prefix/lib")
# ldconfig -N -X -v lists the directories it searches without touching the
# cache or any link: "DIR: (from FILE:LINE)".
searched=no
for dir in $("$LDCONFIG" -N -X -v 2>/dev/null | sed -n 's|^\(/[^:]*\):.*|\1|p'); do
    [ "$(readlink -f "$dir")" = "$libdir" ] && searched=yes
done
if [ "$searched" = no ]; then
    echo "make install: the dynamic linker does not search $prefix/lib: link programs with" \
         "-Wl,-rpath,$prefix/lib (or run them with LD_LIBRARY_PATH=$prefix/lib)"
elif [ "$(id -u)" = 0 ]; then
    echo "$LDCONFIG"
    "$LDCONFIG" || echo "make install: $LDCONFIG failed: programs may not find $soname until it runs" >&2
else
    echo "make install: run ldconfig as root, so that programs find $soname in $prefix/lib"
fi
exit 0
