#!/usr/bin/env python3
"""Print criterion results as markdown tables: median time per element, and ratios to the
baseline function of each group (`vector` where the group has it).

Usage: cargo bench --bench readview && python3 scripts/bench-table.py [GROUP ...]
       python3 scripts/bench-table.py [--runs DIR,...] [--baseline FUNCTION] [--ops] [GROUP ...]

--baseline names the function the ratios divide by (default: vector). --ops prints millions
of operations per second (10^3 / ns per operation) instead of ns; the ratios stay "how many
times faster than the baseline". A group directory that
holds a waterline-counters.json (written by benches/txn.rs) gets a second table with those
per-operation counters (trx-sys latch acquisitions, view bytes).

With --runs, each DIR is a saved copy of target/criterion from one run; every cell is then the
median over the runs of each run's median, and ratios are computed from those cells.

Reads target/criterion/<group>/<function>/<parameter>/new/{estimates,benchmark}.json, as
criterion writes them. A median is divided by the benchmark's element throughput when it has
one (e.g. 1,024 visibility tests per iteration), so every cell is "ns per operation".
"""
import json
import sys
from pathlib import Path

import statistics

ROOT = Path(__file__).resolve().parent.parent / "target" / "criterion"


def per_op_ns(bench_dir: Path) -> float:
    estimates = json.loads((bench_dir / "new" / "estimates.json").read_text())
    median = estimates["median"]["point_estimate"]
    meta = json.loads((bench_dir / "new" / "benchmark.json").read_text())
    elements = (meta.get("throughput") or {}).get("Elements") or 1
    return median / elements


def ops_fmt(mops: float) -> str:
    """Millions per second, with three significant digits below 10 (0.0124 M/s is 12.4k)."""
    return f"{mops:.2f}" if mops >= 10 else f"{mops:.3g}"


def sort_key(param: str):
    head = param.split("-")[0]
    return (int(head) if head.isdigit() else 0, param)


def counters_table(group: str, roots) -> str:
    files = [r / group / "waterline-counters.json" for r in roots]
    files = [f for f in files if f.exists()]
    if not files:
        return ""
    data = json.loads(files[0].read_text())
    names = sorted({k for ps in data.values() for v in ps.values() for k in v})
    lines = [f"**{group}** counters per operation (from the engine's Stats)", "",
             "| function | param | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for function in sorted(data):
        for param in sorted(data[function], key=sort_key):
            values = data[function][param]
            lines.append(f"| {function} | {param} | " +
                         " | ".join(f"{values.get(n, 0):.2f}" for n in names) + " |")
    return "\n".join(lines) + "\n"


def table(group: str, roots, baseline: str, ops: bool = False) -> str:
    samples = {}  # function -> parameter -> [ns per run]
    for root in roots:
        for meta in sorted((root / group).glob("*/*/new/benchmark.json")):
            bench_dir = meta.parent.parent
            function, param = bench_dir.parent.name, bench_dir.name
            samples.setdefault(function, {}).setdefault(param, []).append(per_op_ns(bench_dir))
    if not samples:
        return f"(no results for group {group!r})\n"
    results = {f: {p: statistics.median(v) for p, v in ps.items()} for f, ps in samples.items()}
    functions = sorted(results, key=lambda f: (f != baseline, f))
    params = sorted({p for f in results.values() for p in f}, key=sort_key)
    others = [f for f in functions if f != baseline] if baseline in results else []
    unit = "M ops/s" if ops else "ns"
    head = ["param"] + [f"{f} ({unit})" for f in functions] + [f"{f} vs {baseline}" for f in others]
    runs = f", median of {len(roots)} runs" if len(roots) > 1 else ""
    what = "millions of operations per second" if ops else "median ns per operation"
    lines = [f"**{group}** ({what}{runs})", "", "| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
    for p in params:
        cell = (lambda ns: ops_fmt(1e3 / ns) if ns else "") if ops else fmt
        row = [p] + [cell(results[f].get(p)) for f in functions]
        base = results.get(baseline, {}).get(p)
        row += [f"{base / results[f][p]:.1f}x" if base and results[f].get(p) else "" for f in others]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def fmt(ns):
    if ns is None:
        return ""
    return f"{ns:.2f}" if ns < 10 else f"{ns:.1f}" if ns < 1000 else f"{ns:,.0f}"


def main(argv):
    roots, baseline, ops = [ROOT], "vector", False
    while argv[:1] in (["--runs"], ["--baseline"], ["--ops"]):
        if argv[0] == "--ops":
            ops, argv = True, argv[1:]
            continue
        if argv[0] == "--runs":
            roots = [Path(d) for d in argv[1].split(",")]
        else:
            baseline = argv[1]
        argv = argv[2:]
    groups = argv or sorted(p.name for p in roots[0].iterdir() if p.is_dir() and p.name != "report")
    print("\n".join(table(g, roots, baseline, ops) + counters_table(g, roots) for g in groups))


if __name__ == "__main__":
    main(sys.argv[1:])
