#!/usr/bin/env bash
# Sets up, builds and starts tallyd on the embedded default: data in ./tally-data,
# SQLite catalog, the GPU if one is present, else the CPU engine. Connect with
#   psql -h 127.0.0.1 -p ${TALLY_PORT:-5432} -U tally tally
# Extra arguments go to tallyd (see build/tallyd --help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
port=${TALLY_PORT:-5432}
echo "start: tallyd on port $port; connect with: psql -h 127.0.0.1 -p $port -U tally tally"
exec "${TALLY_BUILD_DIR:-build}/tallyd" --port "$port" --data-dir "${TALLY_DATA_DIR:-tally-data}" "$@"
