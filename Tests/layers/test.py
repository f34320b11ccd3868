#!/usr/bin/env python3
"""check.py's own test: feeds it tiny synthetic libraries (a few one-function
files, compiled here) and checks that it passes a layered one and fails,
naming the files, on each kind of cycle or layer break.

    test.py            (CC: the compiler, cc by default)

CASES is the table: a case's name, its files (path under the library's
folder: text), its allow-list (None: none), whether check.py must pass or
fail, and the texts its report must contain. A case whose allow-list is a
pair (edges, names) passes both lists.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check.py")
CC = os.environ.get("CC", "cc")
LAYER_FOLDERS = ["core", "core_api", "include", "linux", "threads"]

PING = "int pong(int); int ping(int n) { return n ? pong(n - 1) : 0; }"
PONG = "int ping(int); int pong(int n) { return n ? ping(n - 1) : 1; }"
LOW = "int low(void) { return 1; }"

CASES = [
    ("layered_library_passes",
     {"core_api/rl_extras.h": "int low(void);",
      "core/low.c": LOW,
      "core/high.c": '#include "rl_extras.h"\nint high(void) { return low() + 1; }',
      "linux/extra.c": '#include "rl_extras.h"\nint extra(void) { return low(); }',
      "threads/thread.c": "int high(void);\nint thread_main(void) { return high(); }"},
     None, "pass", ["no cycle"]),
    ("call_cycle_fails_and_names_its_files",
     {"core/ping.c": PING, "core/pong.c": PONG, "core/leaf.c": "int leaf(void) { return 0; }"},
     None, "fail", ["call cycle among 2 files: core/ping.c core/pong.c", "core/ping.c -> core/pong.c  (pong)",
                    "core/pong.c -> core/ping.c  (ping)"]),
    ("longer_call_cycle_fails",
     {"core/a.c": "int b(void); int a(void) { return b(); }",
      "core/b.c": "int c(void); int b(void) { return c(); }",
      "core/c.c": "int a(void); int c(void) { return a(); }"},
     None, "fail", ["call cycle among 3 files: core/a.c core/b.c core/c.c"]),
    ("data_reference_counts_as_a_call",
     {"core/table.c": "extern int user_count; int table = 1; int count(void) { return user_count; }",
      "core/user.c": "extern int table; int user_count = 2; int use(void) { return table; }"},
     None, "fail", ["call cycle among 2 files: core/table.c core/user.c"]),
    ("inline_call_in_a_header_counts_for_every_includer",
     {"core/shared.h": "int top_make(void);\nstatic inline int top_default(void) { return top_make(); }",
      "core/top.c": "int low_helper(void); int top_make(void) { return low_helper(); }",
      "core/low.c": '#include "shared.h"\nint low_helper(void) { return 1; }'},
     None, "fail", ["call cycle among 2 files: core/low.c core/top.c",
                    "core/low.c -> core/top.c  (top_make (inline in core/shared.h))"]),
    ("inline_call_through_another_inline_counts",
     {"core/shared.h": "int top_make(void);\nstatic inline int step(void) { return top_make(); }\n"
                       "static inline int top_default(void) { return step() + 1; }",
      "core/other.h": '#include "shared.h"',
      "core/top.c": "int low_helper(void); int top_make(void) { return low_helper(); }",
      "core/low.c": '#include "other.h"\nint low_helper(void) { return 1; }'},
     None, "fail", ["call cycle among 2 files: core/low.c core/top.c"]),
    ("include_cycle_fails",
     {"core/one.h": '#ifndef ONE_H\n#define ONE_H\n#include "two.h"\n#endif',
      "core/two.h": '#ifndef TWO_H\n#define TWO_H\n/* #include "one.h" in a comment does not count */\n'
                    '#include "one.h"\n#endif',
      "core/one.c": '#include "one.h"\nint one(void) { return 1; }'},
     None, "fail", ["include cycle among 2 files: core/one.h core/two.h"]),
    ("extra_including_a_core_private_header_fails",
     {"core/rl_private.h": "int low(void);",
      "core/low.c": LOW,
      "linux/extra.c": '#include "../core/rl_private.h"\nint extra(void) { return low(); }'},
     None, "fail", ["layer rule: linux/extra.c includes core/rl_private.h"]),
    ("extra_including_core_api_beyond_rl_extras_fails",
     {"core_api/rl_extras.h": '#include "rl_object.h"',
      "core_api/rl_object.h": "int low(void);",
      "core/low.c": LOW,
      "linux/extra.c": '#include "rl_object.h"\nint extra(void) { return low(); }'},
     None, "fail",
     ["layer rule: linux/extra.c includes core_api/rl_object.h; an extra includes core_api/rl_extras.h only"]),
    ("core_calling_an_extra_fails",
     {"core/low.c": "int extra(void); int low(void) { return extra(); }",
      "linux/extra.c": "int extra(void) { return 2; }"},
     None, "fail", ["layer rule: core/low.c (core/) calls into linux/extra.c (linux/): extra"]),
    ("extra_calling_another_extra_fails",
     {"linux/extra.c": "int thread_main(void); int extra(void) { return thread_main(); }",
      "threads/thread.c": "int thread_main(void) { return 3; }"},
     None, "fail", ["layer rule: linux/extra.c (linux/) calls into threads/thread.c (threads/)"]),
    ("allowed_edge_tolerates_its_cycle",
     {"core/ping.c": PING, "core/pong.c": PONG},
     "# a cycle not broken yet\ncore/pong.c -> core/ping.c\n", "pass", ["no cycle but the 1 allowed edges"]),
    ("allowed_edge_that_is_gone_fails",
     {"core/ping.c": "int ping(int n) { return n; }",
      "core/pong.c": "int ping(int); int pong(int n) { return ping(n); }"},
     "core/ping.c -> core/pong.c\n", "fail", ["allowed edge core/ping.c -> core/pong.c no longer exists"]),
    ("function_named_after_another_file_fails",
     {"core/rl_wait.c": "int rl_wait_sleep(void) { return 0; }",
      "core/rl_wait_set.c": "int rl_wait_prepare(void) { return 1; }\nint rl_wait_set_open(void) { return 2; }"},
     None, "fail", ["name rule: rl_wait_prepare is defined in core/rl_wait_set.c, but its name says core/rl_wait.c"]),
    ("allowed_name_passes_and_a_name_no_longer_misplaced_fails",
     {"core/rl_loop.c": "int rl_loop_make(void) { return 0; }",
      "core/rl_lock.c": "int rl_loop_lock(void) { return 1; }\nint rl_lock_spin(void) { return 2; }"},
     ("", "rl_loop_lock core/rl_lock.c  # the loop's own lock\nrl_lock_spin core/rl_lock.c\n"), "fail",
     ["allowed name rl_lock_spin core/rl_lock.c no longer needs it"]),
    ("source_outside_the_layer_folders_fails",
     {"core/low.c": LOW, "stray.c": "int stray(void) { return 1; }"},
     None, "fail", ["stray.c: a source file outside the layer folders"]),
]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text + "\n")


def build(tree, files):
    """Writes the library under tree/src and compiles each .c into tree/obj."""
    src, obj = os.path.join(tree, "src"), os.path.join(tree, "obj")
    for folder in LAYER_FOLDERS:
        os.makedirs(os.path.join(src, folder), exist_ok=True)
    for path, text in files.items():
        write(os.path.join(src, path), text)
    for path in files:
        if path.endswith(".c"):
            out = os.path.join(obj, path[:-2] + ".o")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            subprocess.run([CC, "-std=c11", "-w", "-I" + os.path.join(src, "include"),
                            "-I" + os.path.join(src, "core_api"), "-c", os.path.join(src, path), "-o", out],
                           check=True)
    return src, obj


def run_case(tmp, name, files, allowed, want, texts):
    """Returns the problems with one case (none: it passed)."""
    tree = os.path.join(tmp, name)
    src, obj = build(tree, files)
    args = [sys.executable, CHECK, src, obj]
    lists = allowed if isinstance(allowed, tuple) else (allowed,) if allowed is not None else ()
    for i, text in enumerate(lists):
        allow = os.path.join(tree, f"allowed{i}.txt")
        write(allow, text.rstrip("\n"))
        args.append(allow)
    run = subprocess.run(args, capture_output=True, text=True)
    report = run.stdout + run.stderr
    problems = [f"missing: {t}" for t in texts if t not in report]
    if run.returncode != (0 if want == "pass" else 1):
        problems.insert(0, f"wanted {want}, exit {run.returncode}")
    return problems, report


def main():
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, files, allowed, want, texts in CASES:
            problems, report = run_case(tmp, name, files, allowed, want, texts)
            if not problems:
                passed += 1
                print(f"ok {name}")
                continue
            failed += 1
            print(f"FAIL {name}: " + "; ".join(problems))
            print("".join(f"  | {line}\n" for line in report.splitlines()), end="")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
