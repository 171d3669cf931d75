#!/usr/bin/python3
"""psycopg2 (libpq underneath) against tallyd, through tallyd_harness.py:
password, SCRAM and MD5 users, sslmode disable/require/verify-full, SELECT 1,
a parameterized statement, a failing statement's SQLSTATE, a transaction, and
pg_stat_activity as a monitoring client reads it: another session idle in its
transaction, running a statement, idle, gone."""
import os
import sys
import threading
import time

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


def activity_of(cur, pid):
    cur.execute("SELECT state, query, application_name, datname, usename, client_addr, backend_type, "
                "query_start >= backend_start, xact_start IS NOT NULL FROM pg_stat_activity WHERE pid = %s", (pid,))
    return cur.fetchone()


worker = connect(env["TALLY_TEST_PASSWORD_USER"], "disable")
watcher = connect(env["TALLY_TEST_PASSWORD_USER"], "disable")
watcher.autocommit = True
with worker.cursor() as w, watcher.cursor() as cur:
    pid = worker.info.backend_pid
    w.execute("SELECT 41")  # psycopg2 opened a transaction: the session waits in it
    row = activity_of(cur, pid)
    check(row is not None and row[0] == "idle in transaction" and row[1] == "SELECT 41", f"idle in transaction: {row}")
    check(row is not None and row[3] == env["TALLY_TEST_DB"] and row[4] == env["TALLY_TEST_PASSWORD_USER"] and
          row[5] == env["TALLY_TEST_HOST"] and row[6] == "client backend" and row[7] and row[8],
          f"session columns: {row}")
    mine = activity_of(cur, watcher.info.backend_pid)
    check(mine is not None and mine[0] == "active" and "pg_stat_activity" in mine[1], f"the reader itself: {mine}")
    worker.commit()
    row = activity_of(cur, pid)
    check(row is not None and row[0] == "idle" and not row[8], f"idle after COMMIT: {row}")
    long_statement = "SELECT 1 /* " + "é" * 3000 + " */"
    w.execute(long_statement)
    row = activity_of(cur, pid)
    worker.commit()
    check(row is not None and long_statement.encode().startswith(row[1].encode()) and
          1000 <= len(row[1].encode()) <= 1024, f"a long statement's first 1024 bytes: {row and len(row[1].encode())}")
    def sleep_cancelled():
        try:
            w.execute("SELECT pg_sleep(2)")
            check(False, "pg_sleep was not cancelled")
        except psycopg2.errors.QueryCanceled:
            pass

    sleeper = threading.Thread(target=sleep_cancelled)
    sleeper.start()
    seen = None
    # The driver opens the transaction first: its BEGIN is active for a moment.
    for _ in range(100):
        seen = activity_of(cur, pid)
        if seen is not None and seen[0] == "active" and seen[1] != "BEGIN":
            break
        time.sleep(0.02)
    check(seen is not None and seen[0] == "active" and seen[1] == "SELECT pg_sleep(2)", f"running: {seen}")
    cur.execute("SELECT pg_cancel_backend(%s)", (pid,))
    sleeper.join()
    worker.rollback()
worker.close()
with watcher.cursor() as cur:
    gone = None
    for _ in range(100):
        gone = activity_of(cur, pid)
        if gone is None:
            break
        time.sleep(0.02)
    check(gone is None, f"a closed session still listed: {gone}")
watcher.close()

if failures:
    print(f"psycopg2_test: {len(failures)} failure(s)", file=sys.stderr)
    sys.exit(1)
print("psycopg2_test: all passed")
