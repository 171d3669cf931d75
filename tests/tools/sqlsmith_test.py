#!/usr/bin/python3
"""sqlsmith (Debian's package) against tallyd for a bounded time: it gets
through its start-up (it reads pg_type, pg_proc, pg_operator, pg_aggregate
with regtype and regnamespace casts) and generates queries, and tallyd answers
every one of them (rows or a clean error) without crashing.
Run through tests/clients/tallyd_harness.py."""
import re
import shutil
import sys

import tool_env as t

SECONDS = 60
TABLES = ["CREATE TABLE sales (region varchar(20), amount numeric(12,2), day date, qty int8, price float8,"
          " flag boolean)",
          "INSERT INTO sales VALUES ('east', 1.50, '2023-06-01', 3, 0.5, true), ('west', NULL, NULL, NULL, NULL, NULL)"]
START_UP = "sqlsmith start-up (loads types, tables, functions, operators, aggregates)"
RUN = f"sqlsmith generates queries for {SECONDS} s and tallyd answers each (rows or an error), never crashing"
# Steps that fail today: {step: (why, pattern its error matches)}. See tool_env.Checks.
KNOWN_GAPS = {}


def main():
    checks = t.Checks(KNOWN_GAPS, __file__)
    sqlsmith = shutil.which("sqlsmith")
    if not checks.check(sqlsmith is not None, "sqlsmith is installed (scripts/setup.sh --test)"):
        return checks.status()
    for sql in TABLES:
        status, out = t.psql(t.TALLY, sql)
        if not checks.check(status == 0, f"tallyd runs {sql[:40]}...", out):
            return checks.status()
    status, out = t.run([sqlsmith, f"--target={t.TALLY}", "--seed=24", "--verbose"], timeout=SECONDS)
    # --verbose prints "Loading ...done." per start-up step, then one character per
    # query (sqlsmith's log.cc): "." for rows, "e" for an error answer, "s" for a
    # syntax error, "t" for a timeout, "c" for a broken connection (the server went away).
    start_up, started, progress = out.partition("Generating indexes...done.")
    if checks.check(bool(started), START_UP, out[-3000:]):
        # Progress lines hold only those characters; its periodic report lines hold words.
        marks = "".join(line.strip() for line in progress.splitlines() if re.fullmatch(r"[.estc]+", line.strip()))
        print(f"   {len(marks)} queries, {marks.count('e')} answered with an error,"
              f" {marks.count('c')} broken connections")
        # Killed by the bound (124) is the expected end: it generates queries until stopped.
        checks.check(status == 124 and len(marks) > 0 and "c" not in marks, RUN,
                     f"exit {status}, {len(marks)} queries, {marks.count('c')} broken connections\n{out[-3000:]}")
    # Whether or not sqlsmith got going, tallyd must have survived it.
    status, out = t.psql(t.TALLY, "SELECT count(*) FROM sales")
    checks.check(status == 0 and out.strip() == "2", "tallyd still answers after sqlsmith", out)
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
