#!/usr/bin/python3
"""Scripted protocol exchanges, byte for byte the same, sent to PostgreSQL 15
and to tallyd, whose answers must agree message by message (CockroachDB's
pgtest idea with PostgreSQL itself as the oracle). Run through
tallyd_harness.py; starts its own PostgreSQL 15 (initdb as user postgres in a
temporary directory, trust over TCP, a free port).

Compared per message: the type; COPY data as one stream; ErrorResponse severity and SQLSTATE (not the
wording); CommandComplete tags; DataRow values; RowDescription names, type
OIDs and formats; ParameterDescription OIDs; ReadyForQuery status.
ParameterStatus and NoticeResponse are left out (they report settings, which
both servers may word differently)."""
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

PG_BIN = "/usr/lib/postgresql/15/bin"
TIMEOUT_S = 20


# --- frontend messages -------------------------------------------------------------
def msg(kind, body=b""):
    return kind.encode() + struct.pack("!I", len(body) + 4) + body


def cstr(s):
    return s.encode() + b"\0"


def Query(sql):
    return msg("Q", cstr(sql))


def Parse(name, sql, types=()):
    return msg("P", cstr(name) + cstr(sql) + struct.pack("!H", len(types)) +
               b"".join(struct.pack("!I", t) for t in types))


def Bind(portal, statement, formats=(), params=(), result_formats=()):
    body = cstr(portal) + cstr(statement) + struct.pack("!H", len(formats))
    body += b"".join(struct.pack("!h", f) for f in formats)
    body += struct.pack("!H", len(params))
    for p in params:
        body += struct.pack("!i", -1) if p is None else struct.pack("!i", len(p)) + p
    body += struct.pack("!H", len(result_formats))
    body += b"".join(struct.pack("!h", f) for f in result_formats)
    return msg("B", body)


def Describe(kind, name):
    return msg("D", kind.encode() + cstr(name))


def Execute(portal, rows=0):
    return msg("E", cstr(portal) + struct.pack("!i", rows))


def Close(kind, name):
    return msg("C", kind.encode() + cstr(name))


def CopyData(data):
    return msg("d", data)


Sync, Flush, Terminate, CopyDone = msg("S"), msg("H"), msg("X"), msg("c")


def CopyFail(text):
    return msg("f", cstr(text))


# --- reading and normalizing backend messages ------------------------------------------
class Connection:
    def __init__(self, port, user, database):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S)
        params = cstr("user") + cstr(user) + cstr("database") + cstr(database) + b"\0"
        body = struct.pack("!I", 196608) + params
        self.sock.sendall(struct.pack("!I", len(body) + 4) + body)
        self.buffer = b""
        startup = self.read_until_ready(1)
        if not startup or startup[-1][0] != "Z":
            raise RuntimeError(f"startup failed on port {port}: {startup}")

    def read_exact(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def read(self):
        header = self.read_exact(5)
        if header is None:
            return None
        kind, length = chr(header[0]), struct.unpack("!I", header[1:])[0]
        return kind, self.read_exact(length - 4)

    def read_until_ready(self, count):
        """Normalized messages up to the count-th ReadyForQuery or the close."""
        out = []
        while count > 0:
            m = self.read()
            if m is None:
                out.append(("closed",))
                break
            n = normalize(*m)
            if n is not None and n[0] == "d" and out and out[-1][0] == "d":
                # COPY data may be cut into CopyData messages anywhere; compare the stream.
                out[-1] = ("d", out[-1][1] + n[1])
            elif n is not None:
                out.append(n)
            if m[0] == "Z":
                count -= 1
        return out


def fields(body):
    result, i = {}, 0
    while body[i] != 0:
        end = body.index(b"\0", i + 1)
        result[chr(body[i])] = body[i + 1:end].decode()
        i = end + 1
    return result


def normalize(kind, body):
    if kind in ("S", "N", "K"):
        return None
    if kind == "E":
        f = fields(body)
        return ("E", f.get("V"), f.get("C"))
    if kind == "C":
        return ("C", body[:-1].decode())
    if kind == "Z":
        return ("Z", chr(body[0]))
    if kind == "d":
        return ("d", body)
    if kind == "D":
        n, i, values = struct.unpack("!H", body[:2])[0], 2, []
        for _ in range(n):
            length = struct.unpack("!i", body[i:i + 4])[0]
            i += 4
            values.append(None if length < 0 else body[i:i + length].hex())
            i += max(length, 0)
        return ("D", tuple(values))
    if kind == "T":
        n, i, cols = struct.unpack("!H", body[:2])[0], 2, []
        for _ in range(n):
            end = body.index(b"\0", i)
            name = body[i:end].decode()
            _, _, oid, _, _, fmt = struct.unpack("!IhIhih", body[end + 1:end + 19])
            cols.append((name, oid, fmt))
            i = end + 19
        return ("T", tuple(cols))
    if kind == "t":
        n = struct.unpack("!H", body[:2])[0]
        return ("t", struct.unpack("!" + "I" * n, body[2:2 + 4 * n]))
    return (kind,)


# --- the scripts ---------------------------------------------------------------------
def i32(v):
    return struct.pack("!i", v)


SETUP = ["CREATE TABLE t (a int4, b text)",
         "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'z'), (4, 'x'), (5, 'y')",
         "CREATE TABLE u (a int4, b text, c float8, d date, n numeric(10,2), v varchar(3))",
         "CREATE TABLE tb (a int4, t time, t2 time(2), b bytea)"]
u_rows = Query("SELECT a, b, c, d, n, v FROM u ORDER BY a, b")
tb_rows = Query("SELECT a, t, t2, b FROM tb ORDER BY a")
tb_binary_rows = Parse("", "SELECT a, t, t2, b FROM tb ORDER BY a") + Bind("", "", [], [], [1]) + Execute("") + Sync


def i64(v):
    return struct.pack("!q", v)
rows = "SELECT a FROM t ORDER BY a"

# (name, bytes sent, ReadyForQuery messages to wait for)
SCRIPTS = [
    ("simple: several statements", Query("SELECT 1; SELECT 'two'"), 1),
    ("simple: empty query", Query(""), 1),
    ("simple: syntax error", Query("SELEC 1"), 1),
    ("simple: error in the second statement", Query("SELECT 1; SELECT 1/0; SELECT 3"), 1),
    ("simple: failed transaction block",
     Query("BEGIN") + Query("SELECT 1/0") + Query("SELECT 1") + Query("ROLLBACK"), 4),
    ("simple: group by", Query("SELECT b, count(*) FROM t GROUP BY b ORDER BY b"), 1),
    ("extended: binary parameter and result",
     Parse("", "SELECT $1::int4 + 1", [23]) + Bind("", "", [1], [i32(41)], [1]) +
     Describe("P", "") + Execute("") + Sync, 1),
    ("extended: text parameter, inferred type",
     Parse("", "SELECT a FROM t WHERE a > $1 ORDER BY a") + Describe("S", "") +
     Bind("", "", [], [b"3"]) + Execute("") + Sync, 1),
    ("extended: describe a statement without rows",
     Parse("s", "SET application_name = 'diff'") + Describe("S", "s") + Sync, 1),
    ("extended: row limit, suspend, resume, portal gone after Sync",
     Parse("", rows) + Bind("p", "") + Execute("p", 2) + Execute("p", 2) + Execute("p", 2) +
     Sync + Execute("p", 1) + Sync, 2),
    ("extended: portal survives Sync inside a transaction block",
     Query("BEGIN") + Parse("", rows) + Bind("c", "") + Execute("c", 2) + Sync +
     Execute("c", 2) + Sync + Query("COMMIT"), 4),
    ("extended: duplicate named statement",
     Parse("d", "SELECT 1") + Parse("d", "SELECT 2") + Bind("", "d") + Sync +
     Parse("d", "SELECT 3") + Sync + Bind("", "d") + Execute("") + Sync, 3),
    ("extended: error skips until Sync",
     Parse("", "SELEC 1") + Bind("", "") + Execute("") + Query("SELECT 9") + Sync +
     Query("SELECT 5"), 2),
    ("extended: Bind with too few parameters",
     Parse("", "SELECT $1::int4") + Bind("", "") + Sync, 1),
    ("extended: Bind with a bad format code",
     Parse("", "SELECT $1::int4") + Bind("", "", [7], [b"1"]) + Sync, 1),
    ("extended: missing portal and statement",
     Execute("nope") + Sync + Bind("", "nope") + Sync + Describe("S", "nope") + Sync, 3),
    ("extended: Close of what does not exist",
     Close("S", "zz") + Close("P", "zz") + Sync, 1),
    ("extended: bad Describe kind", Describe("X", "") + Sync, 1),
    ("extended: empty statement", Parse("", "") + Bind("", "") + Describe("P", "") +
     Execute("") + Sync, 1),
    ("extended: pipelined batches",
     Parse("q", "SELECT $1::int4 * 2") + Bind("", "q", [], [b"2"]) + Execute("") + Sync +
     Bind("", "q", [], [b"21"]) + Execute("") + Sync + Close("S", "q") + Sync, 3),
    # Parameters as client libraries send them: untyped (OID 0), typed from
    # their context (ParameterDescription), in text and binary.
    ("extended: INSERT with untyped parameters",
     Parse("", "INSERT INTO u VALUES ($1, $2, $3, $4, $5, $6)") + Describe("S", "") +
     Bind("", "", [], [b"1", b"x", b"1.5", b"2023-06-01", b"12.345", b"abc"]) + Describe("P", "") +
     Execute("") + Sync + u_rows, 2),
    ("extended: INSERT with NULL, binary and named columns",
     Parse("ins", "INSERT INTO u (b, a, d) VALUES ($1, $2, $3)") + Describe("S", "ins") +
     Bind("", "ins", [0, 1, 0], [None, i32(7), b"2023-06-01 +00"]) + Execute("") +
     Bind("", "ins", [1, 1, 0], [b"z", i32(8), None]) + Execute("") + Sync + u_rows, 2),
    ("extended: INSERT with a bad number",
     Parse("", "INSERT INTO u (a) VALUES ($1)") + Bind("", "", [], [b"x1"]) + Sync + u_rows, 2),
    ("extended: INSERT with parameters in casts and several rows",
     Parse("", "INSERT INTO u (a, b, c) VALUES ($1::int8, $2, $3), ($4, $2, NULL)") +
     Describe("S", "") + Bind("", "", [], [b"20", b"w", b"2", b"21"]) + Execute("") + Sync +
     u_rows, 2),
    ("extended: INSERT ... SELECT with untyped parameters",
     Parse("", "INSERT INTO u (a, b) SELECT $1, $2") + Describe("S", "") +
     Bind("", "", [], [b"30", b"s"]) + Execute("") + Sync + u_rows, 2),
    ("extended: UPDATE and DELETE with untyped parameters",
     Parse("", "UPDATE u SET b = $1, c = $3 WHERE a = $2 AND $4 > 1") + Describe("S", "") +
     Bind("", "", [], [b"upd", b"1", b"2.5", b"7"]) + Execute("") + Sync +
     Parse("", "DELETE FROM u WHERE a = $1 OR b = $2") + Describe("S", "") +
     Bind("", "", [], [b"30", b"w"]) + Execute("") + Sync + u_rows, 3),
    ("extended: INSERT into a missing table", Parse("", "INSERT INTO nope VALUES ($1)") + Sync, 1),
    # SQL's prepared statements share their names with the protocol's.
    ("sql: PREPARE, EXECUTE, DEALLOCATE",
     Query("PREPARE p1(int, text) AS SELECT $1 * 2, $2") + Query("EXECUTE p1(21, 'a')") +
     Query("EXECUTE p1(1)") + Query("PREPARE p1 AS SELECT 1") + Query("DEALLOCATE p1") +
     Query("DEALLOCATE p1") + Query("EXECUTE p1(1, 'a')") + Query("PREPARE p2 AS SELECT 2") +
     Query("DEALLOCATE ALL") + Query("EXECUTE p2") + Query("DEALLOCATE PREPARE ALL"), 11),
    ("sql: PREPARE of an INSERT, EXECUTE with casts and NULL",
     Query("PREPARE pi AS INSERT INTO u (a, b, d) VALUES ($1, $2, $3)") +
     Query("EXECUTE pi(40, 'p', '2024-02-29')") + Query("EXECUTE pi('41', NULL, NULL)") +
     Query("EXECUTE pi(42, 'q', 'not a date')") + Query("EXECUTE pi(43, 'q', '2024-02-30')") +
     u_rows, 6),
    ("sql and protocol: one namespace of prepared statements",
     Parse("s1", "SELECT 1") + Sync + Query("DEALLOCATE s1") + Query("DEALLOCATE s1") +
     Query("PREPARE s2 AS SELECT $1::int4 + 1") + Describe("S", "s2") +
     Bind("", "s2", [], [b"4"]) + Execute("") + Sync + Parse("s2", "SELECT 1") + Sync +
     Close("S", "s2") + Sync + Query("EXECUTE s2(1)") + Query("DISCARD ALL"), 9),
    # A WITH query named twice runs once per execution (executor/shared_cte.hpp):
    # each execution makes its rows again, with its parameters and the table as it is.
    ("sql: a prepared WITH query named twice, run with other parameters and after an INSERT",
     Query("PREPARE w2(int) AS WITH c AS (SELECT count(*) AS n FROM t WHERE a > $1) "
           "SELECT x.n + y.n FROM c x, c y") + Query("EXECUTE w2(0)") + Query("EXECUTE w2(3)") +
     Query("INSERT INTO t VALUES (100, 'w')") + Query("EXECUTE w2(3)") +
     Query("DELETE FROM t WHERE a = 100") + Query("DEALLOCATE w2"), 7),
    ("extended: a WITH query named twice, bound twice",
     Parse("w3", "WITH c AS (SELECT count(*) AS n FROM t WHERE a > $1) SELECT x.n * 100 + y.n FROM c x, c y") +
     Bind("", "w3", [], [b"0"]) + Execute("") + Bind("", "w3", [], [b"5"]) + Execute("") + Sync, 1),
    # A plan over one stored table is kept between executions: the WITH
    # query its subqueries name is made again at each.
    ("extended: one table's plan whose subqueries name a WITH query, bound twice",
     Parse("w4", "WITH c AS (SELECT max(a) AS m FROM t WHERE a < $1) "
           "SELECT count(*) FROM t WHERE a <= (SELECT m FROM c) AND a >= (SELECT m - 1 FROM c)") +
     Bind("", "w4", [], [b"3"]) + Execute("") + Bind("", "w4", [], [b"100"]) + Execute("") + Sync, 1),
    ("sql: prepared statements in a failed transaction block",
     Query("BEGIN") + Query("SELECT 1/0") + Query("PREPARE f AS SELECT 1") +
     Query("DEALLOCATE ALL") + Query("ROLLBACK") + Query("EXECUTE f"), 6),
    # Server signalling functions (pg_sleep's result type is void in
    # PostgreSQL, so only its value is compared).
    ("functions: pg_sleep, and signalling a pid that is no backend",
     Query("SELECT pg_sleep(0.01) IS NULL, pg_sleep(NULL) IS NULL") +
     Query("SELECT pg_cancel_backend(1), pg_terminate_backend(1)") +
     Query("SELECT pg_backend_pid() > 0"), 3),
    ("ddl: CREATE INDEX is checked and accepted",
     Query("CREATE INDEX ix_u_a ON u (a, b)") + Query("CREATE INDEX ON nope (a)") +
     Query("CREATE INDEX ON u (zz)") + Query("CREATE INDEX u ON u (a)") +
     Query("CREATE INDEX IF NOT EXISTS t ON u (a)") + Query("CREATE INDEX ON u (lower(b)) WHERE a > 0"), 6),
    ("types: date input with a time zone suffix",
     Query("SELECT '2023-06-01 +00'::date, '2023-06-01 -02'::date, '2023-06-01+05:30'::date, "
           "'June 1, 2023 +00'::date, '2023-06-01 +00'::timestamp"), 1),
    ("copy: from stdin, done",
     Query("COPY t FROM STDIN") + CopyData(b"6\tw\n") + CopyData(b"7\tv\n") + CopyDone +
     Query("SELECT count(*) FROM t"), 2),
    ("copy: from stdin, failed by the client",
     Query("COPY t FROM STDIN") + CopyData(b"8\tu\n") + CopyFail("client gave up") +
     Query("SELECT count(*) FROM t"), 2),
    ("copy: to stdout", Query("COPY t TO STDOUT"), 1),
    # time (OID 1083) and bytea (OID 17) parameters as drivers send them:
    # untyped text, typed text, typed binary (int64 µs, raw bytes); results in
    # text and binary; COPY in and out; input errors.
    ("types: time and bytea parameters in text",
     Parse("", "INSERT INTO tb VALUES ($1, $2, $3, $4)") + Describe("S", "") +
     Bind("", "", [], [b"1", b"12:34:56.789+00", b"12:34:56.789", b"\\x00ff"]) + Execute("") +
     Bind("", "", [], [b"2", None, b"23:59:59.999", b"a\\000b"]) + Execute("") + Sync + tb_rows, 2),
    ("types: time and bytea parameters in binary",
     Parse("", "INSERT INTO tb VALUES ($1, $2, $3, $4)", [23, 1083, 1083, 17]) +
     Bind("", "", [1, 1, 1, 1], [i32(3), i64(45296789000), i64(45296789000), b"\x00\x01\xff"]) + Execute("") +
     Bind("", "", [1, 1, 1, 1], [i32(4), i64(86400000000), None, b""]) + Execute("") + Sync +
     tb_rows + tb_binary_rows, 3),
    ("types: time parameter out of range in binary",
     Parse("", "SELECT $1::time", [1083]) + Bind("", "", [1], [i64(86400000001)]) + Execute("") + Sync +
     Parse("", "SELECT $1::time", [1083]) + Bind("", "", [1], [b"\x00"]) + Execute("") + Sync, 2),
    ("types: time and bytea comparisons with typed parameters",
     Parse("", "SELECT a FROM tb WHERE t >= $1 AND b <> $2 ORDER BY a", [1083, 17]) +
     Bind("", "", [0, 1], [b"12:00", b"\x00"]) + Execute("") + Sync, 1),
    ("types: time and bytea copy in and out",
     Query("COPY tb FROM STDIN") + CopyData(b"5\t01:02:03\t01:02:03.456\t\\\\x0a0b\n") +
     CopyData(b"6\t\\N\t00:00\t\\\\000abc\n") + CopyDone + Query("COPY tb TO STDOUT") +
     Query("COPY tb TO STDOUT (FORMAT csv)"), 3),
    ("types: time and bytea input errors",
     Query("INSERT INTO tb (a, t) VALUES (9, '25:00')") + Query("INSERT INTO tb (a, t) VALUES (9, 'x')") +
     Query("INSERT INTO tb (a, b) VALUES (9, '\\x0')") + Query("INSERT INTO tb (a, b) VALUES (9, '\\q')") +
     Query("COPY tb FROM STDIN") + CopyData(b"9\tnope\t\\N\t\\N\n") + CopyDone + tb_rows, 6),
    ("fatal: unknown message type", msg("?") + Query("SELECT 1"), 1),
]


def start_postgres(directory):
    pg_dir = os.path.join(directory, "pg")
    os.makedirs(pg_dir)
    os.chmod(directory, 0o755)
    shutil.chown(pg_dir, "postgres")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    run = lambda args: subprocess.run(["runuser", "-u", "postgres", "--"] + args, check=True,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      timeout=120)
    run([f"{PG_BIN}/initdb", "-D", f"{pg_dir}/data", "-A", "trust", "-U", "tally", "--no-sync"])
    run([f"{PG_BIN}/pg_ctl", "-D", f"{pg_dir}/data", "-l", f"{pg_dir}/log", "-w", "-t", "60",
         "-o", f"-p {port} -k {pg_dir} -c listen_addresses=127.0.0.1", "start"])
    return pg_dir, port


def main():
    tally_port = int(os.environ["TALLY_TEST_PORT"])
    directory = tempfile.mkdtemp(prefix="tally-protocol-diff-")
    pg_dir = None
    failures = 0
    try:
        pg_dir, pg_port = start_postgres(directory)
        servers = {"postgres": (pg_port, "postgres"), "tally": (tally_port, "tally")}
        for name, (port, database) in servers.items():
            c = Connection(port, "tally", database)
            for sql in SETUP:
                c.sock.sendall(Query(sql))
                result = c.read_until_ready(1)
                if any(m[0] == "E" for m in result):
                    raise RuntimeError(f"set-up failed on {name}: {sql}: {result}")
        for title, script, readies in SCRIPTS:
            answers = {}
            for name, (port, database) in servers.items():
                c = Connection(port, "tally", database)
                c.sock.sendall(script)
                answers[name] = c.read_until_ready(readies)
                c.sock.close()
            if answers["postgres"] != answers["tally"]:
                failures += 1
                print(f"FAIL: {title}\n  postgres: {answers['postgres']}\n"
                      f"  tally:    {answers['tally']}", file=sys.stderr)
            else:
                print(f"ok: {title}")
    finally:
        if pg_dir:
            subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/pg_ctl", "-D",
                            f"{pg_dir}/data", "-m", "immediate", "-w", "stop"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        shutil.rmtree(directory, ignore_errors=True)
    if failures:
        print(f"protocol_diff_test: {failures} of {len(SCRIPTS)} scripts differ", file=sys.stderr)
        return 1
    print(f"protocol_diff_test: all {len(SCRIPTS)} scripts agree with PostgreSQL 15")
    return 0


if __name__ == "__main__":
    sys.exit(main())
