#!/usr/bin/env python3
"""Import cycles between the files of a crate: `scripts/import-cycles.py crates/sql/src ...`
prints each cycle (a strongly connected set of modules that name each other, tests left out)
and exits 1 if there is one. `--known ROOT=a,b,c` names one cycle that is still there and
will go: it is reported but not fatal, and it must be exactly that set (a cycle that grew,
shrank or went away fails too, so the exemption cannot outlive it).

A reference is any path that starts with `crate::`, `super::` or `self::`, in a `use` tree
(braces expanded) or inline. It is resolved to the deepest module it names: `super::sibling::f`
is an edge to the sibling, `super::f` to the parent. A module's references to its own
descendants are not edges (it declares them), nor are references to the crate root."""
import os
import re
import sys


def modules(root):
    found = {}
    for directory, _, files in os.walk(root):
        for name in files:
            if name.endswith(".rs"):
                path = os.path.join(directory, name)
                module = os.path.relpath(path, root)[:-3].replace("/", "::")
                module = module.removesuffix("::mod")
                text = open(path).read()
                text = text.split("#[cfg(test)]")[0]
                text = re.sub(r"//.*", "", text)
                text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
                found[module] = text
    return found


def use_paths(tree):
    """The full paths of one `use` tree: `a::{b, c::{d, e}}` -> a::b, a::c::d, a::c::e."""
    tree = re.sub(r"\s+", "", tree)
    depth, start = 0, None
    for i, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                prefix, inner = tree[:start], tree[start + 1 : i]
                parts, level, last = [], 0, 0
                for j, c in enumerate(inner):
                    level += c == "{"
                    level -= c == "}"
                    if c == "," and level == 0:
                        parts.append(inner[last:j])
                        last = j + 1
                parts.append(inner[last:])
                out = []
                for part in parts:
                    if part:
                        out += use_paths(prefix + part)
                return out
    return [re.sub(r"as\w+$", "", tree.split(" as ")[0])]


def references(text):
    paths = []
    for tree in re.findall(r"\buse\s+([^;]+);", text):
        paths += use_paths(tree)
    text = re.sub(r"\buse\s+[^;]+;", "", text)
    paths += re.findall(r"\b(?:crate|super|self)(?:::\w+)+", text)
    return paths


def resolve(module, path, found):
    segments = path.split("::")
    here = module.split("::")
    if segments[0] == "crate":
        base, rest = [], segments[1:]
    elif segments[0] in ("super", "self"):
        base = here
        rest = segments
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    else:
        return None
    target = base
    for segment in rest:
        if "::".join(target + [segment]) in found:
            target = target + [segment]
        else:
            break
    return "::".join(target) if target else None


def edges(found):
    out = {m: set() for m in found}
    for module, text in found.items():
        for path in references(text):
            target = resolve(module, path, found)
            if target is None or target == module or target.startswith(module + "::"):
                continue
            if target in ("lib", "main"):
                continue
            out[module].add(target)
    return out


def cycles(graph):
    index, low, stack, on, result, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return result


args = sys.argv[1:]
known = set()
while "--known" in args:
    i = args.index("--known")
    root, members = args[i + 1].split("=", 1)
    known.add((root.rstrip("/"), tuple(sorted(members.split(",")))))
    del args[i : i + 2]
verbose = "-v" in args
failed = False
seen = set()
for root in [a.rstrip("/") for a in args if a != "-v"]:
    graph = edges(modules(root))
    for cycle in cycles(graph):
        key = (root, tuple(cycle))
        expected = key in known
        seen.add(key)
        label = "known import cycle (still to go)" if expected else "import cycle"
        print(f"{root}: {label}: {' <-> '.join(cycle)}")
        if verbose or not expected:
            members = set(cycle)
            for m in cycle:
                print(f"    {m} -> {', '.join(sorted(graph[m] & members))}")
        failed |= not expected
for root, cycle in sorted(known - seen):
    print(f"{root}: the known cycle {' <-> '.join(cycle)} is gone or changed: update --known")
    failed = True
sys.exit(1 if failed else 0)
