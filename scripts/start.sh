#!/usr/bin/env bash
# Sets up, builds and starts tallyd on the embedded default: data in ./tally-data,
# SQLite catalog, the GPU if one is present, else the CPU engine. Connect with
#   psql -h 127.0.0.1 -p ${TALLY_PORT:-5432} -U tally tally
# Extra arguments go to tallyd (see build/tallyd --help), e.g.
#   scripts/start.sh --port 5440 --data-dir /var/lib/tally
# TALLY_* variables (TALLY_PORT, TALLY_DATA_DIR, ...) are read by tallyd itself
# and win over flags, as everywhere in Tally's configuration.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
# The port the message names: TALLY_PORT, else the last --port flag, else the default.
port=5432
previous=""
for arg in "$@"; do
  case "$arg" in
    --port=*) port=${arg#--port=} ;;
    *) [ "$previous" = "--port" ] && port=$arg ;;
  esac
  previous=$arg
done
port=${TALLY_PORT:-$port}
echo "start: tallyd on port $port; connect with: psql -h 127.0.0.1 -p $port -U tally tally"
exec "${TALLY_BUILD_DIR:-build}/tallyd" "$@"
