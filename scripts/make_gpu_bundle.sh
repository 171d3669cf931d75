#!/usr/bin/env bash
# Builds the CUDA-enabled tree here for sm_90 (static cudart) into build-gpu/
# and packs a self-contained bundle into bundle/ (git-ignored): the GPU test
# and benchmark binaries, tallyd when it builds, the shared libraries they
# need that the GPU machine lacks (bundle/lib), scripts/run_gpu_suite.sh,
# scripts/tallyd_variant.sh (several tallyd builds timed side by side), and
# DuckDB's libduckdb.so (bundle/duckdb, from scripts/fetch_duckdb.sh) for the
# H2O groupby, TPC-H and ClickBench-style comparisons (run_gpu_suite.sh parts
# h2o, tpch and clickbench).
# Usage: scripts/make_gpu_bundle.sh   (env: CMAKE_BUILD_TYPE (default Release), TALLY_GPU_BUILD_DIR, TALLY_BUNDLE_DIR (default bundle), JOBS,
#   TALLY_BUNDLE_OPTIONAL: other layers' targets to add, default "tallyd sweep_spaces";
#   TALLY_BUNDLE_DUCKDB=0 leaves DuckDB out: it adds ~70 MB, ~15 MB packed;
#   TALLY_BUNDLE_PERF=1 adds this machine's perf and the libraries it needs (bundle/perf, ~28 MB,
#   ~7 MB packed; `apt-get install linux-perf` first) for run_gpu_suite.sh's TALLY_PROFILE)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TALLY_GPU_BUILD_DIR:-build-gpu}
jobs=${JOBS:-2}
bundle=${TALLY_BUNDLE_DIR:-bundle}

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}" -DTALLY_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 >"$build.configure.log" 2>&1 || {
  cat "$build.configure.log"
  exit 1
}

required=(gpu_rules_test gpu_group_by_test gpu_group_by_bench)
read -r -a optional <<<"${TALLY_BUNDLE_OPTIONAL-tallyd sweep_spaces}"
# The GPU engine in the query path (column cache, GPU-vs-CPU queries, end to
# end through tallyd): always packed when they build; they need the executor.
optional+=(gpu_column_cache_test gpu_differential_test gpu_top_codes_test gpu_e2e_bench)
# The H2O groupby questions, TPC-H and ClickBench's queries against DuckDB
# through tallyd (bench/h2o, bench/tpch, bench/clickbench).
optional+=(h2o_bench h2o_datagen tpch_bench tpch_datagen hits_datagen)
available=$(ninja -C "$build" -t targets all 2>/dev/null | sed 's/:.*//')
targets=("${required[@]}")
for t in "${optional[@]+"${optional[@]}"}"; do
  if grep -qx "$t" <<<"$available"; then targets+=("$t"); fi
done
nice ninja -C "$build" -j"$jobs" "${required[@]}"
# Optional targets belong to other layers and may not build at a given moment;
# one that does not is left out (not an older build of it).
built=("${required[@]}")
for t in "${targets[@]:${#required[@]}}"; do
  if nice ninja -C "$build" -j"$jobs" "$t"; then built+=("$t"); else echo "make_gpu_bundle: optional target $t did not build; left out" >&2; fi
done
targets=("${built[@]}")

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
for t in "${targets[@]}"; do
  f=$(find "$build" -type f -name "$t" -perm -u+x | head -n1)
  [ -n "$f" ] || continue
  cp "$f" "$bundle/bin/"
  strip --strip-debug "$bundle/bin/$t"
done

# Shared libraries the GPU machine (Ubuntu 24.04 + CUDA 13, no libpq, no
# libpg_query, no fmt) may lack. The C/C++ runtime and the driver stay its own.
skip='^(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux.*|libcuda|libnvidia.*)\.so'
for b in "$bundle"/bin/*; do
  ldd "$b" | awk '/=> \// {print $3}' | while read -r lib; do
    name=$(basename "$lib")
    if ! grep -Eq "$skip" <<<"$name"; then cp -L -n "$lib" "$bundle/lib/" 2>/dev/null || true; fi
  done
done

cp scripts/run_gpu_suite.sh scripts/tallyd_variant.sh "$bundle/"
# tpch_bench's queries and schema: its compiled-in path is this machine's.
if [ -x "$bundle/bin/tpch_bench" ]; then
  mkdir -p "$bundle/tpch"
  cp ../shared/tpch/queries.sql ../shared/tpch/schema.sql "$bundle/tpch/"
  mkdir -p "$bundle/clickbench"
  cp bench/clickbench/queries.sql bench/clickbench/schema.sql "$bundle/clickbench/"
fi
# Loaded by h2o_bench with dlopen, so ldd above does not see it.
duckdb_version=none
if [ "${TALLY_BUNDLE_DUCKDB:-1}" != 0 ] && { [ -x "$bundle/bin/h2o_bench" ] || [ -x "$bundle/bin/tpch_bench" ]; }; then
  if duckdb_lib=$(scripts/fetch_duckdb.sh); then
    mkdir -p "$bundle/duckdb"
    cp "$duckdb_lib" "$(dirname "$duckdb_lib")/LICENSE" "$bundle/duckdb/"
    duckdb_version=$(cat "$(dirname "$duckdb_lib")/VERSION")
  else
    echo "make_gpu_bundle: DuckDB could not be fetched; parts h2o and tpch will not run" >&2
  fi
fi
# perf for profiling tallyd on the GPU machine, which has none: the binary
# and every library it loads but the C runtime.
if [ "${TALLY_BUNDLE_PERF:-0}" = 1 ]; then
  perf_bin=$(command -v perf) || { echo "make_gpu_bundle: TALLY_BUNDLE_PERF=1 but perf is not installed" >&2; exit 1; }
  mkdir -p "$bundle/perf/lib"
  cp -L "$perf_bin" "$bundle/perf/perf"
  ldd "$perf_bin" | awk '/=> \// {print $3}' | while read -r lib; do
    name=$(basename "$lib")
    if ! grep -Eq '^(libc|libm|libstdc\+\+|libgcc_s|ld-linux.*)\.so' <<<"$name"; then cp -L -n "$lib" "$bundle/perf/lib/"; fi
  done
fi
{
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (dirty)')"
  echo "built: $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -m), nvcc $(/usr/local/cuda/bin/nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), sm_90"
  echo "binaries: $(cd "$bundle/bin" && ls | tr '\n' ' ')"
  echo "libraries: $(cd "$bundle/lib" && ls | tr '\n' ' ')"
  echo "duckdb: $duckdb_version (npm @duckdb/node-bindings-linux-x64)"
} >"$bundle/MANIFEST"
cat "$bundle/MANIFEST"
du -sh "$bundle"
