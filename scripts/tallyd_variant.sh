#!/usr/bin/env bash
# Starts one of several tallyd builds, or one build under a given
# environment, for a benchmark that times configurations side by side
# (h2o_bench's --tallyd-args, given once per configuration; tpch_bench takes
# one configuration a run): the arguments BIN=NAME (run DIR/NAME instead of DIR/tallyd),
# ENV=VARIABLE=VALUE (exported first) and WRAP=COMMAND (a command line, split at
# spaces, that runs the build: a profiler such as Nsight Compute's
# "ncu -k regex:shared_aggregate --launch-skip 12 --launch-count 4 -o /tmp/q4")
# are taken out, the others passed on.
# DIR is TALLY_VARIANT_DIR, by default the bin/ beside this script (the
# bundle's layout: scripts/make_gpu_bundle.sh copies it to bundle/).
# Usage: h2o_bench --tallyd bundle/tallyd_variant.sh --tallyd-args "BIN=tallyd_base" --tallyd-args "BIN=tallyd" ...
# The benchmarks start it through sh -c, so a WRAP with spaces is quoted there:
#   --tallyd-args "BIN=tallyd 'WRAP=ncu -k regex:shared_aggregate --launch-count 4 -o /tmp/q4'"
set -euo pipefail
dir=${TALLY_VARIANT_DIR:-$(cd "$(dirname "$0")" && pwd)/bin}
bin=tallyd
args=()
wrap=()
for a in "$@"; do
  case "$a" in
    BIN=*) bin=${a#BIN=} ;;
    ENV=*=*) export "${a#ENV=}" ;;
    WRAP=*) read -r -a wrap <<< "${a#WRAP=}" ;;
    *) args+=("$a") ;;
  esac
done
exec "${wrap[@]}" "$dir/$bin" "${args[@]}"
