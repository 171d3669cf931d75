#!/usr/bin/env python3
"""Where the end path of GPU queries spends, over every EXPLAIN ANALYZE in a log.

Reads the "GPU: end path (us after finalize began): ..." lines of a log
(live_tuning_bench, gpu_e2e_bench) and prints, per section of the log
("######## shape NAME", e2e's "G = 2^k [knobs]:"), min / median / max of the steps between marks:
copied -> result built (the host building the result from the pinned copy),
and when the marks are there (session 9 and later) each region of that build
with its page faults, the clock probe, the CPU, and the blocked waits before
"chunks done". Usage: end_path_stats.py LOG [LOG...]
"""
import re
import statistics
import sys

MARK = re.compile(r"\s*([^,(]+?) (-?[0-9.]+)(?: \((-?\d+)(?: ([^)]*))?\))?$")


def parse(line):
    body = line.split("):", 1)[1] if "):" in line else line.split(":", 1)[1]
    marks = []
    for item in body.split(","):
        m = MARK.match(item)
        if m:
            marks.append((m.group(1).strip(), float(m.group(2)), int(m.group(3)) if m.group(3) else None))
    return marks


def stats(xs):
    if not xs:
        return "-"
    return f"{min(xs):8.1f} {statistics.median(xs):8.1f} {max(xs):8.1f}  (n={len(xs)})"


def main(paths):
    sections = {}
    for path in paths:
        shape = "all"
        for line in open(path, errors="replace"):
            s = re.match(r"#+ shape (\S+)", line) or re.match(r"(G = 2\^\d+.*):$", line)
            if s:
                shape = s.group(1).rstrip(":")
            if "GPU: end path" in line:
                sections.setdefault(shape, []).append(parse(line))
    for shape, queries in sections.items():
        rows = {}
        for marks in queries:
            at = {label: (us, count) for label, us, count in marks}
            if "copied" in at and "result built" in at:
                rows.setdefault("copied -> result built (us)", []).append(at["result built"][0] - at["copied"][0])
            if "chunks done" in at and at["chunks done"][1] is not None:
                rows.setdefault("blocked waits before chunks done", []).append(at["chunks done"][1])
            for prepared in ("result prepared", "result partly prepared"):
                if prepared in at and "host lines" in at:
                    rows.setdefault(f"host lines -> {prepared} (us)", []).append(at[prepared][0] - at["host lines"][0])
            # The build's regions: each mark's time since the previous mark, and its faults.
            previous = None
            started = False
            for label, us, count in marks:
                if label == "copied":
                    started = True
                elif started and label in ("clock probe", "build on cpu") and count is not None:
                    rows.setdefault(label + (" (MHz)" if label == "clock probe" else ""), []).append(count)
                elif started and count is not None and label != "build switches":
                    rows.setdefault(f"{label} (us)", []).append(us - previous)
                    rows.setdefault(f"{label} (faults)", []).append(count)
                elif started and label == "build switches" and count is not None:
                    rows.setdefault("context switches in the build", []).append(count)
                if label == "result built":
                    started = False
                previous = us
        print(f"shape {shape}: {len(queries)} end paths; min / median / max")
        for name, xs in rows.items():
            print(f"  {name:40s} {stats(xs)}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
