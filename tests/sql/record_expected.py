#!/usr/bin/env python3
"""Fills in the expected rows of `query` records in a .test file by asking a
running PostgreSQL 15 (the oracle): record_expected.py FILE "host=... port=..."

All records run in ONE psql session (transactions and cursors carry over);
the rows after ---- are replaced with what PostgreSQL returns (tab-separated,
NULL for NULL). Review the diff before committing.
"""
import subprocess
import sys

MARK = "@@record@@"


def main():
    path, conninfo = sys.argv[1], sys.argv[2]
    lines = open(path).read().split("\n")
    records, out_lines, i = [], [], 0
    # Parse into (header, sql lines) keeping other lines in place.
    layout = []
    while i < len(lines):
        line = lines[i]
        if line == "onlyif tally":
            # Tally-only record (PostgreSQL supports what Tally refuses): kept as is.
            layout.append(("text", line))
            i += 1
            while i < len(lines) and lines[i] != "":
                layout.append(("text", lines[i]))
                i += 1
            continue
        if not (line.startswith("statement") or line.startswith("query")):
            layout.append(("text", line))
            i += 1
            continue
        header = line
        i += 1
        sql = []
        while i < len(lines) and lines[i] != "" and lines[i] != "----":
            sql.append(lines[i])
            i += 1
        if i < len(lines) and lines[i] == "----":
            i += 1
            while i < len(lines) and lines[i] != "":
                i += 1
        layout.append(("record", (header, sql)))
        records.append((header, sql))
    script = ["DROP SCHEMA IF EXISTS public CASCADE;", "CREATE SCHEMA public;"]
    for n, (header, sql) in enumerate(records):
        script.append(f"\\echo {MARK}{n}")
        text = "\n".join(sql).rstrip()
        script.append(text if text.endswith(";") else text + ";")
    script.append(f"\\echo {MARK}end")
    result = subprocess.run(["psql", conninfo, "-X", "-A", "-t", "-q", "-F", "\t", "-P", "null=NULL"],
                            input="\n".join(script) + "\n", capture_output=True, text=True)
    output = (result.stdout + result.stderr).split("\n")
    # psql interleaves stderr; run again capturing merged output in order.
    merged = subprocess.run(["psql", conninfo, "-X", "-A", "-t", "-q", "-F", "\t", "-P", "null=NULL"],
                            input="\n".join(script) + "\n", stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True).stdout.split("\n")
    chunks, current = {}, None
    for line in merged:
        if line.startswith(MARK):
            current = line[len(MARK):]
            chunks[current] = []
        elif current is not None:
            chunks[current].append(line)
    result_lines = []
    for n, (header, sql) in enumerate(records):
        body = [l for l in chunks.get(str(n), []) if l != ""]
        errors = [l for l in body if l.startswith("ERROR:") or l.startswith("psql:")]
        if header.startswith("query"):
            if errors:
                sys.exit(f"query failed on PostgreSQL: {sql}\n{errors}")
        elif header.startswith("statement ok") and errors:
            sys.exit(f"statement failed on PostgreSQL: {sql}\n{errors}")
        elif header.startswith("statement error") and not errors:
            sys.exit(f"statement did not fail on PostgreSQL: {sql}")
    k = 0
    for kind, value in layout:
        if kind == "text":
            out_lines.append(value)
            continue
        header, sql = value
        out_lines.append(header)
        out_lines.extend(sql)
        if header.startswith("query"):
            out_lines.append("----")
            body = [l for l in chunks.get(str(k), []) if l != ""]
            out_lines.extend(l for l in body if not l.startswith(("NOTICE:", "WARNING:", "DETAIL:", "HINT:")))
        k += 1
    open(path, "w").write("\n".join(out_lines))


if __name__ == "__main__":
    main()
