#!/usr/bin/env python3
"""Print the summary of a pairs.csv written by compare-pairs.sh or compare-sysbench.sh (or a
runs CSV of server-pairs.sh): each pair's baseline and candidate (column COLUMN) and their
ratio, then the median ratio, and how much CPU time the hypervisor stole during the runs
(column steal_pct, where the CSV has it), with a warning where a run lost more than
STEAL_WARN_PCT percent: on a busy host such a run measures the host as much as the build.

Usage: scripts/pairs-summary.py PAIRS_CSV COLUMN UNIT
"""
import csv
import os
import statistics
import sys

STEAL_WARN_PCT = 5.0

path, column, unit = sys.argv[1:4]
runs = {}
stolen = []
for row in csv.DictReader(open(path)):
    runs.setdefault(row["pair"], {})[row["build"]] = float(row[column])
    if row.get("steal_pct") not in (None, "", "n/a"):
        stolen.append((float(row["steal_pct"]), row["pair"], row["build"]))
ratios = [p["new"] / p["base"] for p in runs.values()]
print(f"| pair | baseline {unit} | candidate {unit} | ratio |")
print("|---|---|---|---|")
for pair, p in runs.items():
    print(f'| {pair} | {p["base"]:.0f} | {p["new"]:.0f} | {p["new"] / p["base"]:.3f} |')
print()
print(f"Median ratio (candidate / baseline): {statistics.median(ratios):.3f}")
if stolen:
    worst = max(stolen)
    print()
    print(
        f"CPU time stolen by the hypervisor during the runs: median "
        f"{statistics.median(s for s, _, _ in stolen):.1f}%, at most {worst[0]:.1f}% "
        f"(pair {worst[1]}, {'candidate' if worst[2] == 'new' else 'baseline'})."
    )
    busy = [f"pair {p} {'candidate' if b == 'new' else 'baseline'}" for s, p, b in stolen if s > STEAL_WARN_PCT]
    if busy:
        print(
            f"**Warning:** {len(busy)} of {len(stolen)} runs lost more than {STEAL_WARN_PCT:.0f}% "
            f"of their CPU time to other guests ({', '.join(busy)}): those ratios measure the "
            "host's load as much as the builds."
        )
print()
print(f"What each run's engine or server reported of its configuration: see {os.path.basename(path)}.")
