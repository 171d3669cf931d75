#!/usr/bin/env bash
# Prints the last lines of each failed test's output from ctest's log:
# print_failed_tests.sh BUILD/Testing/Temporary [LINES]
set -euo pipefail
dir=$1
lines=${2:-60}
[ -f "$dir/LastTestsFailed.log" ] || exit 0
while IFS=: read -r _ name; do
  echo "===== the end of $name's output ====="
  awk -v name="$name" '
    !on && substr($0, length($0) - length(name) - 9) == " Testing: " name { on = 1; next }
    on && index($0, "\"" name "\" end time") == 1 { on = 0 }
    on { print }' "$dir/LastTest.log" | tail -n "$lines"
done < "$dir/LastTestsFailed.log"
