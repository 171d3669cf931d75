#!/usr/bin/python3
"""Every describe command psql 15 has (\\d and its + and S forms, \\da \\dA \\db
\\dc \\dC \\dd \\dD \\ddp \\dE \\des \\det \\deu \\dew \\df \\dF \\dFd \\dFp \\dFt
\\dg \\di \\dl \\dL \\dm \\dn \\do \\dO \\dp \\dP \\drds \\dRp \\dRs \\ds \\dt \\dT
\\du \\dv \\dx \\dX \\dy \\l \\sf \\sv \\z) on the same schema in tallyd and in
PostgreSQL 15, compared output against output. Run through tests/clients/tallyd_harness.py.

Most commands must print exactly what PostgreSQL prints. The allowed
differences, and only these, each named in COMMANDS:
- "sizes": Size columns are not comparable (tallyd stores columns, PostgreSQL
  heap pages); the column is left out, the rest compared cell by cell.
- "row NAME": \\l and \\du list the other server's other databases and roles;
  the header and NAME's row are compared.
- "owner": Tally keeps no role catalog: the bootstrap superuser (OID 10), who
  owns the built-in objects, is the connected user, where the oracle's is
  `postgres`. The oracle's `postgres` cells read as the connected user.
- "subset": commands that list built-in objects (access methods, casts, text
  search objects, languages, system relations, functions, aggregates,
  operators) list those Tally has, which are PostgreSQL's rows, fewer of
  them: the header must match and every row tallyd prints must be one
  PostgreSQL prints. REQUIRED names the rows tallyd must print, so that an
  empty list cannot pass (where Tally has none of the objects, as operator
  classes, an empty list is the answer)."""
import re
import sys

import tool_env as t

SCHEMA = ["CREATE TABLE t (a int NOT NULL, b text, c numeric(10,2))",
          "CREATE TABLE sales (region varchar(20), amount numeric(12,2), day date)"]
DDL = ["CREATE VIEW v AS SELECT a, b FROM t",
       "CREATE INDEX t_b ON t (b)",
       "CREATE SEQUENCE s",
       "CREATE TABLE keyed (id int PRIMARY KEY, name text UNIQUE)"]
# Steps that fail today: {step: (why, pattern its error matches)}. See tool_env.Checks.
KNOWN_GAPS = {}

# command: the allowed differences (see the docstring); "" for none.
COMMANDS = {
    "\\d": "", "\\d+": "sizes", "\\d t": "", "\\d+ t": "", "\\d keyed": "", "\\d+ keyed": "", "\\d v": "",
    "\\d+ v": "", "\\d s": "", "\\d t_b": "", "\\d keyed_pkey": "", "\\dS": "subset owner", "\\d nosuch": "",
    "\\da": "", "\\dA": "subset", "\\dA+": "subset", "\\db": "owner", "\\db+": "owner sizes", "\\dc": "",
    "\\dC": "subset", "\\dC int4": "subset", "\\dd": "", "\\dD": "", "\\ddp": "", "\\dE": "", "\\des": "", "\\det": "", "\\deu": "",
    "\\dew": "", "\\df": "", "\\dF": "subset", "\\dFd": "subset", "\\dFp": "subset", "\\dFt": "subset",
    "\\dg": "row tally", "\\di": "", "\\di+": "sizes", "\\dl": "", "\\dL": "subset owner", "\\dm": "",
    "\\dn": "", "\\dn+": "", "\\do": "", "\\dO": "", "\\dp": "", "\\dP": "", "\\drds": "", "\\dRp": "",
    "\\dRs": "", "\\ds": "", "\\ds+": "sizes", "\\dt": "", "\\dt+": "sizes", "\\dt+ t": "sizes", "\\dT": "",
    "\\du": "row tally", "\\du+": "row tally", "\\dv": "", "\\dv+": "", "\\dx": "", "\\dx+": "",
    "\\dX": "", "\\dy": "", "\\l": "row tally", "\\l+": "row tally sizes", "\\sv v": "", "\\sv+ v": "",
    "\\sf pg_sleep": "", "\\sf+ pg_sleep": "", "\\sf pg_terminate_backend(integer, bigint)": "", "\\z": "",
    # The S forms over built-in objects, and a pattern.
    "\\dTS int4": "", "\\dfS upper": "subset", "\\daS sum": "subset", "\\doS+ +": "subset",
    "\\df+ lower": "subset owner", "\\dL+": "owner", "\\dconfig work_mem": "", "\\dconfig+ work_mem": "",
    # Operator classes and families: Tally lists none (its btree indexes name none).
    "\\dAc": "subset", "\\dAf": "subset", "\\dAo": "subset", "\\dAp": "subset",
    "\\dP+": "",
}
# Rows a "subset" command must print in tallyd: (the column, the names in it).
REQUIRED = {
    "\\dS": (1, ["pg_class", "pg_type", "v"]), "\\dA": (0, ["btree", "heap"]), "\\dA+": (0, ["btree", "heap"]),
    "\\dC": (0, ["integer"]), "\\dC int4": (0, ["bigint", "integer", "numeric"]), "\\dL": (0, ["plpgsql"]),
    "\\dfS upper": (1, ["upper"]), "\\daS sum": (3, ["bigint", "integer", "numeric"]),
    "\\doS+ +": (5, ["int4pl", "numeric_add", "timestamp_pl_interval"]),
}


def table(output):
    """psql's aligned output as (header cells, rows of cells, the rest), cells
    stripped (column widths follow the rows, which may legitimately differ)."""
    lines = output.splitlines()
    if len(lines) < 3 or not re.fullmatch(r"-+(\+-+)*", lines[2]):
        return None, [], lines
    header = tuple(c.strip() for c in lines[1].split("|"))
    rows, rest = [], []
    for line in lines[3:]:
        if rest or re.fullmatch(r"\(\d+ rows?\)", line):
            rest.append(line)
        else:
            rows.append(tuple(c.strip() for c in line.split("|")))
    return header, rows, rest


def drop_column(header, rows, name):
    if header is None or name not in header:
        return header, rows
    i = header.index(name)
    return header[:i] + header[i + 1:], [r[:i] + r[i + 1:] for r in rows]


def render(header, rows, rest):
    return "\n".join([" | ".join(header)] + [" | ".join(r) for r in rows] + rest) if header else "\n".join(rest)


def compare(command, allowed, expected, actual):
    """(equal, the two outputs as compared)."""
    if not allowed:
        return expected == actual, expected, actual
    (eh, er, erest), (ah, ar, arest) = table(expected), table(actual)
    if eh is None or ah is None:
        return expected == actual, expected, actual
    if "owner" in allowed:
        er = [tuple(t.USER if c == "postgres" else c for c in r) for r in er]
    if "sizes" in allowed:
        (eh, er), (ah, ar) = drop_column(eh, er, "Size"), drop_column(ah, ar, "Size")
    row = re.search(r"row (\S+)", allowed)
    if row:
        er = [r for r in er if r[0] == row.group(1)]
        ar = [r for r in ar if r[0] == row.group(1)]
        erest = arest = []
    if "subset" in allowed:
        column, names = REQUIRED.get(command, (0, []))
        missing = [name for name in names if name not in [r[column] for r in ar if len(r) > column]]
        extra = [r for r in ar if r not in er]
        ok = eh == ah and not missing and not extra
        return ok, render(eh, er, []), render(ah, ar, []) + (f"\nmissing: {missing}" if missing else "") + \
            (f"\nnot in PostgreSQL's list: {extra}" if extra else "")
    e, a = render(eh, er, erest), render(ah, ar, arest)
    return e == a, e, a


def main():
    checks = t.Checks(KNOWN_GAPS, __file__)
    pg = t.pg.Postgres(t.USER, t.DATABASE)
    try:
        target = pg.conninfo(t.USER, t.DATABASE)
        for sql in SCHEMA + DDL:
            pg.sql(t.USER, t.DATABASE, sql)
            status, out = t.psql(t.TALLY, sql)
            if not checks.check(status == 0, f"tallyd runs {sql}", out):
                return checks.status()
        for command, allowed in COMMANDS.items():
            ok, expected, actual = compare(command, allowed, t.pg.psql(target, command), t.pg.psql(t.TALLY, command))
            checks.check(ok, command, f"--- PostgreSQL 15\n{expected}\n--- tallyd\n{actual}")
    finally:
        pg.stop()
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
