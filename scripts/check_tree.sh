#!/usr/bin/env bash
# The house rules over the source tree (docs/architecture.md): layers, file
# sizes, settings, comments and repeated code. CI runs the same checks as the
# ctest tests tree_*; this runs them all at once and reports every failure.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
for check in layers sources duplicates; do
  python3 "scripts/check_$check.py" . || status=1
done
exit $status
