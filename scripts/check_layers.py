#!/usr/bin/env python3
"""Fails when a layer reaches a layer it must not (docs/architecture.md has the rule).

Checks, for every product folder (one layer each):
  * each `#include "folder/..."` names the folder itself or a layer in its row;
  * each library a folder's CMake target links is defined in an allowed layer;
  * a folder's CMakeLists compiles only files inside the folder.
Usage: scripts/check_layers.py [repository root]
"""
import re
import sys

from tree_check import run, sources


def allowed_table(root):
    """{layer: set of layers it may include}, read from docs/architecture.md's table."""
    text = (root / "docs" / "architecture.md").read_text()
    section = text.split("## Which layer may include which", 1)[1]
    table = {}
    for line in section.splitlines():
        m = re.match(r"^\|\s*`(\w+)`\s*\|(.*)\|\s*$", line)
        if m:
            table[m.group(1)] = set(re.findall(r"`(\w+)`", m.group(2)))
    if not table:
        sys.exit("check_layers: no layer table found in docs/architecture.md")
    return table


def cmake_files(root, layer):
    return sorted((root / layer).rglob("CMakeLists.txt")) + sorted((root / layer).rglob("*.cmake"))


def cmake_commands(text, name):
    """The argument text of every `name(...)` call in a CMake file (no nested parentheses
    beyond generator expressions, which never hold a ')' inside a target name)."""
    text = re.sub(r"#[^\n]*", "", text)
    out = []
    for m in re.finditer(r"\b" + name + r"\s*\(", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        out.append(text[m.end():i - 1])
    return out


def library_layers(root, layers):
    """{library target: layer that defines it}."""
    owner = {}
    for layer in layers:
        for f in cmake_files(root, layer):
            for args in cmake_commands(f.read_text(), "add_library"):
                owner[args.split()[0]] = layer
    return owner


def check(root):
    table = allowed_table(root)
    owner = library_layers(root, table)
    problems = []
    for layer, allowed in table.items():
        ok = allowed | {layer}
        folder = root / layer
        for f in sources(folder):
            for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                m = re.match(r'\s*#\s*include\s+"(\w+)/', line)
                if m and m.group(1) in table and m.group(1) not in ok:
                    problems.append(f"{f.relative_to(root)}:{n}: {layer} includes {m.group(1)}: {line.strip()}")
        for f in cmake_files(root, layer):
            text = f.read_text()
            for args in cmake_commands(text, "target_link_libraries"):
                for word in args.split()[1:]:
                    target_layer = owner.get(word)
                    if target_layer and target_layer not in ok:
                        problems.append(f"{f.relative_to(root)}: {layer} links {word} ({target_layer})")
            for m in re.finditer(r"\$\{CMAKE_(?:SOURCE_DIR|CURRENT_SOURCE_DIR|CURRENT_LIST_DIR)\}/([\w./-]+)", text):
                path = (f.parent / m.group(1)) if "CURRENT" in m.group(0) else (root / m.group(1))
                try:
                    path.resolve().relative_to(folder.resolve())
                except ValueError:
                    problems.append(f"{f.relative_to(root)}: {layer} builds {m.group(0)}, outside {layer}/")
    return problems


def main():
    return run("check_layers", check, "reach(es) across layers (rule: docs/architecture.md)",
               "every include, link and source stays inside the allowed layers")


if __name__ == "__main__":
    sys.exit(main())
