#!/usr/bin/env python3
"""Print the summary of a pairs.csv written by compare-pairs.sh or compare-sysbench.sh: each
pair's baseline and candidate (column COLUMN) and their ratio, then the median ratio.

Usage: scripts/pairs-summary.py PAIRS_CSV COLUMN UNIT
"""
import csv
import os
import statistics
import sys

path, column, unit = sys.argv[1:4]
runs = {}
for row in csv.DictReader(open(path)):
    runs.setdefault(row["pair"], {})[row["build"]] = float(row[column])
ratios = [p["new"] / p["base"] for p in runs.values()]
print(f"| pair | baseline {unit} | candidate {unit} | ratio |")
print("|---|---|---|---|")
for pair, p in runs.items():
    print(f'| {pair} | {p["base"]:.0f} | {p["new"]:.0f} | {p["new"] / p["base"]:.3f} |')
print()
print(f"Median ratio (candidate / baseline): {statistics.median(ratios):.3f}")
print()
print(f"What each run's engine or server reported of its configuration: see {os.path.basename(path)}.")
