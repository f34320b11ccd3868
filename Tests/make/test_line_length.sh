#!/bin/sh
# Test sources stay within 120 columns.
set -u
long=$(git ls-files 'Tests/*.c' 'Tests/*.h' 'Tests/*.swift' | xargs awk 'length > 120 { print FILENAME ":" FNR ": " length " columns" }')
[ -z "$long" ] || { printf '%s\n' "$long"; echo "FAIL: $(printf '%s\n' "$long" | wc -l) test lines over 120 columns"; exit 1; }
echo "ok: every test line within 120 columns"
