#!/usr/bin/python3
"""Every row Tally's pg_proc, pg_operator and pg_cast list is PostgreSQL 15's
row for the same OID, as tools read them: a function's regprocedure name,
kind, types, pg_get_function_* texts, comment, pg_describe_object and
pg_get_functiondef (\\sf); an operator's name, operand and result types,
commutator, negator, function and comment (\\do+); a cast's types, function,
context and method (\\dC). PostgreSQL lists more (types and functions Tally
lacks), so each query reads the OIDs tallyd lists, and every one must be
there in PostgreSQL with the same values. Run through tests/clients/tallyd_harness.py."""
import sys

import tool_env as t

QUERIES = {
    "pg_proc": ("SELECT p.oid, p.oid::regprocedure::text, p.prokind, p.proretset, p.provolatile, p.proparallel,"
                " p.proisstrict, p.pronargs, p.prorettype, p.proargtypes::text, l.lanname, p.prosrc,"
                " pg_get_function_result(p.oid), pg_get_function_arguments(p.oid),"
                " obj_description(p.oid, 'pg_proc'), pg_describe_object('pg_proc'::regclass, p.oid, 0)"
                " FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.oid IN ({oids}) ORDER BY 1"),
    "pg_get_functiondef": ("SELECT oid, replace(pg_get_functiondef(oid), E'\\n', '|') FROM pg_proc"
                           " WHERE prokind <> 'a' AND oid IN ({oids}) ORDER BY 1"),
    "pg_operator": ("SELECT oid, oprname, oprkind, oprcanmerge, oprcanhash, format_type(oprleft, NULL),"
                    " format_type(oprright, NULL), format_type(oprresult, NULL), oprcom, oprnegate, oprcode::text,"
                    " obj_description(oid, 'pg_operator') FROM pg_operator WHERE oid IN ({oids}) ORDER BY 1"),
    "pg_cast": ("SELECT oid, format_type(castsource, NULL), format_type(casttarget, NULL), castfunc, castcontext,"
                " castmethod FROM pg_cast WHERE oid IN ({oids}) ORDER BY 1"),
}
# The catalog each query's OIDs come from, and the fewest rows tallyd must list.
SOURCES = {"pg_proc": ("pg_proc", 300), "pg_get_functiondef": ("pg_proc", 300), "pg_operator": ("pg_operator", 300),
           "pg_cast": ("pg_cast", 80)}
# Steps that fail today: {step: (why, pattern its error matches)}. See tool_env.Checks.
KNOWN_GAPS = {}


def main():
    checks = t.Checks(KNOWN_GAPS, __file__)
    pg = t.pg.Postgres(t.USER, t.DATABASE)
    try:
        target = pg.conninfo(t.USER, t.DATABASE)
        for name, query in QUERIES.items():
            catalog, fewest = SOURCES[name]
            status, oids = t.psql(t.TALLY, f"SELECT string_agg(oid::text, ',') FROM {catalog}")
            count = len(oids.strip().split(",")) if status == 0 and oids.strip() else 0
            if not checks.check(status == 0 and count >= fewest, f"tallyd's {catalog} lists at least {fewest} rows",
                                f"{count} rows: {oids[-2000:]}"):
                continue
            sql = query.format(oids=oids.strip())
            expected, actual = t.psql(target, sql), t.psql(t.TALLY, sql)
            rows = len(actual[1].splitlines())
            checks.check(expected == actual and expected[0] == 0,
                         f"{name}: the {rows} rows tallyd lists are PostgreSQL 15's",
                         "\n".join(f"--- PostgreSQL 15: {e}\n+++ tallyd:        {a}" for e, a in
                                   zip(expected[1].splitlines(), actual[1].splitlines()) if e != a)[:4000]
                         or f"--- PostgreSQL 15\n{expected[1][-2000:]}\n--- tallyd\n{actual[1][-2000:]}")
    finally:
        pg.stop()
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
