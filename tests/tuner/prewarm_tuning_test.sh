#!/usr/bin/env bash
# scripts/prewarm_tuning.sh against a PostgreSQL 15 standing in for tallyd (the
# script only speaks psql): a table named tally_tuning_cache with the view's
# columns, and a workload that adds one entry per pass, so the per-pass
# progress lines must report +1 entry each time. Also: --help, a missing file,
# a failing statement (exit 1, no further passes).
set -euo pipefail
script="$(cd "$(dirname "$0")/../.." && pwd)/scripts/prewarm_tuning.sh"
bin=/usr/lib/postgresql/15/bin
if [[ ! -x $bin/initdb ]] || ! command -v psql >/dev/null; then
  echo "SKIP: PostgreSQL 15 or psql not installed"
  exit 0
fi
dir=$(mktemp -d /tmp/tally-prewarm-XXXXXX)
as=()
if [[ $(id -u) -eq 0 ]]; then chown postgres "$dir"; as=(runuser -u postgres --); fi
port=$((20000 + RANDOM % 20000))
cleanup() { "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
"${as[@]}" "$bin/initdb" -D "$dir/data" -A trust -U tally >/dev/null
"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -o "-p $port -k $dir -c listen_addresses=127.0.0.1" start >/dev/null
psql=(psql -X -q -h 127.0.0.1 -p "$port" -U tally)
"${psql[@]}" -d postgres -c "CREATE DATABASE tally"
"${psql[@]}" -d tally -c "CREATE TABLE tally_tuning_cache (signature text, variant text, bucket int, configuration text,
  ns_per_row float8, observations bigint, source text, converged bool)"
cat >"$dir/workload.sql" <<'SQL'
SELECT 1;
INSERT INTO tally_tuning_cache VALUES ('key=int4', 'global', 16, 'tpb=256,bps=4,ff=50,rpt=1', 0.04, 2, 'search', true);
SQL
fail() { echo "FAIL: $*"; exit 1; }

"$script" --help | grep -q "usage: scripts/prewarm_tuning.sh" || fail "--help"
out=$("$script" --port "$port" --passes 3 "$dir/workload.sql")
echo "$out"
grep -q "cache before: 0 entries, 0 observations" <<<"$out" || fail "initial cache state"
for i in 1 2 3; do
  grep -Eq "^pass $i/3: [0-9.]+ s, cache $i entries \(\+1\), $((2 * i)) observations \(\+2\)" <<<"$out" || fail "pass $i line"
done
grep -q "tpb=256,bps=4,ff=50,rpt=1" <<<"$out" || fail "cache summary"

if "$script" --port "$port" "$dir/missing.sql" 2>/dev/null; then fail "a missing file must fail"; fi
echo "SELEC 1;" >"$dir/bad.sql"
set +e
bad=$("$script" --port "$port" --passes 4 "$dir/bad.sql" 2>&1)
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "a failing statement must exit 1 (got $rc)"
grep -q "pass 1/4 failed" <<<"$bad" || fail "failure line"
if grep -q "pass 2/4" <<<"$bad"; then fail "no pass after a failure"; fi
echo "PASS"
