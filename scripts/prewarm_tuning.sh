#!/usr/bin/env bash
# Pre-warms tallyd's per-device tuning cache: runs a representative workload
# (a SQL file of the GROUP BY queries the application will send) N times
# through psql against a running tallyd, so the tuner's searches converge and
# are persisted before users' queries arrive. Prints one line per pass and,
# at the end, what the cache holds (SELECT ... FROM tally_tuning_cache).
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: scripts/prewarm_tuning.sh [options] WORKLOAD.sql

Runs WORKLOAD.sql through psql PASSES times against a running tallyd so that the
tuning cache (device x query x variant x group-count bucket) is warm. Each
statement's result is discarded; an error stops the run (ON_ERROR_STOP).

options:
  -h, --host HOST      tallyd host            (default: $PGHOST or 127.0.0.1)
  -p, --port PORT      tallyd port            (default: $TALLY_PORT, $PGPORT or 5432)
  -U, --user USER      user                   (default: $PGUSER or tally)
  -d, --dbname DB      database               (default: $PGDATABASE or tally)
  -n, --passes N       passes over the file   (default: 5)
  -q, --quiet          no cache summary at the end
      --help           this text

Each pass prints: pass i/N, seconds, and the change in tuning cache entries and
observations. Example:
  scripts/prewarm_tuning.sh --port 5440 --passes 10 bench/workload.sql
USAGE
}

host="${PGHOST:-127.0.0.1}"
port="${TALLY_PORT:-${PGPORT:-5432}}"
user="${PGUSER:-tally}"
dbname="${PGDATABASE:-tally}"
passes=5
quiet=0
workload=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--host) host="$2"; shift 2 ;;
    -p|--port) port="$2"; shift 2 ;;
    -U|--user) user="$2"; shift 2 ;;
    -d|--dbname) dbname="$2"; shift 2 ;;
    -n|--passes) passes="$2"; shift 2 ;;
    -q|--quiet) quiet=1; shift ;;
    --help) usage; exit 0 ;;
    -*) echo "prewarm_tuning.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *)
      if [[ -n "$workload" ]]; then echo "prewarm_tuning.sh: one workload file only (see --help)" >&2; exit 2; fi
      workload="$1"; shift ;;
  esac
done
if [[ -z "$workload" ]]; then usage >&2; exit 2; fi
if [[ ! -r "$workload" ]]; then echo "prewarm_tuning.sh: cannot read $workload" >&2; exit 2; fi
if ! [[ "$passes" =~ ^[1-9][0-9]*$ ]]; then echo "prewarm_tuning.sh: --passes needs a positive integer" >&2; exit 2; fi
if ! command -v psql >/dev/null; then echo "prewarm_tuning.sh: psql not found (apt-get install postgresql-client)" >&2; exit 2; fi

psql_args=(-X -q -h "$host" -p "$port" -U "$user" -d "$dbname" -v ON_ERROR_STOP=1)

# "entries observations" of the tuning cache; "- -" when the view is unavailable.
cache_state() {
  local rows
  if rows=$(psql "${psql_args[@]}" -At -c "SELECT observations FROM tally_tuning_cache" 2>/dev/null); then
    awk 'NF { n++; s += $1 } END { print n + 0, s + 0 }' <<<"$rows"
  else
    echo "- -"
  fi
}

if ! psql "${psql_args[@]}" -At -c "SELECT 1" >/dev/null; then
  echo "prewarm_tuning.sh: cannot connect to tallyd at $host:$port (user $user, database $dbname)" >&2
  exit 1
fi

read -r entries observations < <(cache_state)
echo "prewarm: $workload x $passes against $host:$port/$dbname; cache before: $entries entries, $observations observations"
for ((pass = 1; pass <= passes; ++pass)); do
  start=$(date +%s.%N)
  if ! psql "${psql_args[@]}" -f "$workload" >/dev/null; then
    echo "prewarm: pass $pass/$passes failed (see psql's message above)" >&2
    exit 1
  fi
  end=$(date +%s.%N)
  read -r now_entries now_observations < <(cache_state)
  printf 'pass %d/%d: %.2f s, cache %s entries (%+d), %s observations (%+d)\n' "$pass" "$passes" \
    "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$now_entries" "$(( ${now_entries/-/0} - ${entries/-/0} ))" \
    "$now_observations" "$(( ${now_observations/-/0} - ${observations/-/0} ))"
  entries="$now_entries"
  observations="$now_observations"
done
if [[ $quiet -eq 0 ]]; then
  psql "${psql_args[@]}" -P pager=off -c \
    "SELECT signature, variant, bucket, configuration, ns_per_row, observations, source, converged
       FROM tally_tuning_cache ORDER BY signature, bucket, ns_per_row" 2>/dev/null || true
fi
