#!/usr/bin/env python3
"""Fails when product code repeats a run of 10 or more lines (fold it into one piece of code).

Lines are compared with their whitespace collapsed; blank lines, comment lines, #include
lines and lines of punctuation alone (`}`, `};`, `break;` ...) are not counted, so a run is
10 lines that carry code. Usage: scripts/check_duplicates.py [repository root] [--min-lines N]
"""
import argparse
import collections
import pathlib
import re
import sys

from tree_check import PRODUCT, sources
THIN = re.compile(r"^[{}()\[\];,]*$|^(?:break|continue|return|default:|public:|private:|protected:|else)[ ;{}]*$")


def significant_lines(path):
    """[(line number, normalized text)] of the lines that carry code."""
    out = []
    in_block_comment = False
    for n, raw in enumerate(path.read_text(errors="replace").splitlines(), 1):
        line = raw.strip()
        if in_block_comment:
            if "*/" in line:
                in_block_comment = False
            continue
        if line.startswith("/*"):
            in_block_comment = "*/" not in line
            continue
        line = re.sub(r"\s+", " ", re.sub(r"//.*$", "", line)).strip()
        if not line or line.startswith("#include") or line.startswith("#pragma") or THIN.match(line):
            continue
        out.append((n, line))
    return out


def find_repeats(root, min_lines):
    windows = collections.defaultdict(list)
    files = {}
    for layer in PRODUCT:
        for f in sources(root / layer):
            rel = str(f.relative_to(root))
            files[rel] = significant_lines(f)
            lines = files[rel]
            for i in range(len(lines) - min_lines + 1):
                key = "\n".join(text for _, text in lines[i:i + min_lines])
                windows[key].append((rel, i))
    # Keep one report per pair of places: the first window of each maximal run.
    reported = set()
    repeats = []
    for places in windows.values():
        if len(places) < 2:
            continue
        first = places[0]
        for other in places[1:]:
            if other[0] == first[0] and abs(other[1] - first[1]) < min_lines:
                continue  # the run overlaps itself (a repeated line pattern inside one run)
            if (first[0], first[1] - 1, other[0], other[1] - 1) in reported:
                reported.add((first[0], first[1], other[0], other[1]))
                continue  # continuation of a run already reported
            reported.add((first[0], first[1], other[0], other[1]))
            a, b = files[first[0]][first[1]][0], files[other[0]][other[1]][0]
            repeats.append(f"{first[0]}:{a} ~ {other[0]}:{b}")
    return repeats


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root", nargs="?", default=str(pathlib.Path(__file__).resolve().parent.parent))
    parser.add_argument("--min-lines", type=int, default=10)
    args = parser.parse_args()
    repeats = find_repeats(pathlib.Path(args.root), args.min_lines)
    for r in repeats:
        print(f"repeated run of {args.min_lines}+ lines: {r}")
    if repeats:
        print(f"check_duplicates: {len(repeats)} repeated run(s) in product code")
        return 1
    print(f"check_duplicates: no run of {args.min_lines} or more lines repeats in product code")
    return 0


if __name__ == "__main__":
    sys.exit(main())
