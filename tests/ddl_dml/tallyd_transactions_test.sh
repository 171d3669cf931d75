#!/usr/bin/env bash
# Transaction blocks through the real server (psql, i.e. libpq):
#  1. two sessions: rows, tables and TRUNCATEs of an open block are invisible
#     to the other session until COMMIT, visible after; a second writer of the
#     same table waits for the block and then commits too (no lost commit);
#  2. kill -9 of tallyd while a block holds uncommitted INSERT, COPY, CREATE
#     TABLE and TRUNCATE: after restart nothing of the block is left, and the
#     files it wrote are gone; a block committed before the kill is whole;
#  3. UPDATE and DELETE that returned survive kill -9; a killed block's don't.
# Usage: tallyd_transactions_test.sh TALLYD
set -euo pipefail
tallyd=$1
[ -x "$tallyd" ] || { echo "not an executable: $tallyd"; exit 1; }
work=$(mktemp -d /tmp/tally_txn_test.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  exec 3>&- 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
port=$((20000 + RANDOM % 20000))
while (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; do port=$((port + 1)); done
psql_t() { timeout 60 psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U tally -d tally "$@"; }
value() { psql_t -At -c "$1"; }
expect() {  # expect WHAT SQL VALUE
  local got
  got=$(value "$2" 2>&1 || true)
  if [ "$got" != "$3" ]; then echo "FAIL $1: '$2' gave '$got', expected '$3'"; cat "$work/tallyd.log" | tail -n 20; exit 1; fi
  echo "ok   $1"
}
expect_missing() {  # expect_missing WHAT TABLE
  local got
  got=$(value "SELECT 1 FROM $2" 2>&1 || true)
  case "$got" in *"relation \"$2\" does not exist"*) echo "ok   $1" ;; *) echo "FAIL $1: got '$got'"; exit 1 ;; esac
}
start_tallyd() {
  "$tallyd" --port "$port" --data-dir "$work/data" --chunk-rows 1024 >>"$work/tallyd.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do
    psql_t -c 'select 1' >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "tallyd did not start"; cat "$work/tallyd.log"; exit 1
}
# Session 1 is a psql reading statements from a FIFO; `mark NAME` returns once
# every statement sent before it has finished.
open_session() {
  rm -f "$work/s1"; mkfifo "$work/s1"
  psql_t <"$work/s1" >"$work/s1.out" 2>&1 &
  session_pid=$!
  exec 3>"$work/s1"
}
send() { echo "$1" >&3; }
mark() {
  send "\\! touch $work/$1"
  for _ in $(seq 1 600); do [ -e "$work/$1" ] && return 0; sleep 0.05; done
  echo "session 1 did not reach $1"; cat "$work/s1.out"; exit 1
}

start_tallyd
psql_t -c "CREATE TABLE t (id int NOT NULL, label text)" -c "INSERT INTO t VALUES (1, 'committed')"

# 1. Visibility between two sessions.
open_session
send "BEGIN;"
send "INSERT INTO t VALUES (2, 'block');"
send "CREATE TABLE fresh (x int);"
send "INSERT INTO fresh VALUES (42);"
mark inserted
expect "other session does not see uncommitted rows" "SELECT count(*) FROM t" "1"
expect_missing "other session does not see an uncommitted table" fresh
# A second writer of t waits for the block, then commits after it.
psql_t -c "INSERT INTO t VALUES (3, 'waiter')" &
waiter=$!
sleep 1
kill -0 "$waiter" 2>/dev/null || { echo "FAIL the second writer did not wait for the block"; exit 1; }
echo "ok   a second writer of the table waits for the open block"
send "COMMIT;"
mark committed
wait "$waiter" || { echo "FAIL the waiting INSERT failed"; exit 1; }
expect "after COMMIT both writers' rows are there" "SELECT id FROM t ORDER BY id" "$(printf '1\n2\n3')"
expect "after COMMIT the table is there" "SELECT x FROM fresh" "42"

send "BEGIN;"
send "TRUNCATE t;"
send "INSERT INTO t VALUES (4, 'after truncate');"
mark truncated
expect "an uncommitted TRUNCATE is invisible" "SELECT count(*) FROM t" "3"
send "ROLLBACK;"
mark rolled_back
expect "a rolled-back TRUNCATE leaves the table" "SELECT id FROM t ORDER BY id" "$(printf '1\n2\n3')"
send "\\q"
exec 3>&-
wait "$session_pid" || true

# 2. kill -9 with an open block.
files_before=$(find "$work/data/tables" -type f | sort)
seq 1001 6000 | awk '{ print $1 ",copied " $1 }' >"$work/rows.csv"
open_session
send "BEGIN;"
send "INSERT INTO t SELECT id + 100, label FROM t;"
send "\\copy t from '$work/rows.csv' (format csv)"
send "CREATE TABLE doomed AS SELECT * FROM t;"
send "TRUNCATE fresh;"
mark pending
expect "the block's COPY wrote chunk files" "SELECT count(*) FROM t" "3"
[ "$(find "$work/data/tables" -type f | wc -l)" -gt "$(echo "$files_before" | wc -l)" ] ||
  { echo "FAIL the block wrote no files before the kill"; exit 1; }
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""
exec 3>&-
wait "$session_pid" 2>/dev/null || true
start_tallyd
expect "after kill -9 before COMMIT no row of the block is left" "SELECT id FROM t ORDER BY id" "$(printf '1\n2\n3')"
expect "after kill -9 the block's TRUNCATE is undone" "SELECT x FROM fresh" "42"
expect_missing "after kill -9 the block's table is not there" doomed
# Every file now was there before the block: recovery may also have removed
# files committed statements retired earlier (their deletion runs in the
# background and may not have happened before the kill).
files_after=$(find "$work/data/tables" -type f | sort)
left=$(comm -13 <(echo "$files_before") <(echo "$files_after"))
if [ -n "$left" ]; then
  echo "FAIL recovery left files of the killed block:"; echo "$left"; exit 1
fi
echo "ok   recovery removed every file of the killed block"

# A committed block survives kill -9 whole.
psql_t -c "BEGIN" -c "\\copy t from '$work/rows.csv' (format csv)" -c "CREATE TABLE kept AS SELECT count(*) AS n FROM t" -c "COMMIT"
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""
start_tallyd
expect "a block committed before kill -9 has its COPY" "SELECT count(*) FROM t" "5003"
expect "a block committed before kill -9 has its table" "SELECT n FROM kept" "5003"
# 3. UPDATE and DELETE are durable across kill -9 once they returned, and an
#    uncommitted block's UPDATE/DELETE leaves nothing.
psql_t -c "DELETE FROM t WHERE id > 3000" -c "UPDATE t SET label = 'updated' WHERE id = 2"
open_session
send "BEGIN;"
send "DELETE FROM t WHERE id = 1;"
send "UPDATE t SET label = 'uncommitted' WHERE id = 3;"
mark pending_update
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""
exec 3>&-
wait "$session_pid" 2>/dev/null || true
start_tallyd
expect "DELETE and UPDATE survive kill -9" "SELECT id, label FROM t WHERE id < 4 ORDER BY id" "$(printf '1|committed\n2|updated\n3|waiter')"
expect "rows not deleted are all there" "SELECT count(*) FROM t" "2003"
echo "tallyd transactions test passed"
