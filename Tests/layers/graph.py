#!/usr/bin/env python3
"""Prints docs/LAYERS.md's "Who calls whom" from the built objects:
the core's files by level (the longest call chain under each) and a mermaid
graph of every call edge between core files, less the leaves any file may
use (LEAVES), with the core files the extras call.

    graph.py SRC OBJ        (make layers-graph: Sources/CRunLoop build/obj)

The edges are check.py's: an undefined symbol of a.o defined by b.o, and
a call made by an inline function of a header a.c includes.
"""
import os
import sys

import check

# Files any core file may use, left out of the mermaid graph (not of the rows).
LEAVES = {"rl_lock", "rl_scratch", "rl_object", "rl_time", "rl_array", "rl_item_set", "rl_callout", "rl_fatal",
          "rl_eventfd", "rl_stats"}


def name(path):
    return os.path.basename(path)[:-2]


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    files, _ = check.source_files(argv[1])
    sources = [f for f in files if f.endswith(".c")]
    calls, missing, owner = check.call_graph(argv[2], sources)
    if missing:
        sys.exit("layers-graph: build the library first; missing " + ", ".join(missing))
    check.add_inline_calls(argv[1], files, check.include_graph(argv[1], files), calls, owner)
    core = [name(f) for f in sources if check.layer_of(f) == "core"]
    succ = {n: set() for n in core}
    extras_call = set()
    for a, b in calls:
        if check.layer_of(b) != "core":
            continue
        if check.layer_of(a) == "core":
            succ[name(a)].add(name(b))
        else:
            extras_call.add(name(b))
    level = {}

    def level_of(n):
        if n not in level:
            level[n] = 1 + max((level_of(m) for m in succ[n]), default=-1)
        return level[n]

    for n in core:
        level_of(n)
    by_level = sorted(core, key=lambda n: (-level[n], n))
    for lv in sorted(set(level.values()), reverse=True):
        print(f"{lv:2d}  " + "  ".join(n for n in by_level if level[n] == lv))

    print("\ngraph TD")
    labelled = set()

    def node(n):
        short = n[3:] if n.startswith("rl_") else n
        if n in labelled:
            return short
        labelled.add(n)
        return f"{short}[{n}]"

    def edges(head, targets):
        ordered = sorted(targets - LEAVES, key=lambda n: (-level[n], n))
        if ordered:
            print(f"  {head} --> " + " & ".join(node(t) for t in ordered))

    edges('extras["linux/ threads/ monitor/"]', extras_call)
    for n in by_level:
        if n not in LEAVES:
            edges(node(n), succ[n])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
