#!/usr/bin/env bash
# kill -9 of tallyd in the middle of COPY loads (psql \copy), several rounds;
# after each kill, copy_crash_driver verify (which runs start-up recovery on
# the data directory) must find exactly the batches whose COPY returned, plus
# at most the one in flight, whole. Then tallyd restarts on the same data.
# Usage: tallyd_crash_test.sh TALLYD COPY_CRASH_DRIVER
set -euo pipefail
tallyd=$1
driver=$2
for exe in "$tallyd" "$driver"; do
  [ -x "$exe" ] || { echo "not an executable: $exe (build tallyd and copy_crash_driver first)"; exit 1; }
done
rows=200000
work=$(mktemp -d /tmp/tally_tallyd_crash.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
port=$((20000 + RANDOM % 20000))
while (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; do port=$((port + 1)); done
psql_t() { timeout 120 psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U tally -d tally "$@"; }

start_tallyd() {
  # Small chunks: a COPY writes chunk files long before it commits, so kills
  # land between the two.
  "$tallyd" --port "$port" --data-dir "$work/data" --chunk-rows 16384 >>"$work/tallyd.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do
    psql_t -c 'select 1' >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "tallyd did not start"; cat "$work/tallyd.log"; exit 1
}

: >"$work/acked"
next=0
interrupted=0
for round in 1 2 3 4 5; do
  start_tallyd
  psql_t -c "CREATE TABLE IF NOT EXISTS crash (batch int NOT NULL, seq int NOT NULL, label text, v float8, day date)" >/dev/null
  # Load batches one COPY at a time; record each batch whose COPY returned.
  (
    b=$next
    while true; do
      "$driver" csv "$b" "$rows" >"$work/batch.csv"
      start=$(date +%s%N)
      psql_t -c "\\copy crash from '$work/batch.csv' (format csv)" >/dev/null 2>&1 || exit 0
      echo $(( ($(date +%s%N) - start) / 1000000 )) >"$work/copy_ms"
      echo "$b" >>"$work/acked"
      b=$((b + 1))
    done
  ) &
  loader=$!
  # Kill at a random moment after at least one acknowledged batch of this round.
  for _ in $(seq 1 600); do
    [ "$(wc -l <"$work/acked")" -gt "$next" ] && break
    sleep 0.1
  done
  # A random moment within the next COPY (generation of its CSV excluded).
  copy_ms=$(cat "$work/copy_ms" 2>/dev/null || echo 500)
  # Bounded, and never past a loader that died: a failing COPY must fail the test, not hang it.
  waited=0
  while [ "$(wc -l <"$work/acked")" -le "$next" ] || [ ! -s "$work/batch.csv" ]; do
    if ! kill -0 "$loader" 2>/dev/null; then
      echo "round $round: the COPY loader stopped before a batch was acknowledged"; tail -n 20 "$work/tallyd.log"; exit 1
    fi
    waited=$((waited + 1))
    if [ "$waited" -ge 6000 ]; then echo "round $round: no COPY acknowledged within 60 s"; exit 1; fi
    sleep 0.01
  done
  sleep "$(awk -v ms="$copy_ms" -v r="$RANDOM" 'BEGIN { printf "%.3f", (ms * (0.2 + 0.8 * r / 32768)) / 1000 }')"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
  wait "$loader" 2>/dev/null || true
  # Verify (runs recovery) and compare with the acknowledgements.
  "$driver" verify "$work/data" 1048576 >"$work/verify"
  if grep -q '^error' "$work/verify"; then cat "$work/verify"; exit 1; fi
  last_acked=$(tail -n1 "$work/acked")
  in_flight=$((last_acked + 1))
  while read -r b; do
    n=$(awk -v b="$b" '$1 == "batch" && $2 == b { print $3 }' "$work/verify")
    if [ "$n" != "$rows" ]; then echo "round $round: acknowledged batch $b has '${n:-0}' rows"; exit 1; fi
  done <"$work/acked"
  present=$(awk '$1 == "batch" { print $2 }' "$work/verify" | sort -n | tr '\n' ' ')
  for b in $present; do
    if ! grep -qx "$b" "$work/acked"; then
      n=$(awk -v b="$b" '$1 == "batch" && $2 == b { print $3 }' "$work/verify")
      if [ "$b" != "$in_flight" ] || [ "$n" != "$rows" ]; then
        echo "round $round: unexpected batch $b with $n rows"; exit 1
      fi
      echo "$b" >>"$work/acked"  # committed before the kill, ack lost
    fi
  done
  if ! grep -q '^orphans 0$' "$work/verify"; then echo "round $round: recovery left orphans"; cat "$work/verify"; exit 1; fi
  echo "round $round: $(wc -l <"$work/acked") batches committed, $(grep '^recovered' "$work/verify")"
  grep -q '^recovered 0$' "$work/verify" || interrupted=$((interrupted + 1))
  next=$(( $(tail -n1 "$work/acked") + 1 ))
done
if [ "$interrupted" -lt 1 ]; then echo "no kill landed after an append wrote files"; exit 1; fi
echo "tallyd crash test passed ($interrupted rounds interrupted an append mid-write)"
