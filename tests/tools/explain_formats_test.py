#!/usr/bin/python3
"""EXPLAIN (FORMAT JSON | YAML | XML) answer documents of PostgreSQL 15's shape:
parsed (json, yaml, xml.etree), every plan node at every depth has the keys
PostgreSQL gives every node ("Node Type", "Parallel Aware", "Async Capable",
"Startup Cost", "Total Cost", "Plan Rows", "Plan Width", with their types),
children under "Plans" with a "Parent Relationship", the node types match the
text format's lines, and the column is json (psycopg2 hands back the parsed
document) or xml. PostgreSQL 15 answers the same statements and its documents
pass the same checks, so the checks hold PostgreSQL's shape, not Tally's. Costs
are Tally's own estimates and are not compared. Run through
tests/clients/tallyd_harness.py."""
import json
import sys
import xml.etree.ElementTree as ET

import psycopg2
import yaml

import tool_env as t

SCHEMA = ["CREATE TABLE sales (region text, amount int, day date)",
          "CREATE TABLE regions (name text, zone int)",
          "INSERT INTO sales VALUES ('north', 10, '2024-01-01'), ('south', 20, '2024-01-02'), ('north', 5, NULL)",
          "INSERT INTO regions VALUES ('north', 1), ('south', 2)"]
QUERIES = ["SELECT count(*) FROM sales",
           "SELECT region, sum(amount) FROM sales WHERE amount > 1 GROUP BY region ORDER BY 2 DESC LIMIT 1",
           "SELECT r.zone, count(*) FROM sales s JOIN regions r ON r.name = s.region GROUP BY r.zone",
           "SELECT * FROM (SELECT region, max(amount) AS m FROM sales GROUP BY region) q WHERE m > 1",
           "SELECT 1"]
# What PostgreSQL gives every node, with the type of each value.
NODE_KEYS = {"Node Type": str, "Parallel Aware": bool, "Async Capable": bool, "Startup Cost": (int, float),
             "Total Cost": (int, float), "Plan Rows": int, "Plan Width": int}
XML_NS = "{http://www.postgresql.org/2009/explain}"


def node_problems(node, path, top):
    problems = []
    for key, kind in NODE_KEYS.items():
        if key not in node:
            problems.append(f"{path}: no {key!r}")
        elif not isinstance(node[key], kind) or (kind is int and isinstance(node[key], bool)):
            problems.append(f"{path}: {key!r} is {node[key]!r}")
    if not top and node.get("Parent Relationship") not in ("Outer", "Inner", "Member", "Subquery", "InitPlan",
                                                            "SubPlan"):
        problems.append(f"{path}: Parent Relationship {node.get('Parent Relationship')!r}")
    if node.get("Startup Cost", 0) > node.get("Total Cost", 0):
        problems.append(f"{path}: startup cost above total cost")
    for i, child in enumerate(node.get("Plans", [])):
        problems += node_problems(child, f"{path}/Plans[{i}]", False)
    return problems


def node_types(node):
    return [node["Node Type"]] + [t for child in node.get("Plans", []) for t in node_types(child)]


def xml_to_node(element):
    """An XML <Plan> as the JSON object it stands for (typed as PostgreSQL's keys are)."""
    node = {}
    for child in element:
        key = child.tag.replace(XML_NS, "").replace("-", " ")
        if key == "Plans":
            node[key] = [xml_to_node(plan) for plan in child]
        elif key in ("Parallel Aware", "Async Capable"):
            node[key] = child.text == "true"
        elif key in ("Plan Rows", "Plan Width"):
            node[key] = int(child.text)
        elif key in ("Startup Cost", "Total Cost"):
            node[key] = float(child.text)
        else:
            node[key] = child.text
    return node


def documents(cursor, sql):
    """The plan of `sql` in each format, parsed: {format: the top plan node}, and the text lines."""
    out = {}
    cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}")
    (doc,), = cursor.fetchall()
    out["json"] = doc[0]["Plan"] if isinstance(doc, list) else doc  # psycopg2 parses a json column
    cursor.execute(f"EXPLAIN (FORMAT YAML) {sql}")
    out["yaml"] = yaml.safe_load(cursor.fetchall()[0][0])[0]["Plan"]
    cursor.execute(f"EXPLAIN (FORMAT XML) {sql}")
    root = ET.fromstring(cursor.fetchall()[0][0])
    out["xml"] = xml_to_node(root.find(f"{XML_NS}Query/{XML_NS}Plan"))
    cursor.execute(f"EXPLAIN {sql}")
    text = [r[0] for r in cursor.fetchall()]
    return out, text


def check_server(checks, name, conninfo):
    conn = psycopg2.connect(conninfo)
    conn.autocommit = True
    try:
        cur = conn.cursor()
        for sql in QUERIES:
            try:
                docs, text = documents(cur, sql)
            except Exception as e:  # noqa: BLE001 - the step fails with the error
                checks.check(False, f"{name}: {sql}", repr(e))
                continue
            problems = []
            for fmt, plan in docs.items():
                problems += node_problems(plan, fmt, True)
            # The text lines name the same nodes, top first ("->  " before children).
            lines = [l.strip().removeprefix("->  ") for l in text if l.lstrip().startswith("->") or l == text[0]]
            json_types = node_types(docs["json"])
            if len(lines) != len(json_types):
                problems.append(f"text has {len(lines)} nodes, json {len(json_types)}: {text} / {json_types}")
            if node_types(docs["yaml"]) != json_types or node_types(docs["xml"]) != json_types:
                problems.append(f"formats disagree: {node_types(docs['yaml'])} {node_types(docs['xml'])} {json_types}")
            checks.check(not problems, f"{name}: {sql}", "\n".join(problems))
        # The column's type: psycopg2 parses json itself; xml and yaml come as text.
        cur.execute("EXPLAIN (FORMAT JSON) SELECT count(*) FROM sales")
        checks.check(isinstance(cur.fetchone()[0], list) and cur.description[0].type_code == 114,
                     f"{name}: FORMAT JSON answers a json column", str(cur.description))
        cur.execute("EXPLAIN (FORMAT XML) SELECT count(*) FROM sales")
        checks.check(cur.description[0].type_code == 142, f"{name}: FORMAT XML answers an xml column",
                     str(cur.description))
        # ANALYZE: the plan, then PostgreSQL's summary keys.
        cur.execute("EXPLAIN (ANALYZE, FORMAT JSON) SELECT region, count(*) FROM sales GROUP BY region")
        doc = cur.fetchone()[0][0]
        checks.check(not node_problems(doc["Plan"], "analyze", True) and isinstance(doc.get("Execution Time"), float)
                     and doc.get("Triggers") == [], f"{name}: EXPLAIN (ANALYZE, FORMAT JSON)", json.dumps(doc)[:2000])
        # COSTS OFF: no cost keys, no "(cost=" in text.
        cur.execute("EXPLAIN (COSTS OFF, FORMAT JSON) SELECT count(*) FROM sales")
        plan = cur.fetchone()[0][0]["Plan"]
        cur.execute("EXPLAIN (COSTS OFF) SELECT count(*) FROM sales")
        text = [r[0] for r in cur.fetchall()]
        checks.check("Total Cost" not in plan and not any("cost=" in l for l in text),
                     f"{name}: EXPLAIN (COSTS OFF)", f"{plan}\n{text}")
        for sql, state in [("EXPLAIN (FORMAT CSV) SELECT 1", "22023"), ("EXPLAIN (NOSUCH) SELECT 1", "42601")]:
            try:
                cur.execute(sql)
                checks.check(False, f"{name}: {sql} fails with {state}", "it ran")
            except psycopg2.Error as e:
                checks.check(e.pgcode == state, f"{name}: {sql} fails with {state}", f"{e.pgcode}: {e}")
    finally:
        conn.close()


def main():
    checks = t.Checks({}, __file__)
    pg = t.pg.Postgres(t.USER, t.DATABASE)
    try:
        for sql in SCHEMA:
            pg.sql(t.USER, t.DATABASE, sql)
            status, out = t.psql(t.TALLY, sql)
            if not checks.check(status == 0, f"tallyd runs {sql}", out):
                return checks.status()
        check_server(checks, "PostgreSQL 15", pg.conninfo(t.USER, t.DATABASE))
        check_server(checks, "tallyd", t.TALLY)
    finally:
        pg.stop()
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
