#!/usr/bin/python3
"""sqlsmith (Debian's package) against tallyd for a bounded time: it gets
through its start-up (it reads pg_type, pg_proc, pg_operator, pg_aggregate
with regtype and regnamespace casts) and generates queries, and tallyd answers
every one of them (rows or a clean error) without crashing. Run through
tests/clients/tallyd_harness.py."""
import shutil
import sys

import tool_env as t

SECONDS = 60
TABLES = ["CREATE TABLE sales (region varchar(20), amount numeric(12,2), day date, qty int8, price float8,"
          " flag boolean)",
          "INSERT INTO sales VALUES ('east', 1.50, '2023-06-01', 3, 0.5, true), ('west', NULL, NULL, NULL, NULL, NULL)"]


def main():
    checks = t.Checks()
    sqlsmith = shutil.which("sqlsmith")
    if not checks.check(sqlsmith is not None, "sqlsmith is installed (scripts/setup.sh --test)"):
        return checks.status()
    for sql in TABLES:
        status, out = t.psql(t.TALLY, sql)
        if not checks.check(status == 0, f"tallyd runs {sql[:40]}...", out):
            return checks.status()
    status, out = t.run([sqlsmith, f"--target={t.TALLY}", "--seed=24", "--verbose"], timeout=SECONDS)
    # --verbose prints "Loading ...done." per start-up step, then one character per
    # query: "." for rows, "e" for an error answer.
    start_up, _, progress = out.partition("Generating indexes...done.")
    queries = sum(progress.count(c) for c in ".eCSt")
    print(f"   {queries} queries, {progress.count('e')} answered with an error")
    checks.check(status == 124 or status == 0, f"sqlsmith ran {SECONDS} s without giving up (exit {status})",
                 out[-3000:])
    checks.check(bool(progress) and queries > 0, "sqlsmith got through its start-up and generated queries",
                 out[-3000:])
    status, out = t.psql(t.TALLY, "SELECT count(*) FROM sales")
    checks.check(status == 0 and out.strip() == "2", "tallyd still answers after sqlsmith", out)
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
