#!/usr/bin/env python3
"""Runs the workloads W1-W12 on every peer, interleaved, and reports medians.

    python3 run.py --full     # what `make bench` runs: 3 runs, writes build/results.md/.csv, build/w2.svg, w9.svg
    python3 run.py --quick    # 1 run of a reduced set (under a minute), writes to build/quick-*

Both write under build/ only, so a checkout stays clean; `make bench-publish`
(scripts/publish.py) copies the last full run into the committed results.md,
results.csv, charts and the README's table.

Each peer is a program in build/ that runs one workload per process and prints
"RESULT wN key=value ...". A program that is not there is reported as missing,
with the reason its build left in build/<program>.missing. Python 3 stdlib only.
"""
import argparse
import csv
import datetime
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(HERE, "build")

# (key, label, program)
PEERS = [
    ("core", "C core (ours)", "bench_core"),
    ("swift", "Swift RunLoop (ours)", "bench_swiftrunloop"),
    ("foundation", "Foundation RunLoop", "bench_foundation"),
    ("libuv", "libuv", "bench_uv"),
    ("libev", "libev", "bench_ev"),
    ("glib", "GLib", "bench_glib"),
]
OURS = ["core", "swift"]
OTHERS = ["foundation", "libuv", "libev", "glib"]

WORKLOADS = {
    "w1": "W1 cross-thread wake-up ping-pong",
    "w2": "W2 N one-shot timers spread over 1 s",
    "w3": "W3 one 1 ms repeating timer",
    "w4": "W4 same-thread perform-blocks",
    "w5": "W5 socketpair ping-pong between two loops",
    "w6": "W6 idle loop",
    "w7": "W7 system calls per pass, mallocs per operation",
    "w5fd": "W5 through RLFileDescriptor (C) against the peers' fd watchers",
    "w8": "W8 oversubscribed ping-pong: 4 pairs of loops on 2 CPUs",
    "w9a": "W9a scale: N registered fds, one active",
    "w9b": "W9b scale: N version-0 sources, one signalled per pass",
    "w9c": "W9c scale: ping-pong round trip with N other modes in each loop (in the default mode, and in the last made)",
    "w9d": "W9d scale: T loops on T threads, all woken by one thread",
    "w10": "W10 Swift concurrency: awaited calls into an actor",
    "w11": "W11 a 10 ms run under API pressure: 2 threads churning items, 1 describing the loop",
    "w12": "W12 TCP echo over loopback between two loops (CFSocket, uv_tcp, GSocket)",
}
# Workloads only some peers have (the others are not run for them). W5 through
# RLFileDescriptor is compared with the peers' own W5 (their fd watchers).
ONLY_PEERS = {"w5fd": ["core"], "w8": ["core", "libuv", "libev"], "w9a": ["core", "libuv", "libev"],
              "w9b": ["core"], "w9c": ["core"], "w9d": ["core", "libuv", "libev"],
              "w10": ["swift", "foundation"], "w11": ["core"], "w12": ["core", "libuv", "glib"]}
# The row label of each size, for the workloads run at several sizes.
SIZE_LABEL = {"w2": "N=%s", "w9a": "N=%s fds", "w9b": "N=%s sources", "w9c": "N=%s modes", "w9d": "T=%s threads"}

# metric key -> (label, better: "hi" | "lo" | "")
METRICS = {
    "rt_per_s": ("round trips/s", "hi"),
    "rtt_med_us": ("median RTT (us)", "lo"),
    "rt_per_s_last_mode": ("round trips/s, last mode made", "hi"),
    "rtt_med_us_last_mode": ("median RTT (us), last mode made", "lo"),
    "rtt_p99_us": ("p99 RTT (us)", "lo"),
    "cpu_us_per_rt": ("CPU per round trip (us)", "lo"),
    "csw_per_rt": ("context switches per round trip", "lo"),
    "sc_per_rt": ("system calls per round trip", "lo"),
    "add_ns": ("cost to schedule a timer (ns)", "lo"),
    "cpu_ms": ("total CPU (ms)", "lo"),
    "all_fired_s": ("seconds until the last fired", "lo"),
    "late_mean_us": ("lateness mean (us)", "lo"),
    "late_p99_us": ("lateness p99 (us)", "lo"),
    "fired": ("timers fired", "hi"),
    "fires": ("fires", "hi"),
    "expected": ("grid points in the run", ""),
    "jit_mean_us": ("jitter mean (us)", "lo"),
    "jit_p99_us": ("jitter p99 (us)", "lo"),
    "cpu_pct": ("CPU %", "lo"),
    "blocks_per_s": ("blocks/s", "hi"),
    "enqueue_ns": ("enqueue cost (ns/block)", "lo"),
    "drain_ns": ("drain cost (ns/block)", "lo"),
    "cpu_us": ("CPU (us)", "lo"),
    "vcsw": ("voluntary context switches", "lo"),
    "ivcsw": ("involuntary context switches", "lo"),
    "threads": ("threads", "lo"),
    "syscalls": ("system calls", "lo"),
    "sc_waker_per_wake": ("waker: system calls per wake (loop asleep)", "lo"),
    "sc_loop_per_woken_pass": ("woken loop: system calls per pass", "lo"),
    "sc_per_wake_awake": ("waker: system calls per wake (loop awake)", "lo"),
    "ns_per_wake_awake": ("waker: ns per wake (loop awake)", "lo"),
    "mallocs_per_rt": ("mallocs per W1 round trip", "lo"),
    "mallocs_per_add": ("mallocs per W2 timer add", "lo"),
    "mallocs_per_block": ("mallocs per W4 block", "lo"),
    "ns_per_event": ("ns per event", "lo"),
    "cpu_ns_per_event": ("CPU ns per event", "lo"),
    "extra_fds": ("open fds beyond the N watched", "lo"),
    "ns_per_pass": ("ns per pass", "lo"),
    "cpu_ns_per_pass": ("CPU ns per pass", "lo"),
    "wakeups_per_s": ("wake-ups handled/s", "hi"),
    "cpu_us_per_wakeup": ("CPU per wake-up (us)", "lo"),
    "rt_per_s_runloop": ("RunLoopThread: round trips/s", "hi"),
    "rt_per_s_queue": ("DispatchQueue: round trips/s", "hi"),
    "rt_per_s_default": ("default executor: round trips/s", "hi"),
    "cpu_us_per_rt_runloop": ("RunLoopThread: CPU/round trip (us)", "lo"),
    "cpu_us_per_rt_queue": ("DispatchQueue: CPU/round trip (us)", "lo"),
    "cpu_us_per_rt_default": ("default executor: CPU/round trip (us)", "lo"),
    "runloop_vs_queue": ("RunLoopThread/DispatchQueue round trips", "hi"),
    "runloop_vs_default": ("RunLoopThread/default round trips", "hi"),
    "over_med_ms": ("overshoot past 10 ms, median (ms)", "lo"),
    "over_p99_ms": ("overshoot past 10 ms, p99 (ms)", "lo"),
    "over_max_ms": ("overshoot past 10 ms, max (ms)", "lo"),
    "items_per_s": ("items churned by the callers/s", "hi"),
    "descriptions_per_s": ("descriptions/s", "hi"),
}

# Which metrics each workload table shows, in order.
TABLE_KEYS = {
    "w1": ["rt_per_s", "rtt_med_us", "rtt_p99_us", "cpu_us_per_rt", "csw_per_rt", "sc_per_rt"],
    "w2": ["add_ns", "cpu_ms", "all_fired_s", "late_mean_us", "late_p99_us", "fired"],
    "w3": ["fires", "expected", "jit_mean_us", "jit_p99_us", "cpu_pct"],
    "w4": ["blocks_per_s", "enqueue_ns", "drain_ns"],
    "w5": ["rt_per_s", "rtt_med_us", "rtt_p99_us", "sc_per_rt"],
    "w6": ["cpu_us", "vcsw", "ivcsw", "threads", "syscalls"],
    "w7": ["sc_waker_per_wake", "sc_loop_per_woken_pass", "sc_per_wake_awake", "ns_per_wake_awake",
           "mallocs_per_rt", "mallocs_per_add", "mallocs_per_block"],
    "w5fd": ["rt_per_s", "rtt_med_us", "rtt_p99_us", "sc_per_rt"],
    "w8": ["rt_per_s", "cpu_us_per_rt", "csw_per_rt"],
    "w9a": ["ns_per_event", "cpu_ns_per_event", "extra_fds"],
    "w9b": ["ns_per_pass", "cpu_ns_per_pass"],
    "w9c": ["rt_per_s", "rtt_med_us", "rt_per_s_last_mode", "rtt_med_us_last_mode"],
    "w9d": ["wakeups_per_s", "cpu_us_per_wakeup"],
    "w10": ["rt_per_s_runloop", "rt_per_s_queue", "rt_per_s_default", "runloop_vs_queue", "runloop_vs_default",
            "cpu_us_per_rt_runloop", "cpu_us_per_rt_queue", "cpu_us_per_rt_default"],
    "w11": ["over_med_ms", "over_p99_ms", "over_max_ms", "items_per_s", "descriptions_per_s"],
    "w12": ["rt_per_s", "rtt_med_us", "rtt_p99_us", "sc_per_rt"],
}
W9_SIZES = {"w9a": [1, 100, 10000], "w9b": [1, 100, 10000], "w9c": [0, 100, 10000], "w9d": [1, 2, 8, 64]}

FULL = {
    "runs": 3,
    "items": [("w1", 100000), ("w2", 10000), ("w2", 100000), ("w2", 1000000), ("w3", 2.0),
              ("w4", 1000000), ("w5", 50000), ("w6", 2.0), ("w7", 20000), ("w5fd", 50000), ("w8", 50000)] +
             [(w, n) for w in ("w9a", "w9b", "w9c", "w9d") for n in W9_SIZES[w]] + [("w10", 20000), ("w11", 200), ("w12", 50000)],
    "malloc_items": [("w1", 20000), ("w2", 100000), ("w4", 1000000)],
    "timeout": 120,
    "strace_rt": 5000,
    "repeat": {"w3": 5},
}
QUICK = {
    "runs": 1,
    "items": [("w1", 5000), ("w2", 10000), ("w2", 100000), ("w3", 0.5), ("w4", 100000),
              ("w5", 5000), ("w6", 0.5), ("w7", 1000), ("w5fd", 5000), ("w8", 5000),
              ("w9a", 1), ("w9a", 1000), ("w9b", 1), ("w9b", 1000), ("w9c", 0), ("w9c", 1000), ("w9d", 1), ("w9d", 8), ("w10", 2000), ("w11", 50), ("w12", 5000)],
    "malloc_items": [("w1", 2000), ("w2", 10000), ("w4", 100000)],
    "timeout": 30,
    "strace_rt": 0,
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def program(peer):
    return os.path.join(BUILD, dict((k, p) for k, _, p in PEERS)[peer])


def missing_reason(peer):
    prog = program(peer)
    if os.path.exists(prog + ".missing"):
        with open(prog + ".missing") as f:
            return f.read().strip() or "not built"
    if not os.access(prog, os.X_OK):
        return "not built"
    return None


def run_one(peer, wl, arg, timeout, env=None):
    """Runs one workload in a fresh process; returns a dict of values, or a string on failure."""
    cmd = [program(peer), wl, repr(arg)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "timeout (>%d s)" % timeout
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            vals = {}
            for tok in line.split()[2:]:
                k, _, v = tok.partition("=")
                try:
                    vals[k] = float(v)
                except ValueError:
                    pass
            return vals
        if line.startswith("UNSUPPORTED"):
            return "not supported by this peer's API"
    return "failed (exit %d): %s" % (p.returncode, (p.stderr.strip().splitlines() or [""])[-1][:120])


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if math.isnan(v):
        return "nan"
    a = abs(v)
    if a >= 1e6:
        return "%.2fM" % (v / 1e6)
    if a >= 1e4:
        return "%.1fk" % (v / 1e3)
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    if a == 0:
        return "0"
    return "%.3g" % v


def ratio(a, b):
    if not isinstance(a, float) or not isinstance(b, float) or math.isnan(a) or math.isnan(b):
        return None
    if b == 0:
        return None if a != 0 else 1.0
    return a / b


def fmt_ratio(r):
    if r is None:
        return "-"
    if r >= 100:
        return "%.0fx" % r
    if r >= 10:
        return "%.1fx" % r
    return "%.2fx" % r


def machine_info():
    info = {}
    info["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    info["kernel"] = platform.release()
    info["cpus"] = os.cpu_count()
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info["cpu"] = model
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    info["os"] = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        info["os"] = platform.platform()
    info["load"] = " ".join("%.2f" % x for x in os.getloadavg())

    def version(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
        except Exception:
            return "?"
    info["swift"] = version(["swift", "--version"]) if shutil.which("swift") else "none"
    vers = []
    for name, mod in (("libuv", "libuv"), ("GLib", "glib-2.0")):
        v = version(["pkg-config", "--modversion", mod]) if shutil.which("pkg-config") else "?"
        vers.append("%s %s" % (name, v))
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libev-dev"], capture_output=True, text=True).stdout
        vers.append("libev %s" % (out.strip() or "?"))
    except Exception:
        vers.append("libev ?")
    info["peers"] = ", ".join(vers)
    return info


def strace_breakdown(peers, n, wl="w1"):
    """System calls per round trip of workload wl (W1 or W12) by name, from `strace -f -c` (one run each)."""
    if not shutil.which("strace") or n <= 0:
        return {}
    out = {}
    for peer in peers:
        base = {}
        for count in (0, n):
            # count 0 is not allowed by the programs; use 1 round trip as the baseline
            c = max(count, 1)
            path = os.path.join(BUILD, "strace-%s-%s-%d.txt" % (wl, peer, c))
            try:
                subprocess.run(["strace", "-f", "-c", "-o", path, program(peer), wl, str(c)],
                               capture_output=True, timeout=120)
            except Exception:
                break
            calls = {}
            try:
                with open(path) as f:
                    for line in f:
                        m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:(\d+)\s+)?(\w+)\s*$", line)
                        if m and m.group(3) != "total":
                            calls[m.group(3)] = int(m.group(1))
            except OSError:
                break
            if count == 0:
                base = calls
            else:
                per = {}
                for k, v in calls.items():
                    d = (v - base.get(k, 0)) / float(n - 1)
                    if d >= 0.05:
                        per[k] = d
                out[peer] = per
    return out


def svg_w2(medians, peers, labels, path):
    """Cost per timer against N, log-log, one line per peer."""
    pts = {}
    for peer in peers:
        line = []
        for (wl, arg, key), v in medians.get(peer, {}).items():
            if wl == "w2" and key == "add_ns" and isinstance(v, float) and v > 0:
                line.append((arg, v))
        if line:
            pts[peer] = sorted(line)
    if not pts:
        return
    xs = [x for l in pts.values() for x, _ in l]
    ys = [y for l in pts.values() for _, y in l]
    x0, x1 = math.floor(math.log10(min(xs))), math.ceil(math.log10(max(xs)))
    if x1 == x0:
        x1 += 1
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    if y1 == y0:
        y1 += 1
    W, H, L, R, T, Bm = 720, 440, 80, 200, 40, 60
    pw, ph = W - L - R, H - T - Bm

    def px(x):
        return L + (math.log10(x) - x0) / (x1 - x0) * pw

    def py(y):
        return T + ph - (math.log10(y) - y0) / (y1 - y0) * ph
    colors = {"core": "#d62728", "swift": "#ff7f0e", "foundation": "#1f77b4", "libuv": "#2ca02c",
              "libev": "#9467bd", "glib": "#8c564b"}
    s = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="22" font-size="15" font-weight="bold">W2: cost to schedule a one-shot timer vs number of timers</text>' % L]
    for e in range(x0, x1 + 1):
        X = px(10 ** e)
        s.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (X, T, X, T + ph))
        s.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (X, T + ph + 18, fmt(float(10 ** e))))
    for e in range(y0, y1 + 1):
        Y = py(10 ** e)
        s.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, Y, L + pw, Y))
        s.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (L - 6, Y + 4, fmt(float(10 ** e))))
    s.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>' % (L, T, pw, ph))
    s.append('<text x="%.1f" y="%d" text-anchor="middle">timers scheduled (N, log scale)</text>' % (L + pw / 2, H - 14))
    s.append('<text transform="translate(18,%.1f) rotate(-90)" text-anchor="middle">ns per timer (log scale)</text>' % (T + ph / 2))
    for i, (peer, line) in enumerate(pts.items()):
        c = colors.get(peer, "#000")
        s.append('<polyline fill="none" stroke="%s" stroke-width="2.5" points="%s"/>' %
                 (c, " ".join("%.1f,%.1f" % (px(x), py(y)) for x, y in line)))
        for x, y in line:
            s.append('<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s N=%d: %.0f ns</title></circle>' %
                     (px(x), py(y), c, labels[peer], x, y))
        ly = T + 14 + i * 20
        s.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>' % (L + pw + 14, ly - 4, L + pw + 34, ly - 4, c))
        s.append('<text x="%d" y="%d">%s</text>' % (L + pw + 40, ly, labels[peer]))
    s.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(s) + "\n")


W9_PANELS = [("w9a", "ns_per_event", "a: ns per event vs fds watched", "fds (N)"),
             ("w9b", "ns_per_pass", "b: ns per pass vs version-0 sources", "sources (N)"),
             ("w9c", "rtt_med_us", "c: median round trip (us) vs other modes", "modes (N)"),
             ("w9d", "wakeups_per_s", "d: wake-ups handled/s vs loops", "threads (T)")]


def svg_w9(medians, peers, labels, path):
    """W9: cost against size, one small log-log panel per part, one line per peer."""
    colors = {"core": "#d62728", "swift": "#ff7f0e", "foundation": "#1f77b4", "libuv": "#2ca02c",
              "libev": "#9467bd", "glib": "#8c564b"}
    PW, PH, L, T, G = 300, 200, 70, 50, 90
    W, H = 2 * (L + PW) + 180, 2 * (T + PH + G) + 10
    s = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="22" font-size="15" font-weight="bold">W9: costs as the work grows (log-log; a, b, c: flat is the goal; d: higher is better)</text>' % L]
    drawn = set()
    for k, (wl, key, title, xlabel) in enumerate(W9_PANELS):
        ox, oy = L + (k % 2) * (L + PW), T + (k // 2) * (T + PH + G)
        pts = {}
        for peer in peers:
            line = sorted((max(a, 0.5), v) for (w, a, kk), v in medians.get(peer, {}).items()
                          if w == wl and kk == key and isinstance(v, float) and v > 0)
            if line:
                pts[peer] = line
        s.append('<text x="%d" y="%d" font-weight="bold">%s</text>' % (ox, oy - 8, title))
        s.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>' % (ox, oy, PW, PH))
        if not pts:
            continue
        xs = [x for l in pts.values() for x, _ in l]
        ys = [y for l in pts.values() for _, y in l]
        x0, x1 = math.floor(math.log10(min(xs))), math.ceil(math.log10(max(xs)))
        y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
        x1 = x1 if x1 > x0 else x0 + 1
        y1 = y1 if y1 > y0 else y0 + 1

        def px(x):
            return ox + (math.log10(x) - x0) / (x1 - x0) * PW

        def py(y):
            return oy + PH - (math.log10(y) - y0) / (y1 - y0) * PH
        for e in range(x0, x1 + 1):
            s.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (px(10 ** e), oy, px(10 ** e), oy + PH))
            s.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (px(10 ** e), oy + PH + 14, fmt(float(10 ** e))))
        for e in range(y0, y1 + 1):
            s.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (ox, py(10 ** e), ox + PW, py(10 ** e)))
            s.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (ox - 4, py(10 ** e) + 4, fmt(float(10 ** e))))
        s.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (ox + PW / 2, oy + PH + 30, xlabel))
        for peer, line in pts.items():
            c = colors.get(peer, "#000")
            drawn.add(peer)
            s.append('<polyline fill="none" stroke="%s" stroke-width="2.5" points="%s"/>' %
                     (c, " ".join("%.1f,%.1f" % (px(x), py(y)) for x, y in line)))
            for x, y in line:
                s.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s %s=%g: %s</title></circle>' %
                         (px(x), py(y), c, labels[peer], xlabel, x, fmt(y)))
    for i, peer in enumerate(p for p in peers if p in drawn):
        ly = T + 14 + i * 20
        lx = 2 * (L + PW) + 10
        s.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>' % (lx, ly - 4, lx + 20, ly - 4, colors.get(peer, "#000")))
        s.append('<text x="%d" y="%d">%s</text>' % (lx + 26, ly, labels[peer]))
    s.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(s) + "\n")


def main():
    ap = argparse.ArgumentParser()
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--full", action="store_true")
    g.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--only", help="comma-separated peers to run")
    ap.add_argument("--render", metavar="RAW_JSON", help="re-render the tables from a saved build/raw-*.json, running nothing")
    args = ap.parse_args()
    cfg = QUICK if args.quick else FULL
    runs = args.runs or cfg["runs"]
    if args.quick:
        out_md, out_csv, out_svg = (os.path.join(BUILD, "quick-results.md"), os.path.join(BUILD, "quick-results.csv"),
                                    os.path.join(BUILD, "quick-w2.svg"))
    else:
        out_md, out_csv, out_svg = (os.path.join(BUILD, "results.md"), os.path.join(BUILD, "results.csv"),
                                    os.path.join(BUILD, "w2.svg"))
    labels = {k: l for k, l, _ in PEERS}
    all_peers = [k for k, _, _ in PEERS]
    if args.only:
        all_peers = [p for p in all_peers if p in args.only.split(",")]
    missing = {p: missing_reason(p) for p in all_peers}
    present = [p for p in all_peers if not missing[p]]
    for p in all_peers:
        if missing[p]:
            log("bench: %s missing: %s" % (labels[p], missing[p]))
    if not present:
        log("bench: nothing to run")
        return 1

    t_start = time.time()
    raw = {}       # (peer, wl, arg) -> list of dicts
    failed = {}    # (peer, wl, arg) -> reason
    strace = {}
    strace_w12 = {}
    if args.render:
        with open(args.render) as f:
            saved = json.load(f)
        raw = {tuple(k): v for k, v in saved["raw"]}
        failed = {tuple(k): v for k, v in saved["failed"]}
        strace = saved.get("strace", {})
        strace_w12 = saved.get("strace_w12", {})
        runs = saved.get("runs", runs)
    # Some workloads get more runs than the rest (W3's jitter is compared over 5).
    repeat = {} if args.runs else cfg.get("repeat", {})
    for r in range(0 if args.render else max([runs] + list(repeat.values()))):
        for idx, (wl, arg) in enumerate(cfg["items"]):
            if r >= repeat.get(wl, runs):
                continue
            # rotate the peer order every run and workload so drift hits all alike
            k = (r + idx) % len(present)
            order = present[k:] + present[:k]
            for peer in order:
                if wl in ONLY_PEERS and peer not in ONLY_PEERS[wl]:
                    continue
                key = (peer, wl, arg)
                if key in failed:
                    continue
                t = time.time()
                res = run_one(peer, wl, arg, cfg["timeout"])
                if isinstance(res, str):
                    failed[key] = res
                    log("  run %d %-4s %-8g %-11s %s" % (r + 1, wl, arg, peer, res))
                    continue
                raw.setdefault(key, []).append(res)
                log("  run %d %-4s %-8g %-11s %5.1fs  %s" % (r + 1, wl, arg, peer, time.time() - t,
                    " ".join("%s=%s" % (k2, fmt(v)) for k2, v in list(res.items())[:4])))

    # malloc counts: one run under the LD_PRELOAD counter (counts are deterministic enough)
    mc = os.path.join(BUILD, "malloc_count.so")
    if os.path.exists(mc) and not args.render:
        env = dict(os.environ, LD_PRELOAD=mc)
        for wl, arg in cfg["malloc_items"]:
            for peer in present:
                res = run_one(peer, wl, arg, cfg["timeout"], env=env)
                if isinstance(res, dict):
                    for k2 in ("mallocs_per_rt", "mallocs_per_add", "mallocs_per_block"):
                        if k2 in res:
                            raw.setdefault((peer, "w7", 0), [{}])[0][k2] = res[k2]
    if not args.quick and not args.render:
        strace = strace_breakdown(present, cfg["strace_rt"])
        strace_w12 = strace_breakdown([p for p in present if p in ONLY_PEERS["w12"]], cfg["strace_rt"], "w12")
    if not args.render:
        with open(os.path.join(BUILD, "raw-%s.json" % ("quick" if args.quick else "full")), "w") as f:
            json.dump({"runs": runs, "raw": [[list(k), v] for k, v in raw.items()],
                       "failed": [[list(k), v] for k, v in failed.items()], "strace": strace,
                       "strace_w12": strace_w12}, f)

    # medians
    medians = {}   # peer -> {(wl, arg, key): value}
    for (peer, wl, arg), lst in raw.items():
        keys = set(k2 for d in lst for k2 in d)
        for k2 in keys:
            vals = [d[k2] for d in lst if k2 in d and not math.isnan(d[k2])]
            if vals:
                medians.setdefault(peer, {})[(wl, arg, k2)] = statistics.median(vals)
    # W7's malloc entries live under arg 0; its syscall entries under the run arg
    info = machine_info()

    def value(peer, wl, arg, key):
        if missing.get(peer):
            return "missing"
        if wl == "w5fd" and peer != "core":
            w5 = [a for w, a in cfg["items"] if w == "w5"]
            return value(peer, "w5", w5[-1], key) if w5 and peer in ("libuv", "libev", "glib") else None
        if (peer, wl, arg) in failed and wl != "w7":
            return failed[(peer, wl, arg)]
        return medians.get(peer, {}).get((wl, arg, key))

    cols = all_peers
    ratio_cols = []
    if "core" in all_peers:
        ratio_cols += [("core", p) for p in all_peers if p != "core"]
    if "swift" in all_peers and not missing.get("swift"):
        ratio_cols += [("swift", p) for p in ("foundation", "libuv", "libev", "glib") if p in all_peers]
    short = {"core": "C", "swift": "Swift", "foundation": "Foundation", "libuv": "libuv", "libev": "libev", "glib": "GLib"}

    md = []
    md.append("# Benchmark results%s\n" % (" (quick run)" if args.quick else ""))
    md.append("Machine: %s, %s CPUs (%s), kernel %s; load average at the end %s; %s; %s.  " %
              (info.get("os", "?"), info["cpus"], info["cpu"], info["kernel"], info["load"], info["swift"], info["peers"]))
    md.append("Run %s: medians of %d run(s), each a fresh process, peers interleaved (the order rotates every run and "
              "workload; W3: %d runs). Generated by `bench/run.py%s`.\n" % (info["date"], runs,
                                                                  cfg.get("repeat", {}).get("w3", runs),
                                                                  " --quick" if args.quick else ""))
    md.append("Ratios are ours / peer for the same metric (read with the arrow: for a higher-is-better metric (↑) a "
              "ratio above 1 means ours is better; for a lower-is-better one (↓), below 1).\n")
    miss = [p for p in all_peers if missing[p]]
    if miss:
        md.append("**Missing peers:** " + "; ".join("%s: %s" % (labels[p], missing[p]) for p in miss) + "\n")
    if failed:
        md.append("**Runs that did not complete:** " + "; ".join(
            "%s %s(%g): %s" % (labels[p], wl, a, why) for (p, wl, a), why in sorted(failed.items())) + "\n")

    csv_rows = []
    term = []
    items = list(cfg["items"])
    for wl in ["w1", "w2", "w3", "w4", "w5", "w5fd", "w6", "w7", "w8", "w9a", "w9b", "w9c", "w9d", "w10", "w11", "w12"]:
        args_for = [a for w, a in items if w == wl]
        if wl == "w7":
            args_for = args_for[:1] + [0]
        if not args_for:
            continue
        md.append("\n## %s\n" % WORKLOADS[wl])
        term.append("\n== %s" % WORKLOADS[wl])
        head = ["metric", ""] + [short[p] for p in cols] + ["%s/%s" % (short[a], short[b]) for a, b in ratio_cols]
        md.append("| " + " | ".join(head) + " |")
        md.append("|" + "---|" * len(head))
        term.append("  ".join(["%-44s" % "metric"] + ["%11s" % short[p] for p in cols] +
                              ["%11s" % ("%s/%s" % (short[a], short[b])[:11]) for a, b in ratio_cols]))
        for arg in args_for:
            for key in TABLE_KEYS[wl]:
                if wl == "w7" and (key.startswith("mallocs") != (arg == 0)):
                    continue
                vals = {p: value(p, wl, arg, key) for p in cols}
                if all(v is None or isinstance(v, str) for v in vals.values()):
                    continue
                label, better = METRICS[key]
                if wl in SIZE_LABEL:
                    size = fmt(float(arg)) if wl == "w2" else "%g" % arg
                    label = (SIZE_LABEL[wl] + ": %s") % (size, label)
                arrow = {"hi": "↑", "lo": "↓"}.get(better, "")
                rats = [ratio(vals.get(a), vals.get(b)) for a, b in ratio_cols]
                md.append("| " + " | ".join([label, arrow] + [fmt(vals[p]) for p in cols] + [fmt_ratio(x) for x in rats]) + " |")
                term.append("  ".join(["%-44s" % (label + " " + arrow)[:44]] + ["%11s" % fmt(vals[p])[:11] for p in cols] +
                                      ["%11s" % fmt_ratio(x) for x in rats]))
                for p in cols:
                    v = vals[p]
                    runs_vals = [d.get(key) for d in raw.get((p, wl, arg), []) if key in d]
                    csv_rows.append([wl, arg, key, p, "" if v is None else (v if isinstance(v, float) else ""),
                                     v if isinstance(v, str) else "", ";".join("%.6g" % x for x in runs_vals)])
    def strace_table(wl, counts):
        md.append("\n## System calls per %s round trip by name (`strace -f -c`, %d round trips minus 1)\n" %
                  (wl.upper(), cfg["strace_rt"]))
        names = sorted(set(k for d in counts.values() for k in d), key=lambda k: -max(d.get(k, 0) for d in counts.values()))
        md.append("| syscall | " + " | ".join(short[p] for p in counts) + " |")
        md.append("|---|" + "---|" * len(counts))
        for n in names:
            md.append("| %s | " % n + " | ".join(fmt(counts[p].get(n, 0.0)) for p in counts) + " |")
        md.append("| **total** | " + " | ".join(fmt(sum(counts[p].values())) for p in counts) + " |")
    if strace:
        strace_table("w1", strace)
        md.append("\n(strace's counts include the traced threads only; Foundation's CFSocket thread is not in W1.)")
    if strace_w12:
        strace_table("w12", strace_w12)

    # ---- the targets, checked on this run's medians ----
    def v(peer, wl, arg, key):
        x = value(peer, wl, arg, key)
        return x if isinstance(x, float) else None

    def arg_of(wl, want=None):
        a = [x for w, x in items if w == wl]
        if want is not None and want in a:
            return want
        return a[-1] if a else None
    checks = []

    def check(name, ok, detail):
        checks.append((name, "n/a" if ok is None else ("met" if ok else "**below target**"), detail))

    def ge(a, b, f=1.0):
        return None if a is None or b is None else a >= f * b
    a1, a4, a5, a6, a3 = arg_of("w1"), arg_of("w4"), arg_of("w5"), arg_of("w6"), arg_of("w3")
    c1, l1, f1 = v("core", "w1", a1, "rt_per_s"), v("libev", "w1", a1, "rt_per_s"), v("foundation", "w1", a1, "rt_per_s")
    check("W1 C >= libev round trips/s", ge(c1, l1), "C %s vs libev %s (%s)" % (fmt(c1), fmt(l1), fmt_ratio(ratio(c1, l1))))
    check("W1 C >= 2x Foundation", ge(c1, f1, 2), "%s" % fmt_ratio(ratio(c1, f1)))
    cs, us = v("core", "w1", a1, "sc_per_rt"), v("libuv", "w1", a1, "sc_per_rt")
    check("W1 C system calls per round trip <= libuv", None if cs is None or us is None else cs <= us,
          "C %s vs libuv %s" % (fmt(cs), fmt(us)))
    aw = v("core", "w7", arg_of("w7"), "sc_per_wake_awake")
    check("W7 no system call to wake an awake loop", None if aw is None else aw == 0, "C %s per wake" % fmt(aw))
    for n in [x for w, x in items if w == "w2"]:
        add = v("core", "w2", n, "add_ns")
        check("W2 N=%s adding <= 150 ns per timer" % fmt(float(n)), None if add is None else add <= 150, "C %s ns" % fmt(add))
    big = max([x for w, x in items if w == "w2"] or [0])
    cf_, lf_ = v("core", "w2", big, "all_fired_s"), v("libev", "w2", big, "all_fired_s")
    check("W2 N=%s all fired no later than libev" % fmt(float(big)), None if cf_ is None or lf_ is None else cf_ <= lf_,
          "C %s s vs libev %s s" % (fmt(cf_), fmt(lf_)))
    fires, exp = v("core", "w3", a3, "fires"), v("core", "w3", a3, "expected")
    check("W3 no missed grid point", None if fires is None or exp is None else fires >= exp,
          "C %s fires of %s grid points" % (fmt(fires), fmt(exp)))
    jp = v("core", "w3", a3, "jit_p99_us")
    best = [v(p, "w3", a3, "jit_p99_us") for p in OTHERS]
    best = min([b for b in best if b is not None] or [float("nan")])
    check("W3 p99 jitter <= best peer", None if jp is None or math.isnan(best) else jp <= best,
          "C %s us vs best peer %s us" % (fmt(jp), fmt(best)))
    c4, f4 = v("core", "w4", a4, "blocks_per_s"), v("foundation", "w4", a4, "blocks_per_s")
    check("W4 C >= 10M blocks/s", None if c4 is None else c4 >= 10e6, "C %s/s" % fmt(c4))
    check("W4 C >= 30x Foundation", ge(c4, f4, 30), fmt_ratio(ratio(c4, f4)))
    c5, l5 = v("core", "w5", a5, "rt_per_s"), v("libev", "w5", a5, "rt_per_s")
    check("W5 C >= libev", ge(c5, l5), "C %s vs libev %s (%s)" % (fmt(c5), fmt(l5), fmt_ratio(ratio(c5, l5))))
    c6, l6 = v("core", "w6", a6, "cpu_us"), v("libev", "w6", a6, "cpu_us")
    t6, w6 = v("core", "w6", a6, "threads"), v("core", "w6", a6, "vcsw")
    check("W6 C CPU <= libev", None if c6 is None or l6 is None else c6 <= l6, "C %s us vs libev %s us" % (fmt(c6), fmt(l6)))
    check("W6 one thread, no wake-up", None if t6 is None else (t6 == 1 and (w6 or 0) <= 1),
          "%s thread(s), %s voluntary switch(es) (1 = the end of the run)" % (fmt(t6), fmt(w6)))
    s1, s4 = v("swift", "w1", a1, "rt_per_s"), v("swift", "w4", a4, "blocks_per_s")
    check("Swift W1 within 1.3x of C", ge(s1, c1, 1 / 1.3), "Swift/C %s" % fmt_ratio(ratio(s1, c1)))
    check("Swift W4 within 1.3x of C", ge(s4, c4, 1 / 1.3), "Swift/C %s" % fmt_ratio(ratio(s4, c4)))
    check("Swift W1 >= 2x Foundation", ge(s1, f1, 2), fmt_ratio(ratio(s1, f1)))
    n100 = 100000 if ("w2", 100000) in items else None
    sa, fa = v("swift", "w2", n100, "add_ns"), v("foundation", "w2", n100, "add_ns")
    check("Swift W2 adding 100k timers >= 20x Foundation", ge(fa, sa, 20), "Foundation/Swift %s" % fmt_ratio(ratio(fa, sa)))
    check("Swift W4 >= 10x Foundation", ge(s4, f4, 10), fmt_ratio(ratio(s4, f4)))
    # W1 CPU, W2 CPU and lateness at 100k, W5 through RLFileDescriptor, W8, W9
    cc1, lc1 = v("core", "w1", a1, "cpu_us_per_rt"), v("libev", "w1", a1, "cpu_us_per_rt")
    check("W1 C CPU per round trip <= libev", None if cc1 is None or lc1 is None else cc1 <= lc1,
          "C %s us vs libev %s us" % (fmt(cc1), fmt(lc1)))
    if n100:
        cc2, lc2 = v("core", "w2", n100, "cpu_ms"), v("libev", "w2", n100, "cpu_ms")
        cp2, lp2 = v("core", "w2", n100, "late_p99_us"), v("libev", "w2", n100, "late_p99_us")
        check("W2 N=100k CPU <= 2x libev", None if cc2 is None or lc2 is None else cc2 <= 2 * lc2,
              "C %s ms vs libev %s ms" % (fmt(cc2), fmt(lc2)))
        check("W2 N=100k lateness p99 <= libev", None if cp2 is None or lp2 is None else cp2 <= lp2,
              "C %s us vs libev %s us" % (fmt(cp2), fmt(lp2)))
    a5f = arg_of("w5fd")
    c5f = v("core", "w5fd", a5f, "rt_per_s")
    check("W5 through RLFileDescriptor C >= libev", ge(c5f, l5),
          "C %s vs libev %s (%s)" % (fmt(c5f), fmt(l5), fmt_ratio(ratio(c5f, l5))))
    a8 = arg_of("w8")
    c8, l8 = v("core", "w8", a8, "rt_per_s"), v("libev", "w8", a8, "rt_per_s")
    cc8, lc8 = v("core", "w8", a8, "cpu_us_per_rt"), v("libev", "w8", a8, "cpu_us_per_rt")
    check("W8 C round trips/s >= libev", ge(c8, l8), "C %s vs libev %s (%s)" % (fmt(c8), fmt(l8), fmt_ratio(ratio(c8, l8))))
    check("W8 C CPU per round trip <= libev", None if cc8 is None or lc8 is None else cc8 <= lc8,
          "C %s us vs libev %s us" % (fmt(cc8), fmt(lc8)))

    def sizes(wl):
        return sorted(x for w, x in items if w == wl)
    for wl, key, limit, what in (("w9a", "ns_per_event", 1.2, "cost per event, most fds within 1.2x of fewest"),
                                 ("w9b", "ns_per_pass", 2.0, "pass cost, most sources within 2x of fewest"),
                                 ("w9c", "rtt_med_us", 1.5, "round trip, most modes within 1.5x of fewest"),
                                 ("w9c", "rtt_med_us_last_mode", 1.5,
                                  "round trip in the last mode made, most modes within 1.5x of fewest")):
        sz = sizes(wl)
        if len(sz) >= 2:
            lo_, hi_ = v("core", wl, sz[0], key), v("core", wl, sz[-1], key)
            check("%s %s" % (wl.upper(), what), None if lo_ is None or hi_ is None else hi_ <= limit * lo_,
                  "C %s at %g vs %s at %g (%s)" % (fmt(hi_), sz[-1], fmt(lo_), sz[0], fmt_ratio(ratio(hi_, lo_))))
    sz = sizes("w9a")
    if sz:
        xf = v("core", "w9a", sz[-1], "extra_fds")
        check("W9A open fds = N + O(1)", None if xf is None else xf <= 4, "C %s beyond N=%g" % (fmt(xf), sz[-1]))
    sz = [t for t in sizes("w9d") if t >= 2]
    if len(sz) >= 2:
        # T=1 is a conversation (the woken loop's spin answers the waker), so
        # the baseline is the smallest T that sleeps: a wake-up must cost no
        # more CPU with more loops (no lock or state shared by loops), and
        # wake-ups/s must not fall as loops are added.
        one = v("core", "w9d", sz[0], "cpu_us_per_wakeup")
        most = v("core", "w9d", sz[-1], "cpu_us_per_wakeup")
        check("W9D CPU per wake-up, most loops within 1.5x of T=%g" % sz[0],
              None if one is None or most is None else most <= 1.5 * one,
              "C %s us at T=%g vs %s us at T=%g" % (fmt(most), sz[-1], fmt(one), sz[0]))
        one = v("core", "w9d", sz[0], "wakeups_per_s")
        most = v("core", "w9d", sz[-1], "wakeups_per_s")
        check("W9D wake-ups/s, most loops >= T=%g" % sz[0], None if one is None or most is None else most >= one,
              "C %s at T=%g vs %s at T=%g" % (fmt(most), sz[-1], fmt(one), sz[0]))
    # W12: the system calls counted per loop thread when the kernel lets us, else strace's totals.
    a12 = arg_of("w12")
    c12, u12 = v("core", "w12", a12, "rt_per_s"), v("libuv", "w12", a12, "rt_per_s")
    check("W12 C round trips/s >= libuv", ge(c12, u12), "C %s vs libuv %s (%s)" % (fmt(c12), fmt(u12), fmt_ratio(ratio(c12, u12))))
    cs12, us12 = v("core", "w12", a12, "sc_per_rt"), v("libuv", "w12", a12, "sc_per_rt")
    if (cs12 is None or us12 is None) and "core" in strace_w12 and "libuv" in strace_w12:
        cs12, us12 = sum(strace_w12["core"].values()), sum(strace_w12["libuv"].values())
    check("W12 C system calls per round trip <= libuv", None if cs12 is None or us12 is None else cs12 <= us12,
          "C %s vs libuv %s" % (fmt(cs12), fmt(us12)))
    a11 = arg_of("w11")
    o11 = v("core", "w11", a11, "over_max_ms")
    check("W11 a 10 ms run under API pressure returns within 100 ms of its timeout", None if o11 is None else o11 <= 100,
          "C slowest overshoot %s ms" % fmt(o11))
    md.append("\n## Targets on this run\n")
    md.append("Information, not failures: the project's goals, checked against this run's numbers (which drift on a "
              "shared machine, and a quick run's sizes are smaller). Nothing here fails the run.\n")
    md.append("| target | result | numbers |")
    md.append("|---|---|---|")
    for name, res, detail in checks:
        md.append("| %s | %s | %s |" % (name, res, detail))
    term.append("\n== Targets (information, not failures: goals checked against this run's numbers)")
    for name, res, detail in checks:
        term.append("  %-48s %-12s %s" % (name, res.strip("*"), detail))

    md.append("\n## How each peer does it\n")
    md.append("- **C core**: W1/W7 `RLRunLoopPerformFunction` + `RLRunLoopWakeUp`; W2 `RLRunLoopTimerCreate` + "
              "`RLRunLoopAddTimer` + `RLRelease` per timer; W4 `RLRunLoopPerformFunction`; W5 a version-1 source per "
              "socket end; W6 a far-future timer; `RLRunLoopRunInMode` throughout.")
    md.append("- **Swift RunLoop (ours)**: `RunLoop.perform` (it wakes the loop itself), `Timer(fire:interval:repeats:block:)` + "
              "`add(_:forMode:)`, `run(mode:before:)`, `stop()`; W5 `RunLoop.FileDescriptor` read callbacks.")
    md.append("- **Foundation**: `RunLoop.perform` + CoreFoundation's `CFRunLoopWakeUp` (Foundation has no public "
              "wake call), `CFRunLoopStop`; `Timer(fire:interval:repeats:block:)`; W5 `CFSocket` read callbacks "
              "(CF on Linux runs a select() thread for them).")
    md.append("- **libuv**: `uv_async_send`; `uv_timer_start` (whole ms); W4 a hand-written mutex-protected queue "
              "drained by a `uv_idle`; W5 `uv_poll`.")
    md.append("- **libev**: `ev_async_send`; `ev_timer`; W4 the same hand-written queue drained by an `ev_idle`; W5 `ev_io`.")
    md.append("- **GLib**: `g_main_context_invoke` (idle source attached to the other context, which wakes it); "
              "`g_timeout_add` (whole ms); W4 `g_idle_add`; W5 `g_unix_fd_source_new`; W7 awake-wake "
              "`g_main_context_wakeup`.")
    md.append("- W2 spreads the N fire dates over 1 s in a scrambled order (golden-ratio sequence), the same for "
              "every peer; lateness is measured against CLOCK_MONOTONIC. W3 jitter is each fire's lateness past the "
              "latest 1 ms grid point; fires below the grid-point count mean missed points. System calls are counted "
              "per thread (perf tracepoint raw_syscalls:sys_enter) on the loop threads; mallocs by an LD_PRELOAD "
              "counter (build/malloc_count.so).")
    md.append("- W5 through RLFileDescriptor: `RLFileDescriptorCreate` with a read callback that re-enables itself, "
              "against the peers' own W5 fd watchers. W8: W1's ping-pong on 4 pairs of threads at once (8 loop threads "
              "on the machine's CPUs); CPU is the whole process's. W9a: N eventfds watched (version-1 sources, "
              "`uv_poll`, `ev_io`), one of them kept readable by its own callback; W9b: N version-0 sources, the one "
              "performed signals itself again; W9c: W1's ping-pong with N other modes (one source each) in both "
              "loops; W9d: one thread queues a call on each of T loops and wakes it, then waits until all T ran it "
              "(libuv/libev: `uv_async_send`/`ev_async_send`). W9b and W9c have no counterpart in the peers.")
    md.append("- W12: a TCP connection over 127.0.0.1 between two loops on two threads (W5's shape), one byte each way, "
              "TCP_NODELAY on both ends; the peer thread's loop listens and accepts. C core: `RLSocket` (CFSocket) with "
              "an accept callback and data callbacks, answering with `RLSocketSendData`; libuv: `uv_tcp` with "
              "`uv_read_start` and `uv_try_write`; GLib: `GSocket` with socket sources (`g_socket_create_source`), "
              "`g_socket_receive` and `g_socket_send`.")
    md.append("\nTotal bench time: %.0f s.\n" % (time.time() - t_start))

    with open(out_md, "w") as f:
        f.write("\n".join(md) + "\n")
    with open(out_csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["workload", "arg", "metric", "peer", "median", "note", "runs"])
        w.writerows(csv_rows)
    svg_w2(medians, [p for p in all_peers if p in medians], labels, out_svg)
    out_svg9 = out_svg.replace("w2.svg", "w9.svg")
    svg_w9(medians, [p for p in all_peers if p in medians], labels, out_svg9)
    print("\n".join(term))
    if miss:
        print("\nmissing: " + "; ".join("%s: %s" % (labels[p], missing[p]) for p in miss))
    if failed:
        print("did not complete: " + "; ".join("%s %s(%g): %s" % (labels[p], wl, a, why)
                                                for (p, wl, a), why in sorted(failed.items())))
    print("\nwrote %s, %s, %s, %s (%.0f s)" % (os.path.relpath(out_md), os.path.relpath(out_csv), os.path.relpath(out_svg),
                                          os.path.relpath(out_svg9),
                                          time.time() - t_start))
    if not args.quick and not args.render:
        print("make bench-publish copies them into bench/ and the README's table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
