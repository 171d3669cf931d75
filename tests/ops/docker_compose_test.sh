#!/usr/bin/env bash
# docker_compose: Tally deployed as docker/README.md says, with a real Docker engine.
# Builds the Debian 12 base (scripts/docker_base_image.sh, debootstrap) and the CPU image
# (docker/Dockerfile), brings the compose file's CPU service up alone (--profile cpu),
# waits for its health check, logs in with psql over SCRAM-SHA-256, loads rows with COPY
# and checks a GROUP BY, restarts the service and then recreates it (down, up) and finds
# the data each time, and tears everything down with its volume.
#
# Starts dockerd itself (as root) when no engine is running, and says so. When Docker
# cannot run here it fails with the reason; TALLY_SKIP_DOCKER_TEST=1 turns that into a
# skip that ctest reports as skipped (exit 77).
# Rebuilds are incremental: Docker's layer cache keeps the apt layers, and the build
# stage's ccache is kept in the image tally/cpu-build-cache and seeds the next build.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

test_name=docker_compose
# shellcheck source=tests/ops/docker_lib.sh
source tests/ops/docker_lib.sh

test_start=$SECONDS
image=tally:cpu-test
tmp=$(mktemp -d /tmp/tally-docker-test.XXXXXX)
project=tallytest$$
compose_file="$repo/docker/docker-compose.yml"
compose() { docker-compose -p "$project" -f "$compose_file" --env-file "$tmp/test.env" "$@"; }

cleanup() {
  local status=$?
  if [ -e "$tmp/test.env" ]; then
    ((status == 0)) || compose --profile cpu logs --no-color --tail 50 >&2 2>&1 || true
    compose --profile cpu down -v --remove-orphans >/dev/null 2>&1 || true
  fi
  docker_engine_down
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT

# ---- a Docker engine, the base and CPU image ---------------------------------------
docker_engine_up
build_cpu_image "$image" "$tmp/build.log"

# ---- compose up -----------------------------------------------------------------
port=$(free_port)
http_port=$(free_port)
password="pw-$RANDOM-$RANDOM"
cat >"$tmp/test.env" <<EOF
TALLY_PASSWORD=$password
TALLY_CPU_IMAGE=$image
TALLY_PUBLISHED_PORT=$port
TALLY_PUBLISHED_HTTP_PORT=$http_port
EOF

wait_healthy() {
  local id status t0=$SECONDS
  id=$(compose --profile cpu ps -q tally-cpu)
  [ -n "$id" ] || fail "no tally-cpu container"
  while :; do
    status=$(docker inspect -f '{{.State.Health.Status}}' "$id")
    [ "$status" = healthy ] && break
    ((SECONDS - t0 < 120)) || fail "tally-cpu not healthy after 120 s (status $status)"
    sleep 1
  done
  say "tally-cpu healthy $((SECONDS - t0)) s after $1"
}

up_start=$SECONDS
compose --profile cpu up -d --no-build >"$tmp/up.log" 2>&1 || { cat "$tmp/up.log" >&2; fail "compose up"; }
wait_healthy "compose up"
# --profile cpu starts the CPU service alone (the GPU service would clash on the ports).
services=$(docker ps --filter "label=com.docker.compose.project=$project" \
             --format '{{.Label "com.docker.compose.service"}}' | sort | paste -sd ' ')
[ "$services" = tally-cpu ] || fail "--profile cpu up started: $services"

# ---- SCRAM, COPY, GROUP BY ------------------------------------------------------
# The server's first answer to a startup message names SCRAM-SHA-256 (AuthenticationSASL).
python3 - "$port" <<'EOF' || fail "the server did not ask for SCRAM-SHA-256"
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
body = struct.pack("!i", 196608) + b"user\0tally\0database\0tally\0\0"
s.sendall(struct.pack("!i", len(body) + 4) + body)
kind, length = struct.unpack("!ci", s.recv(5))
payload = s.recv(length - 4)
code = struct.unpack("!i", payload[:4])[0]
assert kind == b"R" and code == 10 and b"SCRAM-SHA-256" in payload, (kind, code, payload)
EOF
sql() { PGPASSWORD=$password PGCONNECT_TIMEOUT=10 psql -X -q -A -t -v ON_ERROR_STOP=1 \
          -h 127.0.0.1 -p "$port" -U tally -d tally "$@"; }
if PGPASSWORD=wrong PGCONNECT_TIMEOUT=10 psql -X -h 127.0.0.1 -p "$port" -U tally -d tally \
     -c 'SELECT 1' >"$tmp/wrong.log" 2>&1; then
  fail "a wrong password was accepted"
fi
grep -q 'password authentication failed' "$tmp/wrong.log" || fail "wrong password: $(cat "$tmp/wrong.log")"

# 10,000 rows over 7 regions; amount in cents as numeric(12,2). awk computes the expected
# groups from the same CSV (integer arithmetic in cents), independently of the server.
awk 'BEGIN { for (i = 1; i <= 10000; i++) printf "r%d,%d,%d.%02d\n", i % 7, i, (i * 37) % 100000 / 100, (i * 37) % 100 }' \
  >"$tmp/sales.csv"
expected=$(awk -F, '{ split($3, p, "."); c[$1] += p[1] * 100 + p[2]; n[$1]++ }
  END { for (r in c) printf "%s|%d|%d.%02d\n", r, n[r], c[r] / 100, c[r] % 100 }' "$tmp/sales.csv" | sort)
sql -c 'CREATE TABLE sales (region text, id bigint, amount numeric(12,2))'
sql -c "\\copy sales FROM '$tmp/sales.csv' WITH (FORMAT csv)"
query='SELECT region, count(*), sum(amount) FROM sales GROUP BY region ORDER BY region'
[ "$(sql -c "$query")" = "$expected" ] || fail "GROUP BY after COPY: $(sql -c "$query") expected $expected"
say "SCRAM login, COPY of 10000 rows and GROUP BY over 7 regions as expected"

# The admin endpoint is off without a token: nothing answers on its published port.
if curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$http_port/metrics" 2>/dev/null &&
   [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$http_port/metrics")" = 200 ]; then
  fail "/metrics answered without a token"
fi

# ---- the data survives a restart and a recreated container ----------------------
compose --profile cpu restart tally-cpu >/dev/null 2>&1 || fail "compose restart"
wait_healthy "compose restart"
[ "$(sql -c "$query")" = "$expected" ] || fail "after restart: $(sql -c "$query")"
compose --profile cpu down >/dev/null 2>&1 || fail "compose down"
compose --profile cpu up -d --no-build >"$tmp/up.log" 2>&1 || { cat "$tmp/up.log" >&2; fail "compose up again"; }
wait_healthy "compose down and up"
[ "$(sql -c "$query")" = "$expected" ] || fail "after down and up: $(sql -c "$query")"
say "the data survived compose restart and compose down/up"

# ---- teardown -------------------------------------------------------------------
compose --profile cpu down -v >/dev/null 2>&1 || fail "compose down -v"
if docker volume ls -q | grep -q "^${project}_tally-data$"; then
  fail "compose down -v left the volume ${project}_tally-data"
fi
rm -f "$tmp/test.env"
say "passed in $((SECONDS - test_start)) s (compose part $((SECONDS - up_start)) s)"
