#!/usr/bin/env python3
"""Print criterion results as markdown tables: median time per element, and ratios to the
baseline function of each group (`vector` where the group has it).

Usage: cargo bench --bench readview && python3 scripts/bench-table.py [GROUP ...]

Reads target/criterion/<group>/<function>/<parameter>/new/{estimates,benchmark}.json, as
criterion writes them. A median is divided by the benchmark's element throughput when it has
one (e.g. 1,024 visibility tests per iteration), so every cell is "ns per operation".
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "target" / "criterion"
BASELINE = "vector"


def per_op_ns(bench_dir: Path) -> float:
    estimates = json.loads((bench_dir / "new" / "estimates.json").read_text())
    median = estimates["median"]["point_estimate"]
    meta = json.loads((bench_dir / "new" / "benchmark.json").read_text())
    elements = (meta.get("throughput") or {}).get("Elements") or 1
    return median / elements


def sort_key(param: str):
    head = param.split("-")[0]
    return (int(head) if head.isdigit() else 0, param)


def table(group: str) -> str:
    results = {}  # function -> parameter -> ns
    for meta in sorted((ROOT / group).glob("*/*/new/benchmark.json")):
        bench_dir = meta.parent.parent
        function, param = bench_dir.parent.name, bench_dir.name
        results.setdefault(function, {})[param] = per_op_ns(bench_dir)
    if not results:
        return f"(no results for group {group!r} under {ROOT})\n"
    functions = sorted(results, key=lambda f: (f != BASELINE, f))
    params = sorted({p for f in results.values() for p in f}, key=sort_key)
    others = [f for f in functions if f != BASELINE] if BASELINE in results else []
    head = ["param"] + [f"{f} (ns)" for f in functions] + [f"{BASELINE}/{f}" for f in others]
    lines = [f"**{group}** (median ns per operation)", "", "| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
    for p in params:
        row = [p] + [fmt(results[f].get(p)) for f in functions]
        base = results.get(BASELINE, {}).get(p)
        row += [f"{base / results[f][p]:.1f}x" if base and results[f].get(p) else "" for f in others]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def fmt(ns):
    if ns is None:
        return ""
    return f"{ns:.2f}" if ns < 10 else f"{ns:.1f}" if ns < 1000 else f"{ns:,.0f}"


def main(argv):
    groups = argv or sorted(p.name for p in ROOT.iterdir() if p.is_dir() and p.name != "report")
    print("\n".join(table(g) for g in groups))


if __name__ == "__main__":
    main(sys.argv[1:])
