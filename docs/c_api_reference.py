#!/usr/bin/env python3
"""The C API reference: one page per public header, in Markdown and HTML.

    python3 docs/c_api_reference.py --out build/docs/c-api HEADER.h...
    python3 docs/c_api_reference.py --check [--exported NAMES] HEADER.h...

Each page lists the header's declarations (functions, types, constants,
macros) in the header's order, under the header's own section headings,
each with the comment the header gives it. The comments are plain text laid
out by hand, so they are shown as written (preformatted).

How comments are read: a comment documents the declarations right under it,
those that follow it with no blank line in between, however many (the
headers document a group of related functions with one comment); the page
shows the group's declarations together, then the comment once. A comment
at the end of a declaration's line stays on that line. A section starts at a
comment whose first line is a rule of dashes or equals signs; its text is
the section's introduction, and its first phrase the section's title.

CRunLoopCFNames.h maps CoreFoundation's names onto this library's: its page
is a table, each CF name next to the RL names it stands for.

--check fails, naming them, if a function has no comment, or (with
--exported, a file of names one per line, such as `nm -D` of the built
library gives) if an exported name is missing from the headers.
Only the Python standard library is used (no doxygen needed).
"""

import argparse
import html
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
RL_NAME = r"\bk?RL[A-Za-z0-9_]+\b"


class Entry:
    """One declaration."""

    def __init__(self, kind, name, declaration, group, section, condition):
        self.kind = kind  # "function", "type", "constant", "macro"
        self.name = name
        self.declaration = declaration
        self.group = group  # index into Header.docs
        self.section = section  # index into Header.sections, or None
        self.condition = condition  # "C++", "with blocks (clang -fblocks)", ...


class Header:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        self.intro = ""
        self.sections = []  # (title, intro)
        self.docs = []  # one comment per group of declarations ("" for none)
        self.entries = []

    def functions(self):
        return [e for e in self.entries if e.kind == "function"]


# ---- reading a header ---------------------------------------------------------


def comment_text(raw):
    """The text of a comment, without its delimiters and leading ` * `."""
    body = raw[2:-2] if raw.startswith("/*") else raw[2:]
    lines = body.split("\n")
    starred = all(re.match(r"^\s*\*", l) for l in lines[1:] if l.strip())
    out = [re.sub(r"^\s*\* ?", "", l) if starred else l for l in lines]
    out = [l.rstrip() for l in out]
    if not starred:  # continuation lines are indented under the first line's text
        rest = [l for l in out[1:] if l.strip()]
        if rest:
            indent = min(len(l) - len(l.lstrip()) for l in rest)
            out = [out[0]] + [l[indent:] for l in out[1:]]
    out[0] = out[0].strip()
    while out and not out[0]:
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


def is_section_comment(raw):
    return re.match(r"/\*\s*(-{4,}|={4,})", raw) is not None


def section_of(raw):
    """(title, introduction) of a section comment."""
    lines = comment_text(raw).split("\n")
    lines[0] = re.sub(r"^[-=\s]+|[-=\s]+$", "", lines[0])
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and re.fullmatch(r"[-=\s]*", lines[-1]):
        lines.pop()
    if not lines:
        return "Declarations", ""
    first = lines[0].strip()
    title = re.split(r"[:.(]\s|[:.]$", first, maxsplit=1)[0].strip()
    title = title[:1].upper() + title[1:]
    body = lines if title != first else lines[1:]
    return title, "\n".join(body).strip("\n")


def tokens(source):
    """Yields (kind, text, raw) for each comment ("comment", or "trailing" at
    the end of a statement's line), preprocessor directive, blank line and
    statement ("code": text without comments; raw: the source with them)."""
    i, n = 0, len(source)
    code, start, depth = "", None, 0
    last_end_line_end = -1  # where the line of the last statement's end ends

    def line_end(k):
        e = source.find("\n", k)
        return n if e < 0 else e

    while i < n:
        c = source[i]
        if source.startswith("/*", i) or source.startswith("//", i):
            block = source.startswith("/*", i)
            end = source.index("*/", i) + 2 if block else line_end(i)
            raw = source[i:end] if block else "/*" + source[i + 2 : end] + "*/"
            if code.strip():
                code += " "
            elif i <= last_end_line_end:
                yield "trailing", raw, raw
            else:
                yield "comment", raw, raw
            i = end
            continue
        if c == "#" and not code.strip():
            end = line_end(i)
            while source[end - 1] == "\\" and end < n:
                end = line_end(end + 1)
            yield "directive", source[i:end], source[i:end]
            i = end
            continue
        if c == "\n" and not code.strip():
            j = i + 1
            while j < n and source[j] in " \t":
                j += 1
            if j < n and source[j] == "\n":
                yield "blank", "", ""
            code = ""
            i += 1
            continue
        if not code.strip():
            code, start = "", i
        code += c
        finished = False
        if c == "{" and re.fullmatch(r'extern\s*"C"\s*\{', code.strip()):
            code = ""  # the linkage block is no scope here
        elif c == "}" and depth == 0:
            code = ""  # the linkage block's end
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            finished = depth == 0 and re.search(r"\)\s*\{", code) is not None and not code.lstrip().startswith(
                ("typedef", "extern"))
        elif c == ";" and depth == 0:
            finished = True
        if finished:
            yield "code", code.strip(), source[start : i + 1]
            code = ""
            last_end_line_end = line_end(i)
        i += 1


def trailing_of(source, raw):
    """The comment at the end of a statement's last line, if any."""
    at = source.find(raw)
    if at < 0:
        return ""
    end = source.find("\n", at + len(raw))
    m = re.match(r"\s*/\*(.*?)\*/\s*$", source[at + len(raw) : end if end >= 0 else len(source)])
    return m.group(1).strip() if m else ""


def function_signature(code):
    """A function's declaration on one line, without its body."""
    head = code.split("{", 1)[0] if re.search(r"\)\s*\{", code) else code
    return re.sub(r"\s+", " ", head).strip().rstrip(";") + ";"


def classify(code):
    """(kind, name) of a statement, or None for what is not listed."""
    flat = re.sub(r"\s+", " ", code)
    if flat.startswith("typedef"):
        if "{" in flat:  # a struct or enum: its name follows the closing brace
            m = re.search(r"\}\s*(" + IDENT + r")\s*;\s*$", flat)
        else:
            m = re.search(r"\(\s*\*\s*(" + IDENT + r")\s*\)\s*\(", flat) or re.search(
                r"(" + IDENT + r")\s*;\s*$", flat)
        return ("type", m.group(1)) if m else None
    if flat.startswith("extern"):
        m = re.search(r"(" + IDENT + r")\s*(\[[^\]]*\])?\s*;\s*$", flat)
        return ("constant", m.group(1)) if m else None
    m = re.match(r"^[^()]*?(" + IDENT + r")\s*\(", flat)
    if m and m.group(1) not in ("if", "while", "for", "return", "sizeof"):
        return "function", m.group(1)
    return None


def condition_label(directive, conditions):
    d = re.sub(r"\s+", " ", directive.replace("\\\n", " ")).strip()
    if re.match(r"#\s*if", d):
        label = None
        if "__BLOCKS__" in d:
            label = "with blocks (clang -fblocks)"
        elif re.match(r"#\s*ifdef __cplusplus", d):
            label = "C++"
        conditions.append(label)
    elif re.match(r"#\s*else", d) and conditions:
        conditions[-1] = "C" if conditions[-1] == "C++" else None
    elif re.match(r"#\s*endif", d) and conditions:
        conditions.pop()
    else:
        return d
    return None


def parse(path):
    header = Header(path)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    section = None
    group = None  # the group new declarations join; None: each its own
    conditions = []  # one per #if level: a label or None
    previous = None
    for kind, text, raw in tokens(source):
        was, previous = previous, kind
        if kind == "trailing":
            continue
        if kind == "blank":
            group = None
            continue
        if kind == "comment":
            if not header.intro and not header.entries and not header.sections:
                header.intro = comment_text(text)
            elif is_section_comment(text):
                header.sections.append(section_of(text))
                section, group = len(header.sections) - 1, None
            elif was == "comment" and group is not None:
                header.docs[group] += "\n\n" + comment_text(text)  # one comment in two blocks
            else:
                header.docs.append(comment_text(text))
                group = len(header.docs) - 1
            continue
        label = None
        if kind == "directive":
            directive = condition_label(text, conditions)
            m = re.match(r"#\s*define (" + IDENT + r")(\([^)]*\))?", directive or "")
            if not m or m.group(1).endswith("_H"):
                continue
            label = ("macro", m.group(1))
            declaration = re.sub(r"\\\n\s*", "", raw).strip()
            declaration = re.sub(r"\s{2,}", " ", declaration) if "\n" not in declaration else declaration
        else:
            label = classify(text)
            if label is None:
                group = None
                continue
            if label[0] == "function":
                declaration = function_signature(text)
                note = trailing_of(source, raw)
                if note:
                    declaration += " /* " + note + " */"
            else:
                declaration = raw.strip()
                note = trailing_of(source, raw)
                if note:
                    declaration += " /* " + note + " */"
        if group is None:
            header.docs.append("")
            group = len(header.docs) - 1
        labels = [c for c in conditions if c]
        header.entries.append(Entry(label[0], label[1], declaration, group, section, labels[-1] if labels else None))
    return header


# ---- pages --------------------------------------------------------------------

KNOWN = {}  # RL name -> (the header documenting it, the anchor there), for links


def is_cf_names(header):
    return header.name == "CRunLoopCFNames.h"


def cf_rows(header):
    """One row per CF name: kinds, the RL names it stands for, its notes."""
    with open(header.path, encoding="utf-8") as f:
        source = f.read()
    bodies = {}
    for kind, text, raw in tokens(source):
        found = classify(text) if kind == "code" else None
        if found:
            bodies[found[1]] = bodies.get(found[1], "") + raw
    rows = {}
    for e in header.entries:
        if not re.match(r"^(k?CF|Boolean|[SU]Int\d+$|TRUE$|FALSE$)", e.name):
            continue
        row = rows.setdefault(e.name, {"kinds": [], "targets": [], "notes": [], "conditions": []})
        row["kinds"].append({"macro": "macro", "function": "inline function", "type": "typedef"}[e.kind])
        text = bodies.get(e.name, "") if e.kind == "function" else e.declaration
        text = re.sub(r"\b%s\b" % e.name, "", text)
        for t in re.findall(RL_NAME, re.sub(r"/\*.*?\*/", "", text)):
            if t in KNOWN and t not in row["targets"]:
                row["targets"].append(t)
        note = own_doc(header, e) or (re.search(r"/\* (.*) \*/$", e.declaration) or [None, ""])[1]
        if note and note not in row["notes"]:
            row["notes"].append(note)
        if e.condition and e.condition not in row["conditions"]:
            row["conditions"].append(e.condition)
    return rows


def own_doc(header, entry):
    """The comment right above the entry (a group's comment goes to its first name)."""
    first = next(e for e in header.entries if e.group == entry.group)
    return header.docs[entry.group] if first.name == entry.name else ""


def groups_of(header, entries):
    """Consecutive runs of entries sharing a comment."""
    runs = []
    for e in entries:
        if runs and runs[-1][0].group == e.group:
            runs[-1].append(e)
        else:
            runs.append([e])
    return runs


def sections_of(header):
    """(title, intro, entries) per section, in the header's order."""
    out = []
    leading = [e for e in header.entries if e.section is None]
    if leading:
        out.append(("Basics", "", leading))
    for index, (title, intro) in enumerate(header.sections):
        entries = [e for e in header.entries if e.section == index]
        if entries or intro:
            out.append((title, intro, entries))
    return out


def fenced(text, language="text"):
    return ["```" + language, text, "```", ""]


def write_markdown(header, out):
    lines = ["# " + header.name, "", "[All headers](index.md)", ""] + fenced(header.intro)
    if is_cf_names(header):
        lines += ["## CoreFoundation names", "", "| CF name | is | stands for | notes |", "|---|---|---|---|"]
        for name, row in cf_rows(header).items():
            targets = ", ".join("[`%s`](%s.md#%s)" % (t, KNOWN[t][0], KNOWN[t][1]) for t in row["targets"])
            note = " ".join(row["notes"]).replace("\n", " ").replace("|", "\\|")
            cond = " (%s)" % ", ".join(row["conditions"]) if row["conditions"] else ""
            lines.append("| `%s` | %s%s | %s | %s |" % (name, " and ".join(dict.fromkeys(row["kinds"])), cond,
                                                      targets, note))
    else:
        sections = sections_of(header)
        lines += ["## Contents", ""]
        for title, _, entries in sections:
            names = ", ".join("[`%s`](#%s)" % (e.name, e.name.lower()) for e in entries if e.kind == "function")
            lines.append("- [%s](#%s)%s" % (title, slug(title), ": " + names if names else ""))
        lines.append("")
        for title, intro, entries in sections:
            lines += ["## " + title, ""]
            if intro:
                lines += fenced(intro)
            for run in groups_of(header, entries):
                for e in run:
                    lines.append('<a id="%s"></a>' % e.name.lower())
                names = ", ".join("`%s`" % e.name for e in run)
                conds = sorted({e.condition for e in run if e.condition})
                lines += ["", "#### " + names + (" (%s)" % ", ".join(conds) if conds else ""), ""]
                lines += fenced("\n".join(e.declaration for e in run), "c")
                if header.docs[run[0].group]:
                    lines += fenced(header.docs[run[0].group])
    with open(os.path.join(out, header.name + ".md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines).rstrip() + "\n")


def slug(title):
    return re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")


STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 62rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
pre { background: #f6f6f6; padding: .6rem .8rem; overflow-x: auto; font-size: 13px; line-height: 1.4; }
pre.decl { background: #eef3fb; }
h4 { margin: 1.4rem 0 .2rem; font-family: ui-monospace, monospace; font-size: 14px; }
table { border-collapse: collapse; font-size: 14px; }
td, th { border: 1px solid #ddd; padding: .2rem .5rem; vertical-align: top; text-align: left; }
code { font-family: ui-monospace, monospace; }
.cond { color: #777; font-weight: normal; }
"""


def page_start(title):
    return ['<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>%s</title><style>%s</style></head><body>'
            % (html.escape(title), STYLE)]


def linked(text, here):
    """Escaped text whose RL names link to their entries."""

    def link(m):
        name = m.group(0)
        if name not in KNOWN:
            return name
        page, target = KNOWN[name]
        return '<a href="%s#%s">%s</a>' % ("" if page == here else page + ".html", target, name)

    return re.sub(RL_NAME, link, html.escape(text))


def write_html(header, out):
    here = header.name
    parts = page_start(header.name)
    parts.append('<p><a href="index.html">All headers</a></p><h1>%s</h1>' % html.escape(header.name))
    parts.append("<pre>%s</pre>" % linked(header.intro, here))
    if is_cf_names(header):
        parts.append("<h2>CoreFoundation names</h2><table><tr><th>CF name</th><th>is</th><th>stands for</th>"
                     "<th>notes</th></tr>")
        for name, row in cf_rows(header).items():
            cond = ' <span class="cond">(%s)</span>' % html.escape(", ".join(row["conditions"])) if row[
                "conditions"] else ""
            parts.append("<tr><td><code>%s</code></td><td>%s%s</td><td><code>%s</code></td><td>%s</td></tr>"
                         % (name, " and ".join(dict.fromkeys(row["kinds"])), cond,
                            ", ".join(linked(t, here) for t in row["targets"]),
                            html.escape(" ".join(row["notes"]))))
        parts.append("</table>")
    else:
        sections = sections_of(header)
        parts.append("<h2>Contents</h2><ul>")
        for title, _, entries in sections:
            names = ", ".join('<a href="#%s"><code>%s</code></a>' % (e.name.lower(), e.name)
                              for e in entries if e.kind == "function")
            parts.append('<li><a href="#%s">%s</a>%s</li>' % (slug(title), html.escape(title),
                                                              ": " + names if names else ""))
        parts.append("</ul>")
        for title, intro, entries in sections:
            parts.append('<h2 id="%s">%s</h2>' % (slug(title), html.escape(title)))
            if intro:
                parts.append("<pre>%s</pre>" % linked(intro, here))
            for run in groups_of(header, entries):
                conds = sorted({e.condition for e in run if e.condition})
                cond = ' <span class="cond">(%s)</span>' % html.escape(", ".join(conds)) if conds else ""
                names = ", ".join('<span id="%s">%s</span>' % (e.name.lower(), html.escape(e.name)) for e in run)
                parts.append("<h4>%s%s</h4>" % (names, cond))
                parts.append('<pre class="decl">%s</pre>' % linked("\n".join(e.declaration for e in run), here))
                if header.docs[run[0].group]:
                    parts.append("<pre>%s</pre>" % linked(header.docs[run[0].group], here))
    parts.append("</body></html>")
    with open(os.path.join(out, header.name + ".html"), "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")


def summary(text):
    return re.sub(r"\s+", " ", text.split("\n\n", 1)[0]).strip()


def write_index(headers, out):
    md = ["# C API reference", "",
          "Generated from the public headers by `docs/c_api_reference.py` (`make docs`): each page lists a",
          "header's declarations with the comments the header gives them.", "",
          "| header | functions | what |", "|---|---|---|"]
    parts = page_start("C API reference")
    parts.append("<h1>C API reference</h1><p>Generated from the public headers by "
                 "<code>docs/c_api_reference.py</code> (<code>make docs</code>): each page lists a header's "
                 "declarations with the comments the header gives them.</p>"
                 "<table><tr><th>header</th><th>functions</th><th>what</th></tr>")
    for h in headers:
        count = len(cf_rows(h)) if is_cf_names(h) else len(h.functions())
        what = summary(h.intro)
        md.append("| [%s](%s.md) | %d | %s |" % (h.name, h.name, count, what.replace("|", "\\|")))
        parts.append('<tr><td><a href="%s.html">%s</a></td><td>%d</td><td>%s</td></tr>'
                     % (h.name, h.name, count, html.escape(what)))
    parts.append("</table></body></html>")
    with open(os.path.join(out, "index.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("headers", nargs="+")
    parser.add_argument("--out", help="the folder to write the pages to")
    parser.add_argument("--check", action="store_true", help="fail if a function has no comment")
    parser.add_argument("--exported", help="a file of exported names that the headers must declare")
    args = parser.parse_args()
    headers = [parse(p) for p in args.headers]
    for h in headers:
        if not is_cf_names(h):
            for e in h.entries:
                KNOWN.setdefault(e.name, (h.name, e.name.lower()))
                if e.kind == "type" and re.search(r"\benum\b", e.declaration):
                    for member in re.findall(r"\b(k?RL[A-Za-z0-9_]+)\s*=", e.declaration):
                        KNOWN.setdefault(member, (h.name, e.name.lower()))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        for h in headers:
            write_markdown(h, args.out)
            write_html(h, args.out)
        write_index(headers, args.out)
        total = sum(len(h.functions()) for h in headers if not is_cf_names(h))
        print("c-api-reference: %d headers, %d functions: %s/index.html (and index.md)" % (len(headers), total,
                                                                                         args.out))
    if not args.check:
        return 0
    problems = ["%s: %s has no comment" % (h.name, e.name) for h in headers if not is_cf_names(h)
                for e in h.functions() if not h.docs[e.group].strip()]
    if args.exported:
        with open(args.exported, encoding="utf-8") as f:
            exported = {l.strip() for l in f if l.strip()}
        problems += ["%s is exported but no header declares it" % name for name in sorted(exported - set(KNOWN))]
    for problem in problems:
        print("c-api-reference: " + problem)
    if problems:
        print("c-api-reference: FAILED: %d problems" % len(problems))
        return 1
    print("c-api-reference: every function of %d headers has a comment%s" % (
        len(headers), ", every exported name is declared" if args.exported else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
