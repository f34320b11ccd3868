#!/bin/sh
# Every C and Swift source stays within 120 columns (clang-format and
# swift-format wrap code at 120; comments and strings are ours to keep short).
set -u
long=$(git ls-files '*.c' '*.h' '*.swift' | xargs awk 'length > 120 { print FILENAME ":" FNR ": " length " columns" }')
[ -z "$long" ] || { printf '%s\n' "$long"; echo "FAIL: $(printf '%s\n' "$long" | wc -l) source lines over 120 columns"; exit 1; }
echo "ok: every C and Swift line within 120 columns"
