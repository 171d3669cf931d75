#!/usr/bin/python3
"""pgbench 15 against tallyd: `pgbench -i` at scale 1, then 10 s of the default
(TPC-B like) script in each query mode (simple, extended, prepared) with 64
clients, with no failed transaction; afterwards the balances agree: every
transaction added the same delta to one account, one teller and one branch and
logged it in pgbench_history. Run through tests/clients/tallyd_harness.py."""
import os
import re
import sys

import tool_env as t

PGBENCH = os.path.join(t.PG_BIN, "pgbench")
CLIENTS = 64
SECONDS = 10
# Steps that fail today: {step: (why, pattern its error matches)}. See tool_env.Checks.
KNOWN_GAPS = {}


def main():
    checks = t.Checks(KNOWN_GAPS, __file__)
    env = t.tally_env()
    # The default initialization: drop, create, client-side generate (COPY), vacuum, primary keys.
    status, out = t.run([PGBENCH, "-i", "-s", "1", "-q"], env=env, timeout=300)
    checks.check(status == 0, "pgbench -i -s 1 (steps dtgvp)", out[-2000:])
    # Server-side generation reads generate_series in FROM.
    status, out = t.run([PGBENCH, "-i", "-s", "1", "-q", "-I", "dtGv"], env=env, timeout=300)
    checks.check(status == 0, "pgbench -i -s 1 -I dtGv (server-side generate_series)", out[-2000:])
    if status != 0:
        status, out = t.run([PGBENCH, "-i", "-s", "1", "-q", "-I", "dtgv"], env=env, timeout=300)
        if not checks.check(status == 0, "pgbench -i -s 1 -I dtgv", out[-2000:]):
            return checks.status()
    status, out = t.psql(t.TALLY, "SELECT (SELECT count(*) FROM pgbench_accounts), (SELECT count(*) FROM pgbench_tellers),"
                                  " (SELECT count(*) FROM pgbench_branches), (SELECT count(*) FROM pgbench_history)")
    checks.check(status == 0 and out.strip() == "100000|10|1|0", "scale 1 holds 100000 accounts, 10 tellers, 1 branch", out)

    transactions = 0
    for mode in ("simple", "extended", "prepared"):
        status, out = t.run([PGBENCH, "-n", "-M", mode, "-c", str(CLIENTS), "-j", "2", "-T", str(SECONDS)],
                            env=env, timeout=SECONDS + 120)
        processed = re.search(r"number of transactions actually processed: (\d+)", out)
        failed = re.search(r"number of failed transactions: (\d+)", out)
        ok = (status == 0 and processed is not None and int(processed.group(1)) > 0 and failed is not None
              and failed.group(1) == "0" and "error" not in out.lower())
        checks.check(ok, f"pgbench -M {mode} -c {CLIENTS} -T {SECONDS}: transactions and no error", out[-3000:])
        if processed:
            transactions += int(processed.group(1))
            print(f"   {mode}: {processed.group(1)} transactions")

    # Each transaction adds delta to one row of each table and inserts one history row.
    status, out = t.psql(t.TALLY, "SELECT (SELECT count(*) FROM pgbench_history),"
                                  " (SELECT coalesce(sum(delta), 0) FROM pgbench_history),"
                                  " (SELECT sum(abalance) FROM pgbench_accounts),"
                                  " (SELECT sum(tbalance) FROM pgbench_tellers),"
                                  " (SELECT sum(bbalance) FROM pgbench_branches)")
    cells = out.strip().split("|")
    ok = status == 0 and len(cells) == 5 and int(cells[0]) == transactions and len(set(cells[1:])) == 1
    checks.check(ok, f"balances agree after {transactions} transactions (history rows, sum of delta = "
                     "sum of account, teller and branch balances)", out)
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
