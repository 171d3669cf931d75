#!/bin/bash
# Receipt -> executor start (us) (tallyd's statement_timeline, --log-level debug) of
# issue 6's HAVING statement on a freshly started tallyd, for one or more
# tallyd binaries (A/B: pass the baseline first), alternating per round:
#   first   the process's first statement (nothing ran before it; the table's
#           catalog entry and chunks are cold too)
#   having1 the first HAVING text after three `SELECT g, min(v) ... GROUP BY g`
#           (the sequence of live_tuning_bench's restart on the H100)
#   again   having1's text again (parse and analysis caches hit)
#   new     the next HAVING constant (a new text, caches miss)
#   new3000 median over 3000 new texts in one session
# Table r(g int, v int) of 100,000 rows, 1,000 groups, in a private data dir.
#   bench/connect/new_text_timeline.sh ROUNDS TALLYD [TALLYD...]
set -euo pipefail
ROUNDS=$1; shift
PORT=${PORT:-5498}
DIR=$(mktemp -d /tmp/new_text_timeline.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
PSQL=(psql -h 127.0.0.1 -p "$PORT" -U tally tally -q -o /dev/null)

start() {  # $1 binary, $2 log
  "$1" --port "$PORT" --data-dir "$DIR/data" --log-level debug >"$2" 2>&1 &
  PID=$!
  for _ in $(seq 100); do grep -q event=listening "$2" && return; sleep 0.1; done
  echo "tallyd did not start: $2" >&2; exit 1
}
stop() { kill "$PID"; wait "$PID" || true; }
starts() { grep statement_timeline "$1" | sed 's/.*executor_start_us=\([0-9.]*\).*/\1/'; }

python3 - "$DIR/load.sql" "$DIR/distinct.sql" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("CREATE TABLE r (g int, v int);\nCOPY r FROM STDIN;\n")
    for i in range(100000): f.write(f"{i % 1000}\t{(i * 7919) % 1000 - 500}\n")
    f.write("\\.\n")
with open(sys.argv[2], "w") as f:
    for i in range(3000): f.write(f"SELECT g, count(*), sum(v) FROM r GROUP BY g HAVING sum(v) < -{100000 + i};\n")
PY
start "$1" "$DIR/load.log"; "${PSQL[@]}" -f "$DIR/load.sql"; stop

printf '%-5s %-24s %9s %9s %9s %9s %12s\n' round tallyd first having1 again new new3000_med
for round in $(seq "$ROUNDS"); do
  for bin in "$@"; do
    start "$bin" "$DIR/q.log"
    "${PSQL[@]}" <<SQL
SELECT g, count(*), sum(v) FROM r GROUP BY g HAVING sum(v) < -95376;
SQL
    stop
    first=$(starts "$DIR/q.log" | head -1)
    start "$bin" "$DIR/q.log"
    "${PSQL[@]}" <<SQL
SELECT g, min(v) FROM r GROUP BY g;
SELECT g, min(v) FROM r GROUP BY g;
SELECT g, min(v) FROM r GROUP BY g;
SELECT g, count(*), sum(v) FROM r GROUP BY g HAVING sum(v) < -95377;
SELECT g, count(*), sum(v) FROM r GROUP BY g HAVING sum(v) < -95377;
SELECT g, count(*), sum(v) FROM r GROUP BY g HAVING sum(v) < -95378;
SQL
    stop
    mapfile -t t < <(starts "$DIR/q.log" | tail -3)
    start "$bin" "$DIR/d.log"; "${PSQL[@]}" -f "$DIR/distinct.sql"; stop
    med=$(starts "$DIR/d.log" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
    printf '%-5s %-24s %9.1f %9.1f %9.1f %9.1f %12.1f\n' "$round" "$(basename "$(dirname "$bin")")/$(basename "$bin")" \
      "$first" "${t[0]}" "${t[1]}" "${t[2]}" "$med"
  done
done
