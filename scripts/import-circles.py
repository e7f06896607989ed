#!/usr/bin/env python3
"""Each crate's top-level modules must import one way: no circles.

Within a crate, top-level module `a` (src/a.rs or src/a/) depends on
top-level module `b` when any file under `a` names `crate::b`, an item that
src/lib.rs re-exports from `b`, or reaches `b` through `super::`. Comments
are ignored; test modules count (a circle through a test is still one).
Prints every circle with the edges that make it and exits 1 if there is one.

Usage: scripts/import-circles.py [crate directories...]
(default: every crates/*/ and benches/)
"""

import os
import re
import sys

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# Comments, string and char literals: none of them makes a dependency
# (`doc = "... crate::X ..."` attributes, URLs with `//` in strings).
NOISE = re.compile(
    r'//[^\n]*|/\*.*?\*/|r(#*)".*?"\1|b?"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])\'', re.S
)


def strip_comments(text):
    return NOISE.sub(lambda m: '""' if m.group(0)[-1:] in "\"#" else " ", text)


def top_modules(src):
    tops = set()
    for name in os.listdir(src):
        path = os.path.join(src, name)
        if name.endswith(".rs") and name not in ("lib.rs", "main.rs"):
            tops.add(name[:-3])
        elif os.path.isdir(path) and name != "bin":
            tops.add(name)
    return tops


def braced(text, at):
    """The text inside the braces opening at `at`, and the index after them."""
    depth = 0
    for i in range(at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[at + 1 : i], i + 1
    return text[at + 1 :], len(text)


def heads(group):
    """The first identifier of each top-level item of a `{a, b::c, d::{e}}` group."""
    out, depth, item = [], 0, ""
    for ch in group + ",":
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            m = IDENT.search(item)
            if m:
                out.append(m.group(0))
            item = ""
        else:
            item += ch
    return out


def named_roots(text, module_path):
    """Every root-level name a file reaches: `crate::x`, `crate::{x, y}`, `super::..::x`."""
    names = []
    for m in re.finditer(r"\b(crate|(?:super::)+super)::", text):
        if m.group(1) == "crate":
            up_to_root = True
        else:
            ups = m.group(1).count("super")
            up_to_root = ups >= len(module_path)
        if not up_to_root:
            continue
        rest = m.end()
        if rest < len(text) and text[rest] == "{":
            group, _ = braced(text, rest)
            names.extend(heads(group))
        else:
            ident = IDENT.match(text, rest)
            if ident:
                names.append(ident.group(0))
    return names


def reexports(lib_text, tops):
    """Names lib.rs re-exports, mapped to the top-level module they come from."""
    out = {}
    for m in re.finditer(r"pub\s+use\s+(?:crate::|self::)?(\w+)::", lib_text):
        module = m.group(1)
        if module not in tops:
            continue
        rest = m.end()
        if lib_text[rest] == "{":
            group, _ = braced(lib_text, rest)
            for item in re.split(r",", re.sub(r"\{[^{}]*\}", "", group)):
                words = IDENT.findall(item)
                if words:
                    out[words[-1]] = module  # `a::B as C` exports C
        else:
            words = IDENT.findall(lib_text[rest : lib_text.index(";", rest)])
            if words:
                out[words[-1]] = module
    return out


def module_path(rel):
    parts = rel[:-3].split("/")
    if parts[-1] == "mod":
        parts = parts[:-1]
    return parts


def graph(crate_dir):
    src = os.path.join(crate_dir, "src")
    tops = top_modules(src)
    lib = os.path.join(src, "lib.rs")
    exported = reexports(strip_comments(open(lib).read()), tops) if os.path.exists(lib) else {}
    edges = {t: {} for t in tops}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)
            path = module_path(rel)
            top = path[0] if path else None
            if top not in tops:
                continue
            text = strip_comments(open(os.path.join(dirpath, f)).read())
            for name in named_roots(text, path):
                target = name if name in tops else exported.get(name)
                if target and target != top:
                    edges[top].setdefault(target, rel)
    return edges


def circles(edges):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    dirs = sys.argv[1:] or sorted(
        [os.path.join(root, "crates", c) for c in os.listdir(os.path.join(root, "crates"))]
        + [os.path.join(root, "benches")]
    )
    bad = 0
    for crate in dirs:
        if not os.path.isdir(os.path.join(crate, "src")):
            continue
        edges = graph(crate)
        found = circles(edges)
        name = os.path.basename(os.path.normpath(crate))
        if not found:
            print(f"{name}: {len(edges)} modules, no circle")
            continue
        bad += 1
        for comp in found:
            print(f"{name}: circle through {', '.join(comp)}")
            for a in comp:
                for b in sorted(set(edges[a]) & set(comp)):
                    print(f"    {a} -> {b}  (e.g. {edges[a][b]})")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
