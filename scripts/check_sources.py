#!/usr/bin/env python3
"""Fails on product source that breaks the house rules (STYLE.md, docs/architecture.md):
  * a file in gpu/ or executor/ over 800 lines (split it by job);
  * getenv outside config/ (settings are read once, in config/, into typed options);
  * a device name, a dated measurement, a work session or a results file named in product
    code (comments say why the code is as it is; history belongs in commit messages).
Usage: scripts/check_sources.py [repository root]
"""
import re
import sys

from tree_check import PRODUCT, run, sources
MAX_LINES = 800
SIZE_CAPPED = ("gpu", "executor")
HISTORY = re.compile(
    r"\b(?:[AHV]100|H200|GH200|RTX ?\d{3,4})\b"       # device names
    r"|RESULTS|results\.md|bench/\w+/data"               # results files and logs
    r"|\b[Ss]ession \d+\b"                               # work sessions
    r"|\b20[2-9]\d-\d\d-\d\d\b"                          # dates of measurements
    r"|\b2-core VM\b|\bthe VM\b"                         # the machine a figure came from
)


def check(root):
    problems = []
    for layer in PRODUCT:
        for f in sources(root / layer):
            rel = f.relative_to(root)
            lines = f.read_text(errors="replace").splitlines()
            if layer in SIZE_CAPPED and len(lines) > MAX_LINES:
                problems.append(f"{rel}: {len(lines)} lines (at most {MAX_LINES} in {'/, '.join(SIZE_CAPPED)}/)")
            for n, line in enumerate(lines, 1):
                if layer != "config" and re.search(r"\b(?:secure_)?getenv\s*\(", line):
                    problems.append(f"{rel}:{n}: getenv outside config/: {line.strip()}")
                m = HISTORY.search(line)
                if m:
                    problems.append(f"{rel}:{n}: names '{m.group(0)}': {line.strip()}")
    return problems


def main():
    return run("check_sources", check, "problem(s)", "file sizes, settings and comments follow the house rules")


if __name__ == "__main__":
    sys.exit(main())
