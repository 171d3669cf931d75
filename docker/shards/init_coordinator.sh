#!/bin/sh
# Attaches Tally shards to this PostgreSQL coordinator and makes one table hash-partitioned
# across them (docs/sharding.md explains the layout). Idempotent. The entrypoint runs it on
# first start; psql's PG* variables say where the coordinator is (default: the container's
# socket in /tmp as postgres, with POSTGRES_PASSWORD). Another table later:
#   docker-compose exec -e SHARDED_TABLE=t -e SHARDED_COLUMNS='k int, v int' coordinator init_coordinator.sh
#   TALLY_SHARDS     host:port of each shard, comma-separated, in order; shard i holds
#                    the rows whose hash of the key is i modulo the number of shards
#   TALLY_USER       the shards' user (default tally), TALLY_PASSWORD its password
#   SHARDED_TABLE    the table (default sales), SHARDED_COLUMNS its column definitions,
#                    SHARDED_KEY the distribution key (default: the first column)
# On each shard it creates the table (CREATE TABLE IF NOT EXISTS); on the coordinator the
# extension postgres_fdw, a server per shard (use_remote_estimate, so the coordinator plans
# from Tally's EXPLAIN; batch_size, so an INSERT sends 1000 rows per statement), a user
# mapping for PUBLIC, the partitioned table and one foreign partition per shard.
set -eu

fail() {
  echo "init_coordinator: $*" >&2
  exit 1
}

[ -n "${TALLY_SHARDS:-}" ] || fail "set TALLY_SHARDS (host:port,host:port,...)"
[ -n "${TALLY_PASSWORD:-}" ] || fail "set TALLY_PASSWORD (the shards' password)"
[ -n "${SHARDED_COLUMNS:-}" ] || fail "set SHARDED_COLUMNS (e.g. 'id bigint, region text')"
export PGHOST="${PGHOST:-/tmp}" PGUSER="${PGUSER:-postgres}" PGDATABASE="${PGDATABASE:-postgres}"
export PGPASSWORD="${PGPASSWORD:-${POSTGRES_PASSWORD:-}}"
user=${TALLY_USER:-tally}
table=${SHARDED_TABLE:-sales}
key=${SHARDED_KEY:-${SHARDED_COLUMNS%% *}}
shards=$(echo "$TALLY_SHARDS" | tr ',' ' ')
count=$(echo "$shards" | wc -w)
# Values go into SQL string literals: quotes doubled.
literal() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/''/g")"; }

coordinator() { psql -X -q -v ON_ERROR_STOP=1 -c "$1"; }
coordinator "CREATE EXTENSION IF NOT EXISTS postgres_fdw"
coordinator "CREATE TABLE IF NOT EXISTS $table ($SHARDED_COLUMNS) PARTITION BY HASH ($key)"
i=0
for shard in $shards; do
  host=${shard%:*}
  port=${shard##*:}
  tries=0
  until pg_isready -q -h "$host" -p "$port" -t 3; do
    tries=$((tries + 1))
    [ "$tries" -lt 60 ] || fail "shard $host:$port does not answer"
    sleep 1
  done
  PGPASSWORD=$TALLY_PASSWORD psql -X -q -v ON_ERROR_STOP=1 -h "$host" -p "$port" -U "$user" -d tally \
    -c "CREATE TABLE IF NOT EXISTS $table ($SHARDED_COLUMNS)" || fail "could not create $table on $host:$port"
  coordinator "CREATE SERVER IF NOT EXISTS shard$i FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host $(literal "$host"),
    port $(literal "$port"), dbname 'tally', use_remote_estimate 'true', fetch_size '10000', batch_size '1000')"
  coordinator "CREATE USER MAPPING IF NOT EXISTS FOR PUBLIC SERVER shard$i OPTIONS (user $(literal "$user"),
    password $(literal "$TALLY_PASSWORD"))"
  coordinator "CREATE FOREIGN TABLE IF NOT EXISTS ${table}_$i PARTITION OF $table
    FOR VALUES WITH (MODULUS $count, REMAINDER $i) SERVER shard$i OPTIONS (table_name $(literal "$table"))"
  echo "init_coordinator: ${table}_$i on $host:$port (remainder $i of $count)"
  i=$((i + 1))
done
