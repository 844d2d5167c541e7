#!/usr/bin/env python3
"""Import cycles between the files of a crate: `scripts/import-cycles.py crates/sql/src ...`
prints each cycle (a strongly connected set of modules that name each other through `crate::`
or `super::` paths, tests left out) and exits 1 if there is one."""
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
                found[module] = re.sub(r"//.*", "", text)
    return found


def edges(found):
    out = {m: set() for m in found}
    for module, text in found.items():
        for path in re.findall(r"crate::(\w+(?:::\w+)?)", text):
            target = path if path in found else path.split("::")[0]
            if target in found and target != module:
                out[module].add(target)
        parent = "::".join(module.split("::")[:-1])
        if parent in found and re.search(r"\bsuper::", text):
            out[module].add(parent)
    return out


def cycles(graph):
    index, low, stack, on, result, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
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
    for v in graph:
        if v not in index:
            visit(v)
    return result


failed = False
for root in sys.argv[1:]:
    for cycle in cycles(edges(modules(root))):
        print(f"{root}: import cycle: {' <-> '.join(cycle)}")
        failed = True
sys.exit(1 if failed else 0)
