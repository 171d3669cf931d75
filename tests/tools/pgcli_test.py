#!/usr/bin/python3
"""pgcli (Debian's package) against tallyd: the queries of its completion
refresh (pgcli.pgexecute.PGExecute, as pgcli/completion_refresher.py calls
them) all answer, and what they say about the user's tables is what
PostgreSQL 15 says for the same tables; its backslash commands (pgspecial's
\\d family, run as the prompt runs them) print what they print against
PostgreSQL 15. Run through tests/clients/tallyd_harness.py."""
import sys

import tool_env as t

try:
    from pgcli.pgexecute import PGExecute
    from pgspecial.main import PGSpecial
except ImportError as e:
    sys.exit(f"FAIL: {e}: the pgcli package is needed (scripts/setup.sh --test)")

TABLES = ["CREATE TABLE sales (region varchar(20), amount numeric(12,2), day date, qty int8)",
          "CREATE TABLE t (a int NOT NULL, b text)"]
# Every refresher step; `compared` ones must equal PostgreSQL's (public schema
# only). casing() reads the words of SQL and PL/pgSQL functions outside
# pg_catalog and information_schema: none here, so PostgreSQL answers no rows.
STEPS = ["search_path", "schemata", "tables", "views", "table_columns", "view_columns", "datatypes",
         "foreignkeys", "functions", "databases", "casing"]
COMPARED = {"search_path", "schemata", "tables", "views", "table_columns", "view_columns", "foreignkeys", "datatypes",
            "functions", "casing"}
# pgspecial's commands over the user's objects. \\du and \\l keep the
# connected user's and database's rows (the oracle has other roles and
# databases); \\dx lists plpgsql in both. Not \\dp: pgspecial's query for it
# fails on PostgreSQL 15 itself (unknown || "char" is ambiguous there).
SPECIAL = ["\\d", "\\d sales", "\\d+ t", "\\dt", "\\di", "\\dv", "\\ds", "\\dn", "\\dT", "\\df", "\\dx",
           "\\dD", "\\dE", "\\dm", "\\ddp", "\\du", "\\l"]
KEEP_ROW = {"\\du": t.USER, "\\l": t.DATABASE}
# Steps that fail today: {step: (why, pattern its error matches)}. See tool_env.Checks.
KNOWN_GAPS = {}


def fields(row):
    """A row as a tuple: functions() yields FunctionMetadata objects, the others tuples or strings."""
    return tuple(vars(row).values()) if hasattr(row, "schema_name") else row


def public(rows):
    rows = [fields(r) for r in rows]
    return sorted(tuple(str(c) for c in r) for r in rows if not isinstance(r, str) and r and r[0] == "public") \
        if rows and not isinstance(rows[0], str) else rows


def special(executor, command):
    """What the prompt shows for a backslash command: each result's title,
    headers, rows and status (or the error), rows kept as KEEP_ROW says."""
    try:
        out = []
        for title, rows, headers, status, *_ in executor.run(command, pgspecial=PGSpecial()):
            rows = [tuple(r) for r in rows] if rows is not None else None
            if command in KEEP_ROW and rows is not None:
                rows = [r for r in rows if r[0] == KEEP_ROW[command]]
                status = None
            out.append((title, headers, rows, status))
        return out
    except Exception as e:
        return f"error: {e}"


def main():
    checks = t.Checks(KNOWN_GAPS, __file__)
    pg = t.pg.Postgres(t.USER, t.DATABASE)
    try:
        for sql in TABLES:
            pg.sql(t.USER, t.DATABASE, sql)
            status, out = t.psql(t.TALLY, sql)
            if not checks.check(status == 0, f"tallyd runs {sql[:40]}...", out):
                return checks.status()
        oracle = PGExecute(database=t.DATABASE, user=t.USER, host=pg.dir, port=pg.port)
        tally = PGExecute(database=t.DATABASE, user=t.USER, host=t.HOST, port=int(t.PORT), sslmode="disable")
        for step in STEPS:
            try:
                actual = list(getattr(tally, step)())
            except Exception as e:
                checks.check(False, f"PGExecute.{step}()", f"tallyd raised {e!r}")
                tally = PGExecute(database=t.DATABASE, user=t.USER, host=t.HOST, port=int(t.PORT), sslmode="disable")
                continue
            if step in COMPARED:
                expected = public(getattr(oracle, step)())
                actual = public(actual)
                checks.check(expected == actual, f"PGExecute.{step}()",
                             f"as PostgreSQL's?\n--- PostgreSQL 15\n{expected}\n--- tallyd\n{actual}")
            else:
                checks.check(step == "foreignkeys" or len(actual) > 0, f"PGExecute.{step}()",
                             f"answers no rows: {actual}")
        for command in SPECIAL:
            expected, actual = special(oracle, command), special(tally, command)
            checks.check(expected == actual and not isinstance(expected, str), f"pgcli {command}",
                         f"--- PostgreSQL 15\n{expected}\n--- tallyd\n{actual}")
        # Queries through pgcli's own runner (what the prompt does with a typed statement).
        results = list(tally.run("SELECT region, sum(amount) FROM sales GROUP BY region; SELECT 1 AS one"))
        checks.check(len(results) == 2 and list(results[1][1]) == [(1,)], "PGExecute.run of two statements",
                     repr(results))
    finally:
        pg.stop()
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
