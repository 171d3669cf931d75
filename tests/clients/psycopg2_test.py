#!/usr/bin/python3
"""psycopg2 (libpq underneath) against tallyd, through tallyd_harness.py:
password, SCRAM and MD5 users, sslmode disable/require/verify-full, SELECT 1,
a parameterized statement, a failing statement's SQLSTATE, and a transaction."""
import os
import sys

import psycopg2
import psycopg2.errors

env = os.environ
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def connect(user, sslmode):
    return psycopg2.connect(host="localhost", hostaddr=env["TALLY_TEST_HOST"],
                            port=env["TALLY_TEST_PORT"], dbname=env["TALLY_TEST_DB"],
                            user=user, password=env["TALLY_TEST_PASSWORD"], sslmode=sslmode,
                            sslrootcert=env["TALLY_TEST_CA"], connect_timeout=10)


for user in (env["TALLY_TEST_PASSWORD_USER"], env["TALLY_TEST_SCRAM_USER"],
             env["TALLY_TEST_MD5_USER"]):
    for sslmode in ("disable", "require", "verify-full"):
        what = f"{user}/{sslmode}"
        try:
            conn = connect(user, sslmode)
        except Exception as e:  # report and go on with the matrix
            check(False, f"{what}: connect failed: {e}")
            continue
        check(bool(conn.info.ssl_in_use) == (sslmode != "disable"), f"{what}: ssl_in_use")
        with conn.cursor() as cur:
            cur.execute("SELECT 1")
            check(cur.fetchone() == (1,), f"{what}: SELECT 1")
            cur.execute("SELECT %s::int4 + 1", (41,))
            check(cur.fetchone() == (42,), f"{what}: parameterized")
        conn.rollback()
        try:
            with conn.cursor() as cur:
                cur.execute("SELEC 1")
            check(False, f"{what}: failing statement succeeded")
        except psycopg2.Error as e:
            check(e.pgcode == "42601", f"{what}: failing statement gave {e.pgcode}")
            check(isinstance(e, psycopg2.errors.SyntaxError), f"{what}: error class")
        conn.rollback()
        # psycopg2 wraps statements in BEGIN ... COMMIT by default.
        with conn.cursor() as cur:
            cur.execute("SELECT 2")
            check(cur.fetchone() == (2,), f"{what}: SELECT in a transaction")
        conn.commit()
        conn.close()

try:
    psycopg2.connect(host=env["TALLY_TEST_HOST"], port=env["TALLY_TEST_PORT"],
                     dbname=env["TALLY_TEST_DB"], user=env["TALLY_TEST_SCRAM_USER"],
                     password="wrong", sslmode="disable")
    check(False, "wrong password accepted")
except psycopg2.OperationalError as e:
    check("password authentication failed" in str(e), f"wrong password: {e}")

if failures:
    print(f"psycopg2_test: {len(failures)} failure(s)", file=sys.stderr)
    sys.exit(1)
print("psycopg2_test: all passed")
