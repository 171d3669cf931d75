#!/bin/sh
# Entrypoint of the coordinator image (Dockerfile.coordinator), run as user postgres:
#   POSTGRES_PASSWORD  the password of the superuser "postgres" (SCRAM-SHA-256); required
#                      on first start, when the cluster is made in $PGDATA
# then init_coordinator.sh's variables (TALLY_SHARDS, TALLY_USER, TALLY_PASSWORD,
# SHARDED_TABLE, SHARDED_COLUMNS, SHARDED_KEY). The set-up runs until it has succeeded
# once (a marker file in $PGDATA), with the server on a Unix socket only, so the health
# check passes only when the sharded table is there. Then postgres runs in the foreground.
set -eu

fail() {
  echo "coordinator: $*" >&2
  exit 2
}

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -n "${POSTGRES_PASSWORD:-}" ] || fail "set POSTGRES_PASSWORD (the superuser's password) for the first start"
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" -U postgres --pwfile="$pwfile" -A scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  printf 'host all all 0.0.0.0/0 scram-sha-256\nhost all all ::/0 scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  echo "coordinator: made the cluster in $PGDATA"
fi

if [ ! -e "$PGDATA/tally_shards_ready" ]; then
  pg_ctl -D "$PGDATA" -w -t 60 -o "-c listen_addresses='' -k /tmp" -l /tmp/setup.log start >/dev/null
  if init_coordinator.sh; then
    touch "$PGDATA/tally_shards_ready"
  else
    pg_ctl -D "$PGDATA" -w -m fast stop >/dev/null
    fail "init_coordinator.sh failed; it runs again on the next start"
  fi
  pg_ctl -D "$PGDATA" -w -m fast stop >/dev/null
fi

exec postgres -D "$PGDATA" -c listen_addresses='*' -k /tmp "$@"
