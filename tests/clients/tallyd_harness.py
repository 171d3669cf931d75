#!/usr/bin/python3
"""Runs one client test against a freshly started tallyd, then stops it.

    tallyd_harness.py --tallyd build/tallyd [--timeout 300] -- COMMAND ARGS...

Shared by every test in tests/clients. It makes a temporary directory with a
data directory, a test CA and a server certificate signed by it (CN and SAN
localhost/127.0.0.1, so sslmode=verify-full works), writes a TOML file with
the test users, starts tallyd on a free port, waits (bounded) until it accepts
connections, runs COMMAND with the connection facts in the environment, then
stops tallyd with SIGTERM (SIGKILL after a bound) and removes everything.

Environment given to COMMAND:
  TALLY_TEST_HOST, TALLY_TEST_PORT, TALLY_TEST_DB   where to connect
  TALLY_TEST_CA                                     CA certificate (PEM) for verify-full
  TALLY_TEST_PASSWORD_USER   user with cleartext "password" authentication
  TALLY_TEST_SCRAM_USER      user with SCRAM-SHA-256
  TALLY_TEST_MD5_USER        user with MD5
  TALLY_TEST_PASSWORD        the password of all three
  TALLY_TEST_TRUST_USER      "tally", trust (loopback only)
  TALLY_TEST_SASLPREP_SCRAM_USER, TALLY_TEST_SASLPREP_PASSWORD_USER
                             SCRAM and cleartext users whose password is U+2168
                             (SASLprep: "IX"), stored as PostgreSQL's verifier
  TALLY_TEST_DIR             scratch directory of this run
  TALLY_TEST_TALLYD          the tallyd binary (for a test that starts another one)
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

PASSWORD = "S3cret-pw"
# The verifier PostgreSQL 15 stored for the password "\u2168" (ROMAN NUMERAL
# NINE), which SASLprep normalizes to "IX": both spellings must log in.
SASLPREP_VERIFIER = (
    "SCRAM-SHA-256$4096:7KSSn3g7hj3Hym5QafprMw==$KywRffc3LC2uVqEXGX1W+6pgMYe6+iyfWfy4GGqgCUA=:"
    "qAxFBjJGx5NakUbwVRT/jpPLTsWaC5tzfivoBW/KtHw=")
USERS = [
    ("tally", "trust", None),
    ("pw_user", "password", PASSWORD),
    ("scram_user", "scram-sha-256", PASSWORD),
    ("md5_user", "md5", PASSWORD),
    ("saslprep_scram", "scram-sha-256", SASLPREP_VERIFIER),
    ("saslprep_pw", "password", SASLPREP_VERIFIER),
]
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 30


def run_quiet(args, cwd):
    subprocess.run(args, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, timeout=60)


def make_certificates(directory):
    """A CA and a server certificate it signs, as pgjdbc/libpq verify-full expect."""
    run_quiet(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
               "-subj", "/CN=Tally test CA", "-keyout", "ca.key", "-out", "ca.pem"], directory)
    run_quiet(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
               "-keyout", "server.key", "-out", "server.csr"], directory)
    with open(os.path.join(directory, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run_quiet(["openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey",
               "ca.key", "-CAcreateserial", "-days", "2", "-extfile", "san.ext",
               "-out", "server.pem"], directory)
    os.chmod(os.path.join(directory, "server.key"), 0o600)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(directory, port):
    path = os.path.join(directory, "tally.toml")
    with open(path, "w") as f:
        f.write(f'listen_address = "127.0.0.1"\nport = {port}\n')
        f.write(f'data_dir = "{os.path.join(directory, "data")}"\n')
        f.write(f'tls_cert_file = "{os.path.join(directory, "server.pem")}"\n')
        f.write(f'tls_key_file = "{os.path.join(directory, "server.key")}"\n')
        f.write("shutdown_grace_ms = 2000\n")
        for name, method, password in USERS:
            f.write(f'[[users]]\nname = "{name}"\nmethod = "{method}"\n')
            if password is not None:
                f.write(f'password = "{password}"\n')
    return path


def wait_until_accepting(process, port, log_path):
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def stop(process):
    if process.poll() is not None:
        return process.returncode
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return "killed after SIGTERM timeout"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tallyd", required=True)
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    if not os.access(args.tallyd, os.X_OK):
        print(f"harness: tallyd not found at {args.tallyd}", file=sys.stderr)
        return 1

    directory = tempfile.mkdtemp(prefix="tally-clients-")
    process = None
    log_path = os.path.join(directory, "tallyd.log")
    status = 1
    try:
        make_certificates(directory)
        for attempt in range(3):  # the free port may be taken between probe and bind
            port = free_port()
            config = write_config(directory, port)
            log = open(log_path, "w")
            process = subprocess.Popen([args.tallyd, "--config", config], stdout=log,
                                       stderr=subprocess.STDOUT)
            if wait_until_accepting(process, port, log_path):
                break
            stop(process)
            process = None
        if process is None:
            print("harness: tallyd did not start; its log:", file=sys.stderr)
            print(open(log_path).read(), file=sys.stderr)
            return 1
        env = dict(os.environ)
        env.update({
            "TALLY_TEST_HOST": "127.0.0.1",
            "TALLY_TEST_PORT": str(port),
            "TALLY_TEST_DB": "tally",
            "TALLY_TEST_CA": os.path.join(directory, "ca.pem"),
            "TALLY_TEST_PASSWORD_USER": "pw_user",
            "TALLY_TEST_SCRAM_USER": "scram_user",
            "TALLY_TEST_MD5_USER": "md5_user",
            "TALLY_TEST_TRUST_USER": "tally",
            "TALLY_TEST_PASSWORD": PASSWORD,
            "TALLY_TEST_SASLPREP_SCRAM_USER": "saslprep_scram",
            "TALLY_TEST_SASLPREP_PASSWORD_USER": "saslprep_pw",
            "TALLY_TEST_DIR": directory,
            "TALLY_TEST_TALLYD": os.path.abspath(args.tallyd),
        })
        try:
            status = subprocess.run(command, env=env, timeout=args.timeout).returncode
        except subprocess.TimeoutExpired:
            print(f"harness: {command[0]} timed out after {args.timeout} s", file=sys.stderr)
            status = 1
        stopped = stop(process)
        if stopped != 0:
            print(f"harness: tallyd did not stop cleanly: {stopped}", file=sys.stderr)
            status = status or 1
        if status != 0:
            print("harness: tallyd log:", file=sys.stderr)
            print(open(log_path).read()[-20000:], file=sys.stderr)
        return status
    finally:
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
