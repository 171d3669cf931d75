#!/usr/bin/env bash
# docker_shards: the sharded example (docker/shards/docker-compose.yml) with a real Docker
# engine. Builds the Debian 12 base, the Tally CPU image and the PostgreSQL 15 coordinator
# image (both on the debootstrapped base), brings up the coordinator and three Tally shards,
# waits for the coordinator's health check (healthy once init_coordinator.sh attached the
# shards), loads 30,000 rows with scripts/shard_load.py through the coordinator, and checks
# with psql: each region's count and sum as awk computes them from the same CSV, every shard
# holding rows and exactly its partition's, the GROUP BY on the distribution key pushed to
# the shards; then tears everything down with its volumes.
#
# Docker as docker_compose_test.sh: starts dockerd when none runs; TALLY_SKIP_DOCKER_TEST=1
# reports a skip (exit 77) where Docker cannot run.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

test_name=docker_shards
# shellcheck source=tests/ops/docker_lib.sh
source tests/ops/docker_lib.sh

test_start=$SECONDS
image=tally:cpu-test
coordinator_image=tally/pg-coordinator:15-test
tmp=$(mktemp -d /tmp/tally-docker-shards.XXXXXX)
project=tallyshards$$
compose() { docker-compose -p "$project" -f "$repo/docker/shards/docker-compose.yml" --env-file "$tmp/test.env" "$@"; }

cleanup() {
  local status=$?
  if [ -e "$tmp/test.env" ]; then
    ((status == 0)) || compose logs --no-color --tail 30 >&2 2>&1 || true
    compose down -v --remove-orphans >/dev/null 2>&1 || true
  fi
  docker_engine_down
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT

# ---- images ---------------------------------------------------------------------
docker_engine_up
build_cpu_image "$image" "$tmp/build.log"
start=$SECONDS
DOCKER_BUILDKIT=0 docker build -f docker/shards/Dockerfile.coordinator -t "$coordinator_image" docker/shards \
  >>"$tmp/coordinator-build.log" 2>&1 || { tail -n 40 "$tmp/coordinator-build.log" >&2; fail "coordinator image"; }
say "coordinator image built in $((SECONDS - start)) s:" \
    "$(docker image inspect -f '{{.Size}}' "$coordinator_image" | awk '{ printf "%.0f MB", $1 / 1e6 }')"

# ---- up -------------------------------------------------------------------------
port=$(free_port)
password="pw-$RANDOM-$RANDOM"
cat >"$tmp/test.env" <<ENV
TALLY_PASSWORD=$password
POSTGRES_PASSWORD=coord-$RANDOM-$RANDOM
TALLY_CPU_IMAGE=$image
TALLY_COORDINATOR_IMAGE=$coordinator_image
COORDINATOR_PORT=$port
ENV
coordinator_password=$(sed -n 's/^POSTGRES_PASSWORD=//p' "$tmp/test.env")
up_start=$SECONDS
compose up -d --no-build >"$tmp/up.log" 2>&1 || { cat "$tmp/up.log" >&2; fail "compose up"; }
id=$(compose ps -q coordinator)
[ -n "$id" ] || fail "no coordinator container"
while :; do
  status=$(docker inspect -f '{{.State.Health.Status}}' "$id")
  [ "$status" = healthy ] && break
  ((SECONDS - up_start < 240)) || fail "coordinator not healthy after 240 s (status $status)"
  sleep 2
done
say "coordinator and 3 shards up, coordinator healthy after $((SECONDS - up_start)) s"

# ---- load and query ---------------------------------------------------------------
conninfo="host=127.0.0.1 port=$port user=postgres dbname=postgres connect_timeout=10"
sql() { PGPASSWORD=$coordinator_password psql -X -q -A -t -v ON_ERROR_STOP=1 "$conninfo" "$@"; }
shard_sql() {  # shard_sql N SQL: psql inside shard N's container (the shards publish no port)
  compose exec -T -e PGPASSWORD="$password" "shard$1" psql -X -q -A -t -v ON_ERROR_STOP=1 \
    -h 127.0.0.1 -U tally -d tally -c "$2"
}
rows=30000
awk -v n=$rows 'BEGIN { print "id,region,amount"
  for (i = 1; i <= n; i++) printf "%d,r%d,%d.%02d\n", i, i % 7, (i * 37) % 100000 / 100, (i * 37) % 100 }' \
  >"$tmp/sales.csv"
# Expected groups, in integer cents, from the CSV alone.
expected=$(awk -F, 'NR > 1 { split($3, p, "."); c[$2] += p[1] * 100 + p[2]; n[$2]++ }
  END { for (r in c) printf "%s|%d|%d.%02d\n", r, n[r], c[r] / 100, c[r] % 100 }' "$tmp/sales.csv" | sort)
PGPASSWORD=$coordinator_password python3 scripts/shard_load.py --coordinator "$conninfo" --table sales --header \
  --progress-rows 10000 "$tmp/sales.csv" >"$tmp/load.log" 2>&1 || { cat "$tmp/load.log" >&2; fail "shard_load.py"; }
grep -q "loaded $rows rows into sales" "$tmp/load.log" || fail "shard_load.py: $(cat "$tmp/load.log")"
sed 's/^/  /' "$tmp/load.log"

query='SELECT region, count(*), sum(amount) FROM sales GROUP BY region ORDER BY region'
[ "$(sql -c "$query")" = "$expected" ] || fail "GROUP BY region: $(sql -c "$query") expected $expected"
total=0
for i in 1 2 3; do
  on_shard=$(shard_sql "$i" 'SELECT count(*) FROM sales' | tr -d '\r')
  partition=$(sql -c "SELECT count(*) FROM sales_$((i - 1))")
  ((on_shard > 0)) || fail "shard$i holds no row"
  [ "$on_shard" = "$partition" ] || fail "shard$i holds $on_shard rows, partition sales_$((i - 1)) $partition"
  total=$((total + on_shard))
done
((total == rows)) || fail "the shards hold $total rows, not $rows"
sql -c 'ANALYZE sales'
plan=$(sql -c 'SET enable_partitionwise_aggregate = on' -c 'EXPLAIN VERBOSE SELECT id, sum(amount) FROM sales GROUP BY id')
pushed=$(grep -c 'Remote SQL: SELECT id, sum(amount) FROM public.sales GROUP BY 1' <<<"$plan" || true)
((pushed == 3)) || fail "GROUP BY id not pushed to the 3 shards: $plan"
sums=$(sql -c 'SET enable_partitionwise_aggregate = on' -c 'SELECT count(*), sum(s) FROM (SELECT id, sum(amount) AS s FROM sales GROUP BY id) t')
want=$(awk -F, 'NR > 1 { split($3, p, "."); c += p[1] * 100 + p[2] } END { printf "%d|%d.%02d", NR - 1, c / 100, c % 100 }' "$tmp/sales.csv")
[ "$sums" = "$want" ] || fail "partitionwise GROUP BY id: $sums expected $want"
say "loaded $rows rows through the coordinator; per-region sums, shard placement and the pushed-down GROUP BY as expected"

# ---- teardown -------------------------------------------------------------------
compose down -v >/dev/null 2>&1 || fail "compose down -v"
left=$(docker volume ls -q | grep -c "^${project}_" || true)
((left == 0)) || fail "compose down -v left $left volumes"
rm -f "$tmp/test.env"
say "passed in $((SECONDS - test_start)) s (compose part $((SECONDS - up_start)) s)"
