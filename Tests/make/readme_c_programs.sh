#!/bin/sh
# Sourced by the install checks: writes the README's C programs they build
# against an installed prefix into DIR: DIR/hello.c (the quick start, the
# README's first C block) and, when GLib's bridge is in the README,
# DIR/glib_host.c (our loop inside g_main_loop_run). Usage: readme_c_programs DIR
readme_c_programs() {
    mkdir -p "$1/blocks"
    awk -v out="$1/blocks/block" '
        !inside && /^```c[ \t]*$/ { inside = 1; n++; file = sprintf("%s-%02d.c", out, n); printf "" > file; next }
        inside && /^```[ \t]*$/ { inside = 0; close(file); next }
        inside { print >> file }
    ' README.md
    cp "$1/blocks/block-01.c" "$1/hello.c" || return 1
    grep -q '<CRunLoop.h>' "$1/hello.c" || { echo "README.md's first C block is not the quick start"; return 1; }
    host=$(grep -l 'g_main_loop_run(' "$1"/blocks/*.c | head -1)
    [ -z "$host" ] || cp "$host" "$1/glib_host.c"
}
