#!/usr/bin/env python3
"""Publishes the last full benchmark run: `make bench-publish`.

`make bench` writes only under bench/build/ (results.md, results.csv and the
charts), so running it leaves a checkout clean. This copies that run into the
committed bench/results.md, bench/results.csv and bench/*.svg, and rewrites the
root README's benchmark table (between its bench-table markers) from the CSV.

    python3 scripts/publish.py                  # from bench/build/ (the last `make bench`)
    python3 scripts/publish.py --from DIR       # from another run's folder
    python3 scripts/publish.py --check          # writes nothing: fails if README's table is not
                                                # what bench/results.csv gives (Tests/make)

The table's rows are ROWS below: a workload added to the bench gets a row here
to appear in the README. A row with no number in the results (a workload added
since the last full run, or a metric this machine could not count) is left
out. The prose around the table is the README's own.
Python 3 stdlib only.
"""
import argparse
import csv
import glob
import math
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # bench/
ROOT = os.path.dirname(HERE)
README = os.path.join(ROOT, "README.md")
BEGIN = "<!-- bench-table: written by `make bench-publish` (bench/scripts/publish.py) from bench/results.csv -->"
END = "<!-- /bench-table -->"

# (key, column heading); the first two are ours, the others the peers a ratio compares with.
COLUMNS = [("core", "C core"), ("swift", "Swift layer"), ("foundation", "Foundation"), ("libuv", "libuv"),
           ("libev", "libev"), ("glib", "GLib")]
PEERS = ["foundation", "libuv", "libev", "glib"]


def row(label, workload, metrics, better, args=None, kind="number", scale=1.0, sep=" / ", ratio=True,
        marks=None, ratio_mark="", suffix=None):
    """One table row: each column shows `metrics` (joined by `sep`) at each of `args` (joined by " / "; None:
    the workload's one argument in the run), scaled; the last column is the C core's first metric over the best
    peer's, at the last argument."""
    return dict(label=label, workload=workload, metrics=metrics, better=better, args=args, kind=kind,
                scale=scale, sep=sep, ratio=ratio, marks=marks or {}, ratio_mark=ratio_mark, suffix=suffix or {})


ROWS = [
    row("W1 cross-thread wake-up round trips/s ↑", "w1", ["rt_per_s"], "up", kind="rate"),
    row("W1 CPU per round trip (µs) ↓", "w1", ["cpu_us_per_rt"], "down"),
    row("W2 cost to add a timer, 100k timers (ns) ↓", "w2", ["add_ns"], "down", args=[100000]),
    row("W2 cost to add a timer, 1M timers (ns) ↓", "w2", ["add_ns"], "down", args=[1000000]),
    row("W2 100k timers over 1 s: CPU (ms) ↓", "w2", ["cpu_ms"], "down", args=[100000]),
    row("W2 100k timers over 1 s: lateness p99 (ms) ↓", "w2", ["late_p99_us"], "down", args=[100000], scale=1e-3),
    row("W2 1M timers over 1 s: s until the last fired ↓", "w2", ["all_fired_s"], "down", args=[1000000]),
    row("W3 1 ms repeating timer: p99 jitter (µs) ↓", "w3", ["jit_p99_us"], "down"),
    row("W4 same-thread queued blocks/s ↑", "w4", ["blocks_per_s"], "up", kind="rate",
        marks={"libuv": "¹", "libev": "¹"}),
    row("W5 socketpair ping-pong round trips/s ↑", "w5", ["rt_per_s"], "up", kind="rate"),
    row("W5 through `RLFileDescriptor` round trips/s ↑", "w5fd", ["rt_per_s"], "up", kind="rate", ratio_mark="²"),
    row("W6 idle 2 s: CPU (µs) ↓, threads", "w6", ["cpu_us", "threads"], "down", kind="integer", sep=", "),
    row("W8 4 ping-pong pairs on 2 CPUs: round trips/s ↑", "w8", ["rt_per_s"], "up", kind="rate"),
    row("W8 CPU per round trip (µs) ↓", "w8", ["cpu_us_per_rt"], "down"),
    row("W9a ns per event, 1 / 10,000 fds watched ↓", "w9a", ["ns_per_event"], "down", args=[1, 10000]),
    row("W9b ns per pass, 1 / 10,000 version-0 sources ↓", "w9b", ["ns_per_pass"], "down", args=[1, 10000],
        ratio=False),
    row("W9c median round trip (µs), 0 / 10,000 other modes ↓", "w9c", ["rtt_med_us"], "down", args=[0, 10000],
        ratio=False),
    row("W9d wake-ups/s, 1 / 8 / 64 loops woken by one thread ↑", "w9d", ["wakeups_per_s"], "up", args=[1, 8, 64],
        kind="rate"),
    row("W10 `await` into an actor on a `RunLoopThread` / a `DispatchQueue` executor (round trips/s) ↑", "w10",
        ["rt_per_s_runloop", "rt_per_s_queue"], "up", kind="rate", ratio=False, suffix={"foundation": " (queue)"}),
    row("W12 TCP echo over loopback (CFSocket / `uv_tcp` / `GSocket`) round trips/s ↑", "w12", ["rt_per_s"], "up",
        kind="rate"),
    row("W12 system calls per TCP echo round trip ↓", "w12", ["sc_per_rt"], "down"),
]


def three_digits(v):
    """Three significant digits, without an exponent."""
    if v == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(v)))))
    return "%.*f" % (digits, v)


def fmt(v, kind):
    if kind == "integer":
        return "%d" % round(v)
    if kind == "rate":
        for div, unit in ((1e6, "M"), (1e3, "k")):
            if abs(v) >= div:
                return three_digits(v / div) + unit
        return three_digits(v)
    return "%d" % round(v) if abs(v) >= 100 else three_digits(v)


def fmt_ratio(r):
    return ("%.1fx" if r >= 10 else "%.2fx") % r


def fmt_arg(a):
    return "%gk" % (a / 1000) if a >= 1000 and a % 1000 == 0 else "%g" % a


def read_results(folder):
    """{(workload, arg, metric, peer): median} from folder/results.csv."""
    values = {}
    with open(os.path.join(folder, "results.csv"), newline="") as f:
        for rec in csv.DictReader(f):
            try:
                values[(rec["workload"], float(rec["arg"]), rec["metric"], rec["peer"])] = float(rec["median"])
            except ValueError:
                pass  # a missing peer or a run that did not complete: no number
    return values


def run_line(folder):
    """The sentence before the table, from results.md's "Machine:" and "Run ...:" lines."""
    with open(os.path.join(folder, "results.md")) as f:
        text = f.read()
    machine = re.search(r"^Machine: (.*?);? load average at the end ([^;]*); (.*?)\.?\s*$", text, re.M)
    run = re.search(r"^Run (.*?): medians of (\d+) run\(s\).*?W3: (\d+) runs", text, re.M)
    if not machine or not run:
        sys.exit("publish: %s/results.md has no 'Machine:' or 'Run ...:' line as bench/run.py writes them" % folder)
    return ("Latest full run: %s, on %s; %s; load average at the end %s. Medians of %s runs (W3: %s); every metric, "
            "with its ratios against each peer, in `bench/results.md`. Higher is better where marked ↑, lower where "
            "↓." % (run.group(1), machine.group(1), machine.group(3), machine.group(2), run.group(2), run.group(3)))


def table(values):
    args_of = {}
    for (wl, arg, _, _) in values:
        args_of.setdefault(wl, set()).add(arg)
    lines = ["| workload | " + " | ".join(h for _, h in COLUMNS) + " | C / best peer |",
             "|---" * (len(COLUMNS) + 2) + "|"]
    for r in ROWS:
        args = r["args"] or sorted(args_of.get(r["workload"], {0.0}))[-1:]
        cells = []
        for peer, _ in COLUMNS:
            shown = []
            for a in args:
                got = [values.get((r["workload"], float(a), m, peer)) for m in r["metrics"]]
                got = [fmt(v * r["scale"], r["kind"]) for v in got if v is not None]
                if got:
                    shown.append(r["sep"].join(got))
            cell = " / ".join(shown)
            cells.append(cell + r["marks"].get(peer, "") + r["suffix"].get(peer, "") if cell else "")
        if not any(cells):
            continue
        cells.append(best_ratio(values, r, args))
        lines.append("| %s |" % r["label"] + "|".join(" %s " % c if c else " " for c in cells) + "|")
    return lines


def best_ratio(values, r, args):
    """The C core's first metric over the best peer's, at the row's last argument, naming that peer."""
    if not r["ratio"]:
        return ""
    key = lambda peer: values.get((r["workload"], float(args[-1]), r["metrics"][0], peer))
    ours = key("core")
    theirs = [(key(p), p) for p in PEERS if key(p) is not None]
    if ours is None or not theirs:
        return ""
    best, who = (max if r["better"] == "up" else min)(theirs)
    if best == 0:
        return ""
    where = dict(COLUMNS)[who] + (", " + fmt_arg(args[-1]) if len(args) > 1 else "")
    return "%s (%s)%s" % (fmt_ratio(ours / best), where, r["ratio_mark"])


def render(folder):
    return [BEGIN, run_line(folder), ""] + table(read_results(folder)) + [END]


def replace_block(text, block):
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        sys.exit("publish: README.md has no bench-table markers (%s ... %s)" % (BEGIN, END))
    return text[:start] + "\n".join(block) + text[end + len(END):]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--from", dest="source", default=os.path.join(HERE, "build"),
                    help="the run's folder (default bench/build)")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; fail if README's table differs from what bench/results.csv gives")
    args = ap.parse_args()
    with open(README) as f:
        readme = f.read()
    if args.check:
        wanted = replace_block(readme, render(HERE))
        if wanted != readme:
            sys.exit("publish: README.md's benchmark table is not what bench/results.csv gives: run "
                     "`python3 bench/scripts/publish.py --from bench` (or add the new row to ROWS in "
                     "bench/scripts/publish.py)")
        print("ok: README's benchmark table is bench/results.csv's")
        return 0
    source = os.path.abspath(args.source)
    if not os.path.exists(os.path.join(source, "results.csv")) or not os.path.exists(
            os.path.join(source, "results.md")):
        sys.exit("publish: no full run in %s (results.md, results.csv): run `make bench` first" %
                 os.path.relpath(source, ROOT))
    new_readme = replace_block(readme, render(source))
    copied = []
    if source != HERE:
        names = ["results.md", "results.csv"] + sorted(
            os.path.basename(p) for p in glob.glob(os.path.join(source, "*.svg"))
            if not os.path.basename(p).startswith("quick-"))
        for name in names:
            shutil.copyfile(os.path.join(source, name), os.path.join(HERE, name))
            copied.append("bench/" + name)
    with open(README, "w") as f:
        f.write(new_readme)
    print("publish: %s and README.md's table, from %s" % (", ".join(copied) or "nothing copied",
                                                          os.path.relpath(source, ROOT)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
