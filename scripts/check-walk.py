#!/usr/bin/env python3
"""Checks "One transaction's walk" in docs/src/architecture.md against the code.

Each numbered step of the walk names, in backticks, files (`crates/sql/src/session/dispatch.rs`,
or `pool.rs` and `trx/scan.rs` inside the crate the step is in) and code (`Session::execute`,
`TrxSys::open_view`, `Storage`, `get_with`). The check:

- every file named exists: a path from the repository's root, else a path that ends one
  file (or folder) of the step's crate, else of the crate of the step before;
- every `Type::name` names a type defined in the workspace (struct, enum, trait, type) and a
  function `name` defined in a file that defines or implements `Type`; every other
  CamelCase name is a type defined in the workspace, every snake_case name a function or a
  field defined in the crates the walk has named so far;
- the walk goes down the crates and never climbs back: each step's crate is the crate of
  the step before, or one that crate or an earlier step's crate depends on (through the
  workspace's Cargo.toml files), and never a crate that depends on the step before's. The
  last step, the reply, is the calls returning and is not held to this.

Usage: scripts/check-walk.py (from the repository's root). Exit status 1 on any finding.
"""

import glob
import os
import re
import sys

DOC = "docs/src/architecture.md"
SECTION = "## One transaction's walk"
STEP = re.compile(r"^(\d+)\. \*\*(.+?)\*\*(.*)$")
TICK = re.compile(r"`([^`]+)`")
CRATE = re.compile(r"^crates/([a-z-]+)")
# Names of MySQL's code the walk mentions for the reader of the book (not waterline's).
MYSQL_NAMES = {"get_mm_tree", "param_comp"}


def crates():
    """Each workspace crate's folder name, and the folder names of the crates it depends on."""
    names = {}
    for toml in glob.glob("crates/*/Cargo.toml"):
        folder = toml.split("/")[1]
        with open(toml, encoding="utf-8") as f:
            text = f.read()
        package = re.search(r'^name\s*=\s*"([^"]+)"', text, re.M).group(1)
        names[package] = folder
    deps = {}
    for package, folder in names.items():
        with open(f"crates/{folder}/Cargo.toml", encoding="utf-8") as f:
            text = f.read()
        body = re.split(r"^\[", text, flags=re.M)
        normal = [b for b in body if b.startswith("dependencies]")]
        found = set()
        for b in normal:
            for dep in re.findall(r"^([a-z0-9_-]+)", b.split("\n", 1)[1], re.M):
                if dep in names:
                    found.add(names[dep])
        deps[folder] = found
    return deps


def below(deps, crate):
    """The crates `crate` depends on, directly or not."""
    seen, todo = set(), [crate]
    while todo:
        for d in deps.get(todo.pop(), ()):
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def code(path):
    """`path`'s text without its comments."""
    with open(path, encoding="utf-8") as f:
        return re.sub(r"//[^\n]*", "", f.read())


def sources(crate_dirs):
    files = []
    for c in crate_dirs:
        files += glob.glob(f"crates/{c}/src/**/*.rs", recursive=True)
    return files


def steps():
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    if SECTION not in text:
        sys.exit(f"{DOC}: no section {SECTION!r}")
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    found, current = [], None
    for line in section.splitlines():
        m = STEP.match(line)
        if m:
            current = [int(m.group(1)), m.group(2), m.group(3)]
            found.append(current)
        elif current and line.startswith("   "):
            current[2] += " " + line.strip()
        elif not line.strip():
            current = None
    return found


def main():
    deps = crates()
    all_files = sources(deps)
    all_code = {f: code(f) for f in all_files}
    problems, walked, previous = [], [], None
    listed = steps()
    if not listed:
        problems.append(f"{DOC}: the walk has no numbered steps")
    for i, (n, title, body) in enumerate(listed):
        names = TICK.findall(body)
        paths = [x for x in names if "/" in x or x.endswith(".rs")]
        named = [CRATE.match(p).group(1) for p in paths if CRATE.match(p)]
        crate = named[0] if named else previous
        if crate is None:
            problems.append(f"{DOC}: step {n} ({title}) names no crate")
            continue
        for p in paths:
            if os.path.exists(p.rstrip("/")):
                continue
            homes = [c for c in (crate, previous) if c]
            candidates = [f for f in sources(homes) if f.endswith("/" + p.rstrip("/") + (".rs" if p.endswith("/") else ""))]
            folders = [d for c in homes for d in glob.glob(f"crates/{c}/src/**/{p.rstrip('/')}", recursive=True)]
            if not candidates and not folders:
                problems.append(f"{DOC}: step {n} ({title}): no file {p} in crates/{crate}")
        last = i == len(listed) - 1
        for c in set(named) | {crate}:
            if previous is None or last:
                continue
            reachable = {previous} | below(deps, previous)
            for earlier in walked:
                reachable |= {earlier} | below(deps, earlier)
            if c not in reachable:
                problems.append(f"{DOC}: step {n} ({title}): crates/{c} is not below the steps before it")
            if c != previous and previous in below(deps, c):
                problems.append(
                    f"{DOC}: step {n} ({title}): crates/{c} depends on crates/{previous}, the step before: the walk climbs back"
                )
        for c in named + [crate]:
            if c not in walked:
                walked.append(c)
        previous = crate
        scope = {f: t for f, t in all_code.items() if any(f.startswith(f"crates/{c}/") for c in walked)}
        for x in names:
            if x in paths or x in MYSQL_NAMES:
                continue
            m = re.fullmatch(r"([A-Z]\w*)::([a-z_]\w*)", x)
            if m:
                ty, fun = m.groups()
                homes = [
                    f for f, t in all_code.items()
                    if re.search(rf"\b(struct|enum|trait|type)\s+{ty}\b|\bimpl(<[^>]*>)?\s+(\S+\s+for\s+)?{ty}\b", t)
                ]
                if not any(re.search(rf"\bfn\s+{fun}\b", all_code[f]) for f in homes):
                    problems.append(f"{DOC}: step {n} ({title}): no fn {fun} where {ty} is defined or implemented")
            elif re.fullmatch(r"[A-Z]\w*", x):
                if not any(re.search(rf"\b(struct|enum|trait|type)\s+{x}\b", t) for t in all_code.values()):
                    problems.append(f"{DOC}: step {n} ({title}): no type {x}")
            elif re.fullmatch(r"[a-z_]\w*", x):
                if not any(re.search(rf"\bfn\s+{x}\b|\b{x}\s*:", t) for t in scope.values()):
                    problems.append(f"{DOC}: step {n} ({title}): no fn or field {x} in {', '.join(walked)}")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"{DOC}: the walk's {len(listed)} steps name what exists, down the crates {' -> '.join(walked)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
