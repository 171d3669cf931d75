#!/usr/bin/env bash
# Builds the protocol and server unit tests and the protocol fuzzer with
# AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/ (only those
# targets) and runs them: the fuzzer for TALLY_FUZZ_SECONDS (default 60).
# About 3-4 minutes on 2 cores. Any sanitizer report fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${TALLY_ASAN_BUILD_DIR:-build-asan}
targets=(protocol_codec_test protocol_scram_test protocol_session_test protocol_server_test
         protocol_fuzz)

# CPU-only and without benchmarks: the sanitized build needs none of that.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTALLY_SANITIZE=ON \
      -DTALLY_CUDA=OFF -DTALLY_BUILD_BENCH=OFF >/dev/null
ninja -C "$build_dir" "${targets[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for test in protocol_codec_test protocol_scram_test protocol_session_test protocol_server_test; do
  echo "== $test (ASan+UBSan)"
  timeout 600 "$build_dir/tests/protocol/$test" --gtest_brief=1
done
echo "== protocol_fuzz (ASan+UBSan)"
timeout 900 "$build_dir/tests/protocol/protocol_fuzz" --seconds "${TALLY_FUZZ_SECONDS:-60}" \
  --seed "${TALLY_FUZZ_SEED:-$(date +%s)}"
echo "test_sanitizers: all passed"
