#!/usr/bin/env bash
# Fetches DuckDB's C library, the comparison system of bench/h2o, from the npm
# package @duckdb/node-bindings-linux-x64 (npm's registry is reachable where
# DuckDB's release downloads may not be) into .duckdb/ (git-ignored), and prints
# the path of libduckdb.so. h2o_bench loads it with dlopen: nothing of DuckDB is
# linked or committed.
# Usage: scripts/fetch_duckdb.sh   (env: DUCKDB_NPM_VERSION, default 1.5.6-r.1;
#   TALLY_DUCKDB_DIR, default .duckdb)
set -euo pipefail
cd "$(dirname "$0")/.."
version=${DUCKDB_NPM_VERSION:-1.5.6-r.1}
dest=${TALLY_DUCKDB_DIR:-.duckdb}
if [ -f "$dest/libduckdb.so" ] && [ "$(cat "$dest/VERSION" 2>/dev/null)" = "$version" ]; then
  echo "$dest/libduckdb.so"
  exit 0
fi
command -v npm >/dev/null || { echo "fetch_duckdb: npm is needed (apt-get install npm)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "@duckdb/node-bindings-linux-x64@$version" >/dev/null)
tar -xzf "$tmp"/*.tgz -C "$tmp" package/libduckdb.so package/LICENSE
mkdir -p "$dest"
mv "$tmp/package/libduckdb.so" "$tmp/package/LICENSE" "$dest/"
echo "$version" >"$dest/VERSION"
echo "$dest/libduckdb.so"
