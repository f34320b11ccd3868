#!/usr/bin/env python3
"""Checks the layering of the C library: no cycle among its files, and each
layer uses only the layers below it.

    check.py SRC OBJ [ALLOW [NAMES]]

SRC is the library's source folder (Sources/CRunLoop), OBJ the folder of its
built objects (build/obj, one SRC/<layer>/<name>.c -> OBJ/<layer>/<name>.o),
ALLOW an optional list of edges still tolerated ("a.c -> b.c" per line, '#'
comments), each one closing a known cycle: the graphs less these edges must
have no cycle. NAMES an optional list of functions still defined outside
the file their name says ("symbol file.c" per line, '#' comments).

Two graphs over the files of SRC's layer folders:
  - includes: `#include "x.h"` in a -> the file x.h resolves to (a's folder
    first, then the shared header folders, as the compiler does);
  - calls: a -> b when a.o leaves undefined a symbol that b.o defines
    (`nm`), i.e. a calls a function of b or reads its data; and a -> b
    when a header that a includes (directly or through other headers) has
    an inline function that calls (directly or through other inline
    functions) a function b defines, whether or not a uses that inline
    function: an inline function is its includers' code, so it may call only
    below every file that includes its header.

It fails (exit 1) and names the files when:
  - a graph has a cycle (other than through the allowed edges);
  - an allowed edge no longer exists (remove it from ALLOW: the list only
    shrinks);
  - a file includes a header private to another layer (core/'s headers are
    the core's own; the extras see include/ and, of core_api/, rl_extras.h);
  - a lower layer calls into a higher one (the core into an extra), or an
    extra into another extra;
  - a source file sits outside the layer folders (the build would skip it);
  - a function's name says another file: a global symbol named after a
    file (rl_<concept> or rl_<concept>_..., the longest file name that
    fits) is defined in that file, unless NAMES lists it; a listed one that
    no longer needs it fails too (the list only shrinks).
"""
import os
import re
import subprocess
import sys

# Layer folders, lowest first. Folders of the same rank may not use each other.
LAYERS = {"core": 0, "linux": 1, "threads": 1, "monitor": 1}
# Header-only folders every file may include (public API, what the core lends).
SHARED_HEADERS = ["include", "core_api"]
# The one header of core_api/ the extras include: it lists what they may use.
EXTRAS_HEADER = "core_api/rl_extras.h"

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
COMMENT_RE = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
INLINE_RE = re.compile(r"\bstatic\s+inline\b[^;{}()]*?\b(\w+)\s*\([^;{}]*?\)\s*\{")
CALL_RE = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def layer_of(path):
    return path.split("/", 1)[0]


def source_files(src):
    files, stray = [], []
    for root, _, names in os.walk(src):
        for name in names:
            if not name.endswith((".c", ".h")):
                continue
            rel = os.path.relpath(os.path.join(root, name), src)
            top = layer_of(rel)
            if top in LAYERS or top in SHARED_HEADERS:
                files.append(rel)
            elif name.endswith(".c"):
                stray.append(rel)
    return sorted(files), sorted(stray)


def resolve_include(src, including, name):
    """The file (relative to src) that `#include "name"` in `including`
    finds, or None for a header outside the library (system, libc)."""
    here = os.path.dirname(including)
    for folder in [here] + SHARED_HEADERS:
        candidate = os.path.normpath(os.path.join(folder, name))
        if os.path.isfile(os.path.join(src, candidate)):
            return candidate
    return None


def include_graph(src, files):
    edges = {}
    for f in files:
        with open(os.path.join(src, f), encoding="utf-8", errors="replace") as fh:
            text = COMMENT_RE.sub("", fh.read())
        for name in INCLUDE_RE.findall(text):
            target = resolve_include(src, f, name)
            if target and target != f:
                edges.setdefault((f, target), set()).add(name)
    return edges


def inline_functions(src, headers):
    """{header: {inline function: names it calls}} for the headers' static
    inline functions (a body ends at its matching brace)."""
    found = {}
    for h in headers:
        with open(os.path.join(src, h), encoding="utf-8", errors="replace") as fh:
            text = COMMENT_RE.sub("", fh.read())
        for m in INLINE_RE.finditer(text):
            depth, end = 1, m.end()
            while depth and end < len(text):
                depth += {"{": 1, "}": -1}.get(text[end], 0)
                end += 1
            found.setdefault(h, {})[m.group(1)] = set(CALL_RE.findall(text[m.end():end])) - {m.group(1)}
    return found


def inline_calls(inlines):
    """{header: names its inline functions call, through other inline
    functions (of any header) too}."""
    body = {}
    for funcs in inlines.values():
        body.update(funcs)
    reach = {}
    for h, funcs in inlines.items():
        seen, todo = set(), [n for f in funcs.values() for n in f]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo.extend(body.get(name, ()))
        reach[h] = seen - set(body)
    return reach


def includes_of(sources, include_edges):
    """{source: every header it includes, directly or through headers}."""
    succ = {}
    for a, b in include_edges:
        succ.setdefault(a, set()).add(b)
    closure = {}
    for c in sources:
        seen, todo = set(), list(succ.get(c, ()))
        while todo:
            h = todo.pop()
            if h not in seen:
                seen.add(h)
                todo.extend(succ.get(h, ()))
        closure[c] = seen
    return closure


def add_inline_calls(src, files, include_edges, call_edges, owner):
    """Adds to call_edges each includer's edges through the inline functions
    of the headers it includes."""
    sources = [f for f in files if f.endswith(".c")]
    reach = inline_calls(inline_functions(src, [f for f in files if f.endswith(".h")]))
    for c, headers in includes_of(sources, include_edges).items():
        for h in sorted(headers):
            for sym in reach.get(h, ()):
                target = owner.get(sym)
                if target and target != c:
                    call_edges.setdefault((c, target), set()).add(f"{sym} (inline in {h})")


def misplaced_names(sources, owner):
    """{(symbol, defining file): the file its name says} for each global
    symbol named after another file of the library."""
    stems = {os.path.basename(c)[:-2]: c for c in sources}
    found = {}
    for sym, c in owner.items():
        best = max((s for s in stems if sym == s or sym.startswith(s + "_")), key=len, default=None)
        if best and stems[best] != c:
            found[(sym, c)] = stems[best]
    return found


def read_names(path):
    names = set()
    if not path:
        return names
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 2:
                sys.exit(f"{path}:{number}: expected 'symbol file.c', got {line!r}")
            names.add((parts[0], parts[1]))
    return names


def name_errors(sources, owner, allowed_names):
    errors = []
    misplaced = misplaced_names(sources, owner)
    for (sym, c), says in sorted(misplaced.items()):
        if (sym, c) not in allowed_names:
            errors.append(f"name rule: {sym} is defined in {c}, but its name says {says}: "
                          f"rename it after its file, or move it")
    for sym, c in sorted(allowed_names - set(misplaced)):
        errors.append(f"allowed name {sym} {c} no longer needs it: remove it from the names allow-list")
    return errors


def nm_symbols(obj):
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind.isupper() or kind in ("V", "W"):
            defined.add(name)
    return defined, undefined


def call_graph(objdir, sources):
    owner, needs, missing = {}, {}, []
    for c in sources:
        obj = os.path.join(objdir, c[:-2] + ".o")
        if not os.path.isfile(obj):
            missing.append(obj)
            continue
        defined, undefined = nm_symbols(obj)
        for sym in defined:
            owner[sym] = c
        needs[c] = undefined
    edges = {}
    for c, undefined in needs.items():
        for sym in undefined:
            target = owner.get(sym)
            if target and target != c:
                edges.setdefault((c, target), set()).add(sym)
    return edges, missing, owner


def strongly_connected(nodes, edges):
    """Tarjan's components of more than one node (iterative)."""
    succ = {n: [] for n in nodes}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
        succ.setdefault(b, [])
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(succ):
        if root in index:
            continue
        work = [(root, iter(sorted(succ[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(succ[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    return comps


def one_cycle(comp, edges):
    """A shortest cycle through the component's first file, as a list."""
    members = set(comp)
    succ = {}
    for a, b in edges:
        if a in members and b in members:
            succ.setdefault(a, []).append(b)
    start = comp[0]
    parent, frontier = {start: None}, [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for nxt in sorted(succ.get(node, [])):
                if nxt == start:
                    path = [node]
                    while parent[path[-1]] is not None:
                        path.append(parent[path[-1]])
                    return list(reversed(path)) + [start]
                if nxt not in parent:
                    parent[nxt] = node
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    return comp + [comp[0]]


def describe_cycle(kind, comp, edges):
    cycle = one_cycle(comp, edges)
    lines = [f"{kind} cycle among {len(comp)} files: {' '.join(comp)}", "  for example:"]
    for a, b in zip(cycle, cycle[1:]):
        what = ", ".join(sorted(edges[(a, b)])[:4])
        lines.append(f"    {a} -> {b}  ({what})")
    return "\n".join(lines)


def read_allowed(path):
    allowed = set()
    if not path:
        return allowed
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = [p.strip() for p in line.split("->")]
            if len(parts) != 2 or not all(parts):
                sys.exit(f"{path}:{number}: expected 'a.c -> b.c', got {line!r}")
            allowed.add((parts[0], parts[1]))
    return allowed


def layer_errors(include_edges, call_edges):
    errors = []
    for (a, b), names in sorted(include_edges.items()):
        la, lb = layer_of(a), layer_of(b)
        if lb in LAYERS and lb != la:
            errors.append(f"layer rule: {a} includes {b}, a header private to {lb}/ "
                          f"(other layers see {', '.join(f + '/' for f in SHARED_HEADERS)} only)")
        elif la in LAYERS and LAYERS[la] > 0 and lb == "core_api" and b != EXTRAS_HEADER:
            errors.append(f"layer rule: {a} includes {b}; an extra includes {EXTRAS_HEADER} only")
    for (a, b), syms in sorted(call_edges.items()):
        la, lb = layer_of(a), layer_of(b)
        if la == lb or la not in LAYERS or lb not in LAYERS:
            continue
        if LAYERS[la] <= LAYERS[lb]:
            what = ", ".join(sorted(syms)[:4])
            errors.append(f"layer rule: {a} ({la}/) calls into {b} ({lb}/): {what}")
    return errors


def main(argv):
    if len(argv) not in (3, 4, 5):
        sys.exit(__doc__)
    src, objdir = argv[1], argv[2]
    allowed = read_allowed(argv[3] if len(argv) >= 4 else None)
    allowed_names = read_names(argv[4] if len(argv) == 5 else None)
    files, stray = source_files(src)
    sources = [f for f in files if f.endswith(".c")]
    errors = [f"{s}: a source file outside the layer folders ({', '.join(sorted(LAYERS))})" for s in stray]

    includes = include_graph(src, files)
    calls, missing, owner = call_graph(objdir, sources)
    if missing:
        sys.exit("check-layers: build the library first; missing " + ", ".join(missing))
    errors += name_errors(sources, owner, allowed_names)
    add_inline_calls(src, files, includes, calls, owner)

    errors += layer_errors(includes, calls)
    for edge in sorted(allowed - set(calls) - set(includes)):
        errors.append(f"allowed edge {edge[0]} -> {edge[1]} no longer exists: remove it from the allow-list")
    kept_includes = {e: s for e, s in includes.items() if e not in allowed}
    for comp in strongly_connected(files, kept_includes):
        errors.append(describe_cycle("include", comp, kept_includes))
    kept_calls = {e: s for e, s in calls.items() if e not in allowed}
    for comp in strongly_connected(sources, kept_calls):
        errors.append(describe_cycle("call", comp, kept_calls))

    if errors:
        print("check-layers: FAILED", file=sys.stderr)
        for e in errors:
            print(e, file=sys.stderr)
        return 1
    tolerated = len(allowed)
    print(f"check-layers: {len(files)} files, {len(includes)} include edges, {len(calls)} call edges, "
          f"no cycle" + (f" but the {tolerated} allowed edges" if tolerated else "") + ", layers respected")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
