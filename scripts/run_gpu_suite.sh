#!/usr/bin/env bash
# Runs on the GPU machine from the bundle made by scripts/make_gpu_bundle.sh:
# the GPU tests, then the benchmarks; logs and result tables go to OUTDIR.
# Usage: bundle/run_gpu_suite.sh OUTDIR
#   TALLY_SUITE   parts to run (default "tests bench"; also "sweep")
#   TALLY_BENCH_ARGS  extra arguments for gpu_group_by_bench (e.g. "--log2-rows 24")
#   TALLY_SWEEP_ARGS  arguments for sweep_spaces (default: the H100 recording's,
#                     bench/tuner/RESULTS.md; the CSV goes to OUTDIR/spaces.csv)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run_gpu_suite.sh OUTDIR}
mkdir -p "$out"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
suite=${TALLY_SUITE:-tests bench}
status=0
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

note "bundle: $(head -n1 "$here/MANIFEST" 2>/dev/null)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'nvidia-smi unavailable')"
note "date:   $(date -u '+%Y-%m-%d %H:%M UTC')"

run_step() {  # name, log, command...
  local name=$1 log=$2
  shift 2
  local t0=$SECONDS
  if "$@" >"$log" 2>&1; then
    note "PASS  $name ($((SECONDS - t0)) s)"
  else
    note "FAIL  $name ($((SECONDS - t0)) s): see $(basename "$log")"
    tail -n 30 "$log"
    status=1
  fi
}

if [[ " $suite " == *" tests "* ]]; then
  run_step gpu_rules_test "$out/gpu_rules_test.log" "$here/bin/gpu_rules_test"
  run_step gpu_group_by_test "$out/gpu_group_by_test.log" "$here/bin/gpu_group_by_test"
  grep -E '^\[  (PASSED|SKIPPED|FAILED) ' "$out/gpu_group_by_test.log" | tee -a "$summary"
fi
if [[ " $suite " == *" bench "* ]]; then
  # shellcheck disable=SC2086
  run_step gpu_group_by_bench "$out/group_by_bench.txt" "$here/bin/gpu_group_by_bench" \
    --csv "$out/group_by_bench.csv" ${TALLY_BENCH_ARGS:-}
  cat "$out/group_by_bench.txt"
fi
if [[ " $suite " == *" sweep "* && -x "$here/bin/sweep_spaces" ]]; then
  # shellcheck disable=SC2086
  run_step sweep_spaces "$out/sweep_spaces.log" "$here/bin/sweep_spaces" --out "$out/spaces.csv" \
    ${TALLY_SWEEP_ARGS:---chunk-rows 16777216 --reps 3 --skip-factor 3 --deadline-s 350}
  tail -n 3 "$out/sweep_spaces.log"
fi
note "exit status: $status"
exit $status
