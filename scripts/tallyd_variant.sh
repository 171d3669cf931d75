#!/usr/bin/env bash
# Starts one of several tallyd builds, or one build under a given
# environment, for a benchmark that times configurations side by side
# (h2o_bench's --tallyd-args, given once per configuration; tpch_bench takes
# one configuration a run): the arguments BIN=NAME (run DIR/NAME instead of DIR/tallyd) and
# ENV=VARIABLE=VALUE (exported first) are taken out, the others passed on.
# DIR is TALLY_VARIANT_DIR, by default the bin/ beside this script (the
# bundle's layout: scripts/make_gpu_bundle.sh copies it to bundle/).
# Usage: h2o_bench --tallyd bundle/tallyd_variant.sh --tallyd-args "BIN=tallyd_base" --tallyd-args "BIN=tallyd" ...
set -euo pipefail
dir=${TALLY_VARIANT_DIR:-$(cd "$(dirname "$0")" && pwd)/bin}
bin=tallyd
args=()
for a in "$@"; do
  case "$a" in
    BIN=*) bin=${a#BIN=} ;;
    ENV=*=*) export "${a#ENV=}" ;;
    *) args+=("$a") ;;
  esac
done
exec "$dir/$bin" "${args[@]}"
