#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (what CI runs through .ci/run).
# Every test is registered with ctest: unit tests, SQL-level files, real-client
# protocol tests against a started tallyd, and differential tests against a
# PostgreSQL 15 the tests start themselves. GPU tests skip, saying so, without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd "${TALLY_BUILD_DIR:-build}"
ctest --output-on-failure -j "${TALLY_TEST_JOBS:-2}" --timeout 900 "$@"
