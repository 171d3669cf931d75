#!/usr/bin/env bash
# Installs what tallyd needs, builds tallyd alone (not the tests or benchmarks) and
# starts it on the embedded default: data in ./tally-data, SQLite catalog, the GPU if
# one is present, else the CPU engine. Once the server accepts connections it prints
#   psql -h 127.0.0.1 -p PORT -U tally tally
# Extra arguments go to tallyd (see build/tallyd --help), e.g.
#   scripts/start.sh --port 5440 --data-dir /var/lib/tally
# TALLY_* variables (TALLY_PORT, TALLY_DATA_DIR, ...) are read by tallyd itself
# and win over flags, as everywhere in Tally's configuration.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac

# The address and port the server will use: TALLY_* wins, else the last flag, else the default.
port=5432
address=127.0.0.1
previous=""
for arg in "$@"; do
  case "$arg" in
    --port=*) port=${arg#--port=} ;;
    --listen-address=*) address=${arg#--listen-address=} ;;
    *) [ "$previous" = "--port" ] && port=$arg
       [ "$previous" = "--listen-address" ] && address=$arg ;;
  esac
  previous=$arg
done
port=${TALLY_PORT:-$port}
address=${TALLY_LISTEN_ADDRESS:-$address}
case "$address" in 0.0.0.0|::|"*") probe=127.0.0.1 ;; *) probe=$address ;; esac

accepting() { (exec 3<>"/dev/tcp/$probe/${1:-$port}") 2>/dev/null; }
port_in_use() {
  local other=$((port + 1))
  while accepting "$other" && ((other < port + 100)); do other=$((other + 1)); done
  echo "start: port $port on $probe is already in use (a PostgreSQL server?)." >&2
  echo "start: stop that server, or start Tally on another port: scripts/start.sh --port $other" \
       "(free now)" >&2
}

# Before the build: a port already taken (a PostgreSQL installed on this host listens on
# 5432) is said now, with the way out, rather than after minutes of building.
if accepting; then
  port_in_use
  exit 1
fi

scripts/setup.sh
echo "start: building tallyd (the first build takes several minutes)"
TALLY_BUILD_TARGETS=tallyd scripts/build.sh -DTALLY_BUILD_TESTS=OFF -DTALLY_BUILD_BENCH=OFF

"${TALLY_BUILD_DIR:-build}/tallyd" "$@" &
server=$!
trap 'kill -TERM "$server" 2>/dev/null' INT TERM
for _ in $(seq 1 600); do
  if ! kill -0 "$server" 2>/dev/null; then
    wait "$server" && status=0 || status=$?
    echo "start: tallyd exited with status $status before accepting connections" >&2
    # Taken while tallyd was being built.
    accepting && port_in_use
    exit "$status"
  fi
  accepting && break
  sleep 0.1
done
if accepting; then
  echo "start: tallyd is accepting connections; connect with: psql -h $probe -p $port -U tally tally"
else
  echo "start: tallyd has not accepted a connection on $probe:$port after 60 s; still waiting on it" >&2
fi
# Ctrl-C or SIGTERM reach tallyd through the trap; its exit status is ours.
status=0
while :; do
  wait "$server" && status=0 || status=$?
  kill -0 "$server" 2>/dev/null || break
done
exit "$status"
