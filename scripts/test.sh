#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (what CI runs through .ci/run).
# Every test is registered with ctest: unit tests, SQL-level files, real-client
# protocol tests against a started tallyd, and differential tests against a
# PostgreSQL 15 the tests start themselves. GPU tests skip, saying so, without a GPU.
# Before ctest, the protocol/server unit tests and the protocol fuzzer run under
# AddressSanitizer + UndefinedBehaviorSanitizer (scripts/test_sanitizers.sh);
# TALLY_SKIP_SANITIZERS=1 leaves that step out for a quick local run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
scripts/build.sh -DTALLY_BUILD_TESTS=ON -DTALLY_BUILD_BENCH=ON
if [ "${TALLY_SKIP_SANITIZERS:-0}" != 1 ]; then
  TALLY_FUZZ_SEED=${TALLY_FUZZ_SEED:-20261122} scripts/test_sanitizers.sh
fi
cd "${TALLY_BUILD_DIR:-build}"
status=0
ctest --output-on-failure -j "${TALLY_TEST_JOBS:-2}" --timeout 900 "$@" || status=$?
if [ "$status" != 0 ]; then
  # A CI log is often kept only from its end: repeat each failed test's own
  # output after ctest's summary, so the reason survives with the verdict.
  scripts_dir=$(cd "$(dirname "$0")" && pwd)
  "$scripts_dir/print_failed_tests.sh" Testing/Temporary
fi
exit "$status"
