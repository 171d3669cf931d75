#!/usr/bin/env python3
"""The admin endpoint of a running tallyd: probes, a token, Prometheus metrics
that move when queries run through psql (connections, outcomes, latency, rows
and bytes scanned), the query log, the tuning JSON read from the persisted
tuning cache (entries written by TUNING_SEED into the running server's catalog,
as the tuner writes them), and the tuning page rendered by headless Chromium
(screenshot kept in ARTIFACTS).
Usage: tallyd_admin_test.py TALLYD ARTIFACTS_DIR [TUNING_SEED]"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

TALLYD = ARTIFACTS = TUNING_SEED = None
SEEDED_ENTRIES = 3
TABLE_ROWS = 5000
START_TIMEOUT = 60
CHROMIUM_TIMEOUT = 120
TOKEN = "admin-test-token"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_metrics(text):
    samples = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        series, value = line.rsplit(" ", 1)
        samples[series] = float(value)
    return samples


class TallydAdmin(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.log = open(os.path.join(cls.tmp.name, "tallyd.log"), "w+")
        # A probed free port may be taken by a test running beside this one
        # before tallyd binds it: start again on other ports when tallyd exits.
        for attempt in range(3):
            if cls.start_server():
                break
        else:
            raise RuntimeError("tallyd did not start:\n" + cls.server_log())
        if TUNING_SEED:
            # Written while tallyd runs, through another SQLite connection.
            subprocess.run([TUNING_SEED, os.path.join(cls.tmp.name, "data", "catalog.sqlite3"),
                            str(SEEDED_ENTRIES)], check=True, timeout=60)

    @classmethod
    def start_server(cls):
        cls.port = free_port()
        cls.http_port = free_port()
        while cls.http_port == cls.port:
            cls.http_port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("TALLY_")}
        env.update({"TALLY_PORT": str(cls.port), "TALLY_HTTP_PORT": str(cls.http_port),
                    "TALLY_HTTP_TOKEN": TOKEN, "TALLY_DATA_DIR": os.path.join(cls.tmp.name, "data"),
                    "TALLY_USERS": "admin_test:scram-sha-256:pw", "TALLY_GPU_DEVICE": "-2",
                    "TALLY_LOG_FORMAT": "json"})
        cls.log.truncate(0)
        cls.proc = subprocess.Popen([TALLYD], env=env, stdout=cls.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while cls.proc.poll() is None and time.monotonic() < deadline:
            try:
                # Both ports answer, and the answers come from this tallyd (it is
                # still running once they do: a tallyd that lost a port exits).
                if cls.get("/health")[0] == 200:
                    socket.create_connection(("127.0.0.1", cls.port), timeout=5).close()
                    time.sleep(0.2)
                    if cls.proc.poll() is None:
                        return True
            except OSError:
                pass
            time.sleep(0.2)
        if cls.proc.poll() is None:
            cls.proc.kill()
        cls.proc.wait()
        return False

    @classmethod
    def tearDownClass(cls):
        if cls.proc.poll() is None:
            cls.proc.terminate()
            try:
                cls.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                cls.proc.kill()
                cls.proc.wait()
        cls.log.close()
        cls.tmp.cleanup()

    @classmethod
    def server_log(cls):
        cls.log.flush()
        cls.log.seek(0)
        return cls.log.read()

    @classmethod
    def get(cls, path, token=None):
        request = urllib.request.Request(f"http://127.0.0.1:{cls.http_port}{path}")
        if token:
            request.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def psql(self, sql):
        env = dict(os.environ, PGPASSWORD="pw", PGCONNECT_TIMEOUT="10")
        return subprocess.run(["psql", "-X", "-A", "-t", "-h", "127.0.0.1", "-p", str(self.port),
                               "-U", "admin_test", "-d", "tally", "-c", sql],
                              env=env, capture_output=True, text=True, timeout=60)

    def test_probes_and_token(self):
        self.assertEqual(self.get("/health")[0], 200)
        self.assertEqual(self.get("/ready")[0], 200)
        self.assertEqual(self.get("/metrics")[0], 401)
        self.assertEqual(self.get("/metrics", "wrong")[0], 401)
        self.assertEqual(self.get("/metrics", TOKEN)[0], 200)
        self.assertEqual(self.get("/nowhere", TOKEN)[0], 404)

    def test_metrics_move_when_queries_run(self):
        before = parse_metrics(self.get("/metrics", TOKEN)[1])
        for _ in range(3):
            ok = self.psql("SELECT 1")
            self.assertEqual(ok.returncode, 0, ok.stderr)
        bad = self.psql("SELECT 1/0")
        self.assertIn("division by zero", bad.stderr)
        # psql exits once it has sent Terminate; the server closes the session
        # a moment later, so wait (bounded) for the active gauge to drop.
        deadline = time.monotonic() + 60
        while True:
            after = parse_metrics(self.get("/metrics", TOKEN)[1])
            if after.get("tally_connections_active", 0) == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        delta = lambda key: after.get(key, 0) - before.get(key, 0)
        self.assertEqual(delta("tally_connections_total"), 4)
        self.assertEqual(delta('tally_queries_total{outcome="ok"}'), 3)
        self.assertEqual(delta('tally_queries_total{outcome="error"}'), 1)
        self.assertEqual(after["tally_connections_active"], 0)
        self.assertEqual(delta('tally_query_duration_seconds_count{engine="cpu"}') +
                         delta('tally_query_duration_seconds_count{engine="gpu"}'), 4)
        for family in ("tally_rows_scanned_total", "tally_column_cache_hit_ratio", "tally_tuning_cache_entries",
                       "tally_gpu_memory_used_bytes", "tally_tuner_explorations_total"):
            self.assertTrue(any(k.startswith(family) for k in after), family)

    def test_rows_and_bytes_scanned_move_with_a_group_by(self):
        table = "grouped_sales"
        rows = "".join(f"{i % 7}\t{i}\n" for i in range(TABLE_ROWS))
        env = dict(os.environ, PGPASSWORD="pw", PGCONNECT_TIMEOUT="10")
        load = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(self.port),
                               "-U", "admin_test", "-d", "tally", "-c", f"CREATE TABLE {table} (k int, v bigint)",
                               "-c", f"COPY {table} FROM STDIN"],
                              input=rows, env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(load.returncode, 0, load.stderr)
        before = parse_metrics(self.get("/metrics", TOKEN)[1])
        r = self.psql(f"SELECT k, sum(v) FROM {table} GROUP BY k ORDER BY k")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout.split()), 7)
        after = parse_metrics(self.get("/metrics", TOKEN)[1])
        delta = lambda key: after.get(key, 0) - before.get(key, 0)
        # Every row read once (the group-count sample may read some again).
        self.assertGreaterEqual(delta("tally_rows_scanned_total"), TABLE_ROWS)
        self.assertLess(delta("tally_rows_scanned_total"), 3 * TABLE_ROWS)
        # Two columns of 4 + 8 bytes per row at least.
        self.assertGreaterEqual(delta("tally_bytes_scanned_total"), 12 * TABLE_ROWS)
        # The query's log line names what ran and what it read.
        deadline = time.monotonic() + 60
        while True:
            lines = [json.loads(l) for l in self.server_log().splitlines() if l.startswith("{")]
            grouped = [l for l in lines if l.get("event") == "query" and l.get("rows_scanned", 0) >= TABLE_ROWS]
            if grouped or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertTrue(grouped, "no query line with the scan")
        line = grouped[-1]
        self.assertEqual(line["command"], "SELECT")
        self.assertGreaterEqual(line["bytes_scanned"], 12 * TABLE_ROWS)
        self.assertIn("duration_ms", line)
        self.assertIn(line["engine"], ("cpu", "gpu", "none"))
        self.assertIn("variant", line)
        self.assertNotIn(table, json.dumps(line), "statement text only at debug level")
        self.assertTrue(any(l.get("event") == "connection" and l.get("user") == "admin_test" for l in lines))
        self.assertTrue(any(l.get("event") == "disconnection" for l in lines))

    def test_tuning_json_reads_the_persisted_cache(self):
        if not TUNING_SEED:
            self.skipTest("tuning_seed was not built (no tuning cache in this build)")
        data = json.loads(self.get("/tuning", TOKEN)[1])
        self.assertEqual(len(data["entries"]), SEEDED_ENTRIES)
        self.assertIsNone(data["device"])  # TALLY_GPU_DEVICE=-2
        for entry in data["entries"]:
            self.assertTrue(entry["measured_grid"])
            self.assertTrue(entry["search_path"])
            self.assertEqual(entry["observations"], 1)
        metrics = parse_metrics(self.get("/metrics", TOKEN)[1])
        self.assertEqual(metrics["tally_tuning_cache_entries"], SEEDED_ENTRIES)

    def test_admin_never_shows_passwords(self):
        for path in ("/metrics", "/tuning", "/tuning/page"):
            status, body = self.get(path, TOKEN)
            self.assertEqual(status, 200, path)
            self.assertNotIn("SCRAM-SHA-256$", body, path)
            self.assertNotIn(TOKEN, body, path)
        json.loads(self.get("/tuning", TOKEN)[1])

    def test_tuning_page_in_chromium(self):
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        self.assertIsNotNone(chromium, "chromium is not installed: run scripts/setup.sh")
        profile = tempfile.mkdtemp(prefix="tally-chromium-")
        url = f"http://127.0.0.1:{self.http_port}/tuning/page?token={TOKEN}"
        base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                "--user-data-dir=" + profile]
        try:
            dom = subprocess.run(base + ["--dump-dom", url], capture_output=True, text=True,
                                 timeout=CHROMIUM_TIMEOUT).stdout
            entries = json.loads(self.get("/tuning", TOKEN)[1])
            count = len(entries) if isinstance(entries, list) else len(entries.get("entries", []))
            if TUNING_SEED:
                self.assertEqual(count, SEEDED_ENTRIES)
            self.assertIn(f'data-rendered="{count}"', dom, dom[:1500])
            self.assertIn("Tally tuning cache", dom)
            self.assertEqual(len(re.findall(r'<figure class="heatmap"', dom)), count)
            os.makedirs(ARTIFACTS, exist_ok=True)
            png = os.path.join(ARTIFACTS, "tallyd_tuning_page.png")
            if os.path.exists(png):
                os.remove(png)
            subprocess.run(base + ["--hide-scrollbars", "--window-size=1200,800", "--screenshot=" + png, url],
                           capture_output=True, timeout=CHROMIUM_TIMEOUT)
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        finally:
            shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 3:
        TUNING_SEED = os.path.abspath(sys.argv.pop(3))
    ARTIFACTS = os.path.abspath(sys.argv.pop(2))
    TALLYD = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
