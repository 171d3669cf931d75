#!/usr/bin/env python3
"""Sums `perf report --no-children` of tallyd profiles by query phase, for
bench/cpu/RESULTS.md's before/after tables.

Usage: perf_phases.py BEFORE.data [AFTER.data]
  (each from `perf record -g -p <tallyd pid> -- cpu_query_bench ... SQL`)
Prints each phase's share of the samples per file; multiply by the profile's
CPU seconds per query (perf report's event count / runs) for seconds.
"""
import re
import subprocess
import sys

# First match wins: symbol substrings -> phase.
PHASES = [
    (("encode_rows", "write_numeric", "write_uint"), "encode DataRows"),
    (("sink_radix", "copy_moved", "plan_moved"), "sink: radix partition"),
    (("update_states", "apply_deferred", "emit_deferred", "emit_at", "grow_result", "move_result", "widen"),
     "engine finalize: aggregate kept rows, emit"),
    (("finalize_counted", "finalize_compact", "any_empty", "Vector::resize", "assign_ints", "finalize_column",
      "avg_of"), "result columns (finalize to Vectors)"),
    (("memset",), "memset (zeroing new arrays/buffers)"),
    (("memmove", "memcpy"), "memmove/memcpy"),
]


def phases(path):
    out = subprocess.run(["perf", "report", "-i", path, "--no-children", "--stdio", "-g", "none",
                          "--percent-limit", "0.05"], capture_output=True, text=True, check=True).stdout
    total = {}
    for line in out.splitlines():
        m = re.match(r"\s+([0-9.]+)%\s+\S+\s+\S+\s+\[(.)\]\s+(.*)", line)
        if not m:
            continue
        pct, kind, symbol = float(m.group(1)), m.group(2), m.group(3)
        phase = "kernel (send, scheduling)" if kind == "k" else "other"
        if kind != "k":
            for keys, name in PHASES:
                if any(k in symbol for k in keys):
                    phase = name
                    break
        total[phase] = total.get(phase, 0.0) + pct
    return total


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    tables = [phases(p) for p in sys.argv[1:]]
    names = sorted(set().union(*tables), key=lambda k: -tables[0].get(k, 0.0))
    for name in names:
        print(f"{name:45s}" + "".join(f" {t.get(name, 0.0):6.1f}%" for t in tables))
    return 0


if __name__ == "__main__":
    sys.exit(main())
