#!/usr/bin/env python3
"""Checks the manual: README.md stays a front door (under 400 lines), every relative link
in README.md, docs/src/ and results/README.md reaches a file (and a heading, if it names
one), every chapter is in docs/src/SUMMARY.md, results/README.md is the index
scripts/results-index.py makes of results/, and no committed file outside results/ holds a
dated measurement.

A dated measurement is a line with an ISO date (2026-11-27) and a unit of measure (txn/s,
tps, tpmC, µs, ms, ops/s, GB/s), or a markdown table whose header counts txn/s, tps or tpmC:
measurements are generated files under results/, next to their command, commit and machine.

Usage: scripts/check-docs.py (from the repository's root). Exit status 1 on any finding.
"""

import os
import re
import subprocess
import sys

MAX_README_LINES = 400
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
UNIT = re.compile(r"(txn/s|\btps\b|tpmC|µs|\bms\b|ops/s|GB/s)")
TABLE_HEADER = re.compile(r"^\|.*(txn/s|\btps\b|tpmC).*\|\s*$")


def slug(heading):
    """The anchor mdBook (and GitHub) give a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    found = set()
    in_code = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                in_code = not in_code
            elif not in_code and line.startswith("#"):
                found.add(slug(line.lstrip("#")))
    return found


def links(path):
    in_code = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("```"):
                in_code = not in_code
                continue
            if in_code:
                continue
            for target in LINK.findall(line):
                yield n, target


def main():
    problems = []
    with open("README.md", encoding="utf-8") as f:
        lines = sum(1 for _ in f)
    if lines >= MAX_README_LINES:
        problems.append(f"README.md: {lines} lines; the front door stays under {MAX_README_LINES}")

    chapters = sorted(
        os.path.join("docs/src", name) for name in os.listdir("docs/src") if name.endswith(".md")
    )
    with open("docs/src/SUMMARY.md", encoding="utf-8") as f:
        summary = f.read()
    for chapter in chapters:
        name = os.path.basename(chapter)
        if name != "SUMMARY.md" and f"({name})" not in summary:
            problems.append(f"{chapter}: not in docs/src/SUMMARY.md")

    index = subprocess.run(
        [sys.executable, "scripts/results-index.py", "--check"], capture_output=True, text=True
    )
    if index.returncode != 0:
        problems.append(index.stdout.strip() or "results/README.md: scripts/results-index.py failed")

    for doc in ["README.md", "results/README.md"] + chapters:
        base = os.path.dirname(doc)
        for n, target in links(doc):
            if re.match(r"^[a-z]+:", target):
                continue  # a URL: not checked offline
            path, _, anchor = target.partition("#")
            where = os.path.normpath(os.path.join(base, path)) if path else doc
            if not os.path.exists(where):
                problems.append(f"{doc}:{n}: broken link {target} ({where} does not exist)")
            elif anchor and where.endswith(".md") and anchor not in anchors(where):
                problems.append(f"{doc}:{n}: broken link {target} (no heading #{anchor})")

    tracked = subprocess.run(
        ["git", "ls-files"], capture_output=True, text=True, check=True
    ).stdout.split()
    for path in tracked:
        if path.startswith("results/") or path in ("Cargo.lock", "scripts/check-docs.py"):
            continue
        if not path.endswith((".md", ".rs", ".py", ".sh", ".toml", ".txt")):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                text = f.readlines()
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        for n, line in enumerate(text, 1):
            if DATE.search(line) and UNIT.search(line):
                problems.append(f"{path}:{n}: a dated measurement (put it under results/)")
            elif path.endswith(".md") and TABLE_HEADER.match(line):
                problems.append(f"{path}:{n}: a measurement table (put it under results/)")

    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"README.md: {lines} lines; {len(chapters)} chapters; links and measurements checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
