"""A scratch PostgreSQL 15 for the scripts that read its catalogs into Tally's sources
(generate_postgres_settings.py, generate_postgres_functions.py): initdb into a temporary
directory as the postgres user, started on a free port with its socket there, stopped and
removed on exit. Run the scripts as root (runuser)."""

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile

# Between fields, between rows, and for NULL: the catalogs' texts hold quotes, commas and
# newlines, never these.
FIELD, RECORD, NULL = "\x1f", "\x1e", "\x01"


def as_postgres(args):
    subprocess.run(["runuser", "-u", "postgres", "--"] + args, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.STDOUT, timeout=120)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def scratch_postgres(pg_bin, prefix, empty_config=False):
    """Yields a query function: query(sql) -> the rows, each a list of fields (None for NULL).
    empty_config: start from an empty postgresql.conf (every setting at its built-in default)."""
    work = tempfile.mkdtemp(prefix=prefix)
    shutil.chown(work, "postgres", "postgres")
    data, port = os.path.join(work, "data"), free_port()
    try:
        as_postgres([os.path.join(pg_bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8",
                     "--locale=C.UTF-8"])
        if empty_config:
            as_postgres(["sh", "-c", f": > {data}/postgresql.conf"])
        as_postgres([os.path.join(pg_bin, "pg_ctl"), "-D", data, "-w", "-l", os.path.join(work, "log"), "-o",
                     f"-p {port} -k {work} -c listen_addresses=", "start"])
        try:
            def query(sql):
                out = subprocess.run([os.path.join(pg_bin, "psql"), "-X", "-A", "-t", "-F", FIELD, "-R", RECORD,
                                      "-P", f"null={NULL}", "-h", work, "-p", str(port), "-U", "postgres",
                                      "-d", "postgres", "-c", sql],
                                     check=True, stdout=subprocess.PIPE, text=True, timeout=120).stdout
                rows = []
                for record in out.rstrip("\n").split(RECORD):
                    record = record.strip("\n")
                    if record:
                        rows.append([None if f == NULL else f for f in record.split(FIELD)])
                return rows
            yield query
        finally:
            as_postgres([os.path.join(pg_bin, "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
