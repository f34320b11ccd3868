#!/bin/sh
# Tests/layers/test.sh: feeds check.py tiny synthetic libraries (a few
# one-function files, compiled here) and checks that it passes a layered one
# and fails, naming the files, on each kind of cycle or layer break.
set -u
here=$(cd "$(dirname "$0")" && pwd)
check="$here/check.py"
CC=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0

# new_tree NAME: an empty library in $tmp/NAME (src/ and obj/).
new_tree() {
    tree="$tmp/$1"
    mkdir -p "$tree/src/core" "$tree/src/core_api" "$tree/src/include" "$tree/src/linux" \
             "$tree/src/threads" "$tree/obj"
}
# file PATH TEXT: writes one source file of the current tree.
file() {
    mkdir -p "$(dirname "$tree/src/$1")"
    printf '%s\n' "$2" > "$tree/src/$1"
}
# build: compiles every .c of the tree's layer folders into obj/.
build() {
    for c in $(cd "$tree/src" && find . -name '*.c' | sed 's#^\./##'); do
        mkdir -p "$(dirname "$tree/obj/$c")"
        "$CC" -std=c11 -w -I"$tree/src/include" -I"$tree/src/core_api" \
              -c "$tree/src/$c" -o "$tree/obj/${c%.c}.o" || exit 1
    done
}
# expect pass|fail TEXT... : runs the check (with allowed.txt if the tree has
# one); on fail, its report must contain every TEXT.
expect() {
    want=$1; shift
    allow=""; [ -f "$tree/allowed.txt" ] && allow="$tree/allowed.txt"
    out=$(python3 "$check" "$tree/src" "$tree/obj" $allow 2>&1); rc=$?
    ok=yes
    if [ "$want" = pass ] && [ $rc -ne 0 ]; then ok=no; fi
    if [ "$want" = fail ] && [ $rc -ne 1 ]; then ok=no; fi
    for text in "$@"; do
        printf '%s\n' "$out" | grep -qF -- "$text" || { ok=no; echo "  missing: $text"; }
    done
    if [ $ok = yes ]; then
        passed=$((passed + 1)); echo "ok $name"
    else
        failed=$((failed + 1)); echo "FAIL $name (wanted $want, exit $rc):"; printf '%s\n' "$out" | sed 's/^/  | /'
    fi
}

name=layered_library_passes
new_tree $name
file core_api/rl_extras.h 'int low(void);'
file core/low.c 'int low(void) { return 1; }'
file core/high.c '#include "rl_extras.h"
int high(void) { return low() + 1; }'
file linux/extra.c '#include "rl_extras.h"
int extra(void) { return low(); }'
file threads/thread.c 'int high(void);
int thread_main(void) { return high(); }'
build; expect pass "no cycle"

name=call_cycle_fails_and_names_its_files
new_tree $name
file core/ping.c 'int pong(int); int ping(int n) { return n ? pong(n - 1) : 0; }'
file core/pong.c 'int ping(int); int pong(int n) { return n ? ping(n - 1) : 1; }'
file core/leaf.c 'int leaf(void) { return 0; }'
build; expect fail "call cycle among 2 files: core/ping.c core/pong.c" "core/ping.c -> core/pong.c  (pong)" \
                   "core/pong.c -> core/ping.c  (ping)"

name=longer_call_cycle_fails
new_tree $name
file core/a.c 'int b(void); int a(void) { return b(); }'
file core/b.c 'int c(void); int b(void) { return c(); }'
file core/c.c 'int a(void); int c(void) { return a(); }'
build; expect fail "call cycle among 3 files: core/a.c core/b.c core/c.c"

name=data_reference_counts_as_a_call
new_tree $name
file core/table.c 'extern int user_count; int table = 1; int count(void) { return user_count; }'
file core/user.c 'extern int table; int user_count = 2; int use(void) { return table; }'
build; expect fail "call cycle among 2 files: core/table.c core/user.c"

name=include_cycle_fails
new_tree $name
file core/one.h '#ifndef ONE_H
#define ONE_H
#include "two.h"
#endif'
file core/two.h '#ifndef TWO_H
#define TWO_H
/* #include "one.h" in a comment does not count */
#include "one.h"
#endif'
file core/one.c '#include "one.h"
int one(void) { return 1; }'
build; expect fail "include cycle among 2 files: core/one.h core/two.h"

name=extra_including_a_core_private_header_fails
new_tree $name
file core/rl_private.h 'int low(void);'
file core/low.c 'int low(void) { return 1; }'
file linux/extra.c '#include "../core/rl_private.h"
int extra(void) { return low(); }'
build; expect fail "layer rule: linux/extra.c includes core/rl_private.h"

name=extra_including_core_api_beyond_rl_extras_fails
new_tree $name
file core_api/rl_extras.h '#include "rl_object.h"'
file core_api/rl_object.h 'int low(void);'
file core/low.c 'int low(void) { return 1; }'
file linux/extra.c '#include "rl_object.h"
int extra(void) { return low(); }'
build; expect fail "layer rule: linux/extra.c includes core_api/rl_object.h; an extra includes core_api/rl_extras.h only"

name=core_calling_an_extra_fails
new_tree $name
file core/low.c 'int extra(void); int low(void) { return extra(); }'
file linux/extra.c 'int extra(void) { return 2; }'
build; expect fail "layer rule: core/low.c (core/) calls into linux/extra.c (linux/): extra"

name=extra_calling_another_extra_fails
new_tree $name
file linux/extra.c 'int thread_main(void); int extra(void) { return thread_main(); }'
file threads/thread.c 'int thread_main(void) { return 3; }'
build; expect fail "layer rule: linux/extra.c (linux/) calls into threads/thread.c (threads/)"

name=allowed_edge_tolerates_its_cycle
new_tree $name
file core/ping.c 'int pong(int); int ping(int n) { return n ? pong(n - 1) : 0; }'
file core/pong.c 'int ping(int); int pong(int n) { return n ? ping(n - 1) : 1; }'
printf '# a cycle not broken yet\ncore/pong.c -> core/ping.c\n' > "$tree/allowed.txt"
build; expect pass "no cycle but the 1 allowed edges"

name=allowed_edge_that_is_gone_fails
new_tree $name
file core/ping.c 'int ping(int n) { return n; }'
file core/pong.c 'int ping(int); int pong(int n) { return ping(n); }'
printf 'core/ping.c -> core/pong.c\n' > "$tree/allowed.txt"
build; expect fail "allowed edge core/ping.c -> core/pong.c no longer exists"

name=source_outside_the_layer_folders_fails
new_tree $name
file core/low.c 'int low(void) { return 1; }'
file stray.c 'int stray(void) { return 1; }'
build; expect fail "stray.c: a source file outside the layer folders"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
