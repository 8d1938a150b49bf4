#!/usr/bin/env python3
"""check_docs.py -- the user docs say what leaderd does (make docs-check).

    check_docs.py [--root DIR] [--leaderd BIN]
    check_docs.py --self-test [--root DIR] [--leaderd BIN]

Reads README.md, CHANGELOG.md, SECURITY.md, docs/*.md and docs/man/*
under DIR (the checkout by default) and checks, without network, in a
few seconds:

  run       every fenced block marked with a line
            `<!-- docs-check: run -->` just above it: each `$ COMMAND`
            line runs with sh in an empty directory, `leaderd` being
            BIN, and what it prints (stdout and stderr) must be the lines
            that follow it; a line `...` stands for any number of lines.
  defaults  every default quoted in a table whose columns start
            `| key | default |`, and every `Default:` of leaderd.yaml(5),
            that is a literal value: it must be what `leaderd -n -v`
            prints for that key.
  logs      every backquoted text in the block (a table, or a paragraph
            or list item) under a line `<!-- docs-check: logs -->`, that
            has a space in it: it must match a string of the C sources
            (lib/, cmd/), a format's conversions standing for values.
            In the quote, `...` stands for anything; a value written in
            capitals (NS/NAME, ID, N) stands for a conversion.
  links     every relative link's file exists and its #anchor is a
            heading of that file; every `FILE.md, "Section"` or
            `"Section" in FILE` names a heading of FILE.
  deploy    the map of deploy/ in DEPLOYING.md's "Layout" names every
            directory under deploy/.
  man       the man pages pass `mandoc -T lint -W warning`, and a page
            for a file (its name has a dot: leaderd.yaml(5)) never uses
            a bare `.Nm`, which would render the file's name as the one
            who acts ("leaderd.yaml exits 0").

Every problem is printed as FILE:LINE: what is wrong; the exit status is
1 if there was one.  --self-test runs the check on the tree, then plants
a wrong default, a broken link, a wrong log line, a bare .Nm, a
directory missing from the map and a wrong example output, each in a
copy of the docs, and fails unless each copy is refused.
"""

import argparse
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile

RUN_MARK = "<!-- docs-check: run -->"
OUTPUT_MARK = re.compile(r"^<!-- docs-check: output of (.+) -->$")
LOGS_MARK = "<!-- docs-check: logs -->"


class Problems:
    def __init__(self):
        self.items = []

    def add(self, path, line, msg, root):
        self.items.append("%s:%d: %s" % (os.path.relpath(path, root), line,
                                          msg))


def md_files(root):
    out = [os.path.join(root, f) for f in ("README.md", "CHANGELOG.md",
                                           "SECURITY.md")]
    d = os.path.join(root, "docs")
    out += sorted(os.path.join(d, f) for f in os.listdir(d)
                  if f.endswith(".md"))
    return [p for p in out if os.path.exists(p)]


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")


# -- run: the marked examples ---------------------------------------------

def fenced_after(lines, i):
    """The fenced block starting at or after line i (skipping blank
    lines): (first line index, lines of the body without the fence's
    indentation), or None."""
    j = i
    while j < len(lines) and lines[j].strip() == "":
        j += 1
    if j >= len(lines) or not lines[j].lstrip().startswith("```"):
        return None
    ind = len(lines[j]) - len(lines[j].lstrip())
    body = []
    k = j + 1
    while k < len(lines) and not lines[k].lstrip().startswith("```"):
        body.append(lines[k][ind:] if lines[k][:ind].strip() == "" else
                    lines[k])
        k += 1
    return j, body


def output_matches(want, got):
    """want's lines against got's, a "..." line matching any run."""
    @functools.lru_cache(maxsize=None)
    def m(i, j):
        if i == len(want):
            return j == len(got)
        if want[i] == "...":
            return m(i + 1, j) or (j < len(got) and m(i, j + 1))
        return j < len(got) and want[i] == got[j] and m(i + 1, j + 1)
    return m(0, 0)


def clean_env(bindir):
    env = {"PATH": bindir + os.pathsep + "/usr/local/bin:/usr/bin:/bin",
           "LC_ALL": "C", "TZ": "UTC", "LEADERD_SA_DIR": "/nonexistent"}
    return env


def check_runs(root, leaderd, probs):
    ran = 0
    with tempfile.TemporaryDirectory(prefix="docs-check.") as tmp:
        bindir = os.path.join(tmp, "bin")
        os.mkdir(bindir)
        os.symlink(os.path.abspath(leaderd), os.path.join(bindir, "leaderd"))
        work = os.path.join(tmp, "work")
        os.mkdir(work)
        for path in md_files(root):
            lines = read_lines(path)
            for i, ln in enumerate(lines):
                if ln.strip() != RUN_MARK:
                    continue
                blk = fenced_after(lines, i + 1)
                if blk is None:
                    probs.add(path, i + 1, "%s with no fenced block below "
                              "it" % RUN_MARK, root)
                    continue
                start, body = blk
                cmds = []       # (line number, command, expected lines)
                for k, b in enumerate(body):
                    if b.startswith("$ "):
                        cmds.append((start + 2 + k, b[2:], []))
                    elif cmds and cmds[-1][1].endswith("\\") and \
                            not cmds[-1][2]:
                        n, c, w = cmds[-1]
                        cmds[-1] = (n, c + "\n" + b, w)
                    elif cmds:
                        cmds[-1][2].append(b)
                    else:
                        probs.add(path, start + 2 + k, "output before any "
                                  "`$ COMMAND` line", root)
                for n, cmd, want in cmds:
                    while want and want[-1] == "":
                        want.pop()
                    try:
                        p = subprocess.run(["sh", "-c", cmd], cwd=work,
                                           env=clean_env(bindir),
                                           stdin=subprocess.DEVNULL,
                                           stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT,
                                           timeout=20)
                        got = p.stdout.decode(errors="replace")
                    except subprocess.TimeoutExpired:
                        got = "(timed out after 20 s)"
                    ran += 1
                    got_lines = got.rstrip("\n").split("\n") if got else []
                    if not output_matches(want, got_lines):
                        probs.add(path, n, "`%s` prints\n%s\n  but the page "
                                  "shows\n%s" % (cmd, indent(got_lines),
                                                 indent(want)), root)
        # A table or block that a command of the tree prints.
        for path in md_files(root):
            lines = read_lines(path)
            for i, ln in enumerate(lines):
                m = OUTPUT_MARK.match(ln.strip())
                if not m:
                    continue
                want, j = [], i + 1
                while j < len(lines) and lines[j].strip() != "":
                    want.append(lines[j])
                    j += 1
                env = clean_env(bindir)
                env["LEADERD"] = os.path.join(bindir, "leaderd")
                p = subprocess.run(["sh", "-c", m.group(1)], cwd=root,
                                   env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=60)
                ran += 1
                got = p.stdout.decode(errors="replace").rstrip("\n")
                if p.returncode != 0 or got.split("\n") != want:
                    probs.add(path, i + 2, "`%s` prints\n%s\n  but the "
                              "page shows\n%s" % (m.group(1),
                                                   indent(got.split("\n")),
                                                   indent(want)), root)
    return ran


def indent(lines):
    return "\n".join("    | " + x for x in lines) if lines else "    (nothing)"


# -- defaults --------------------------------------------------------------

def dump_values(leaderd, extra_yaml=None):
    """`leaderd -n -v --election x` as {dotted key: (value, origin)}."""
    args = [leaderd, "-n", "-v"]
    if extra_yaml is None:
        args += ["--election", "x"]
    with tempfile.TemporaryDirectory(prefix="docs-check.") as tmp:
        if extra_yaml is not None:
            f = os.path.join(tmp, "c.yaml")
            with open(f, "w") as fh:
                fh.write(extra_yaml)
            args += ["-f", f]
        p = subprocess.run(args, env=clean_env(tmp), cwd=tmp,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=10)
    if p.returncode != 0:
        raise SystemExit("docs-check: %s failed (%d): %s" % (
            " ".join(args), p.returncode, p.stderr.decode(errors="replace")))
    out, stack = {}, []
    for ln in p.stdout.decode().split("\n"):
        m = re.match(r"^( *)([A-Za-z_]+):(?: (.*))?$", ln)
        if not m:
            continue
        depth = len(m.group(1)) // 2
        stack = stack[:depth] + [m.group(2)]
        if m.group(3) is None:
            continue
        val, _, origin = m.group(3).partition("  # ")
        out[".".join(stack)] = (val.strip(), origin.strip())
    return out


DUR = re.compile(r"^(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+$")
DUR_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
DUR_UNIT = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1, "s": 1000,
            "m": 60000, "h": 3600000}


def norm(v):
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        v = v[1:-1]
    if DUR.match(v):
        return ("dur", round(sum(float(n) * DUR_UNIT[u]
                                 for n, u in DUR_PART.findall(v)), 3))
    return ("str", v)


def literal_default(cell, keys):
    """The literal value a table cell quotes as a default, or None when
    the default is not a literal (an environment variable, another key,
    prose)."""
    m = re.match(r"^`([^`]*)`", cell.strip())
    if not m:
        return None
    v = m.group(1)
    if v.startswith("$") or v in keys or v.split(".")[0] in (
            "lock", "listen", "kubernetes", "candidacy"):
        return None
    return v


def check_value(path, n, key, doc, dump, probs, root):
    if key not in dump:
        probs.add(path, n, "default quoted for `%s`, which `leaderd -n -v` "
                  "does not print" % key, root)
        return 0
    val, origin = dump[key]
    if origin and origin != "--election":
        return 0        # set by the environment or the check's own file
    if norm(doc) != norm(val):
        probs.add(path, n, "the default of `%s` is quoted as `%s`; "
                  "`leaderd -n -v` prints `%s`" % (key, doc, val), root)
    return 1


def check_defaults(root, leaderd, probs):
    dump = dump_values(leaderd)
    shards = dump_values(leaderd, "shards:\n  group: g\n  count: 2\n")
    for k, v in shards.items():
        if k.startswith("shards."):
            dump[k] = v
    checked = 0
    for path in md_files(root):
        lines = read_lines(path)
        in_table = False
        for i, ln in enumerate(lines):
            cells = [c.strip() for c in ln.strip().strip("|").split("|")]
            if not ln.startswith("|"):
                in_table = False
                continue
            if len(cells) >= 2 and cells[0] == "key" and \
                    cells[1] == "default":
                in_table = True
                continue
            if not in_table or set(cells[0]) <= set("-: "):
                continue
            m = re.match(r"^`([a-z_.]+)`$", cells[0])
            if not m:
                continue
            doc = literal_default(cells[1], dump)
            if doc is not None:
                checked += check_value(path, i + 1, m.group(1), doc, dump,
                                       probs, root)
    man = os.path.join(root, "docs", "man", "leaderd.yaml.5")
    if os.path.exists(man):
        lines = read_lines(man)
        key = None
        for i, ln in enumerate(lines):
            m = re.match(r"^\.It Cm ([a-z_.]+)", ln)
            if m:
                key = m.group(1)
                continue
            if not ln.startswith("Default:") or key is None:
                continue
            rest = ln[len("Default:"):].strip()
            if rest:
                v = re.split(r"[ ,;]", rest.rstrip("."))[0].rstrip(".")
            elif i + 1 < len(lines) and lines[i + 1].startswith(".Li "):
                v = lines[i + 1][4:].split(" ")[0].replace("\\(dq", '"')
            else:
                continue
            if v == "empty":
                v = '""'
            if not v or not re.match(r'^[0-9a-zA-Z"]', v) or v in dump or \
                    (v == "none" and dump.get(key, ("",))[0] != "none"):
                continue
            checked += check_value(man, i + 1, key, v, dump, probs, root)
    return checked


# -- logs: quoted lines against the sources' strings --------------------

STR_LIT = r'"(?:[^"\\\n]|\\.)*"'
LITS = re.compile(STR_LIT + r'(?:\s*' + STR_LIT + r')*')
CONV = re.compile(r"%[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?"
                  r"(?:hh|h|ll|l|z|j|t|L)?([diouxXeEfgGcsp%])")


def unescape(lit):
    parts = re.findall(STR_LIT, lit)
    s = "".join(p[1:-1] for p in parts)
    return re.sub(r'\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)', lambda m: {
        "n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}.get(
            m.group(1), "?" if len(m.group(1)) > 1 else m.group(1)), s)


def strip_comments(text):
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            out.append("\n" * text.count("\n", i, j))
            i = j + 2 if j >= 0 else n
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = j if j >= 0 else n
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_args(s):
    """The top-level comma-separated arguments of s (up to its ')')."""
    args, depth, cur, i = [], 0, [], 0
    while i < len(s):
        c = s[i]
        if c == '"':
            m = re.match(STR_LIT, s[i:])
            cur.append(m.group(0))
            i += len(m.group(0))
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif c == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    args.append("".join(cur).strip())
    return args


def conv_arg_count(fmt):
    """For each conversion of fmt, the index of its argument."""
    idx, out = 0, []
    for m in CONV.finditer(fmt):
        if m.group(1) == "%":
            continue
        idx += m.group(0).count("*")
        out.append((m, idx))
        idx += 1
    return out


def source_formats(root):
    """Every string of the C sources, as a format.  A format written into
    a local buffer by snprintf and then passed as the argument of a %s
    in the same function is expanded there (api_error: "lease %s: API
    error: %s" with "%ld %s: %s" or "%s: %s"), and the unexpanded form
    dropped, so a quote must match what is really printed."""
    fmts = set()
    for top in ("lib", "cmd"):
        for dp, _, fs in os.walk(os.path.join(root, top)):
            for f in fs:
                if not f.endswith((".c", ".h")):
                    continue
                with open(os.path.join(dp, f), encoding="utf-8",
                          errors="replace") as fh:
                    text = strip_comments(fh.read())
                for body in re.split(r"\n}\n", text):
                    fmts |= function_formats(body)
    # What the example apps of deploy/ print (the pod's other side).
    for dp, _, fs in os.walk(os.path.join(root, "deploy")):
        for f in fs:
            if f.endswith(".yaml"):
                with open(os.path.join(dp, f), encoding="utf-8") as fh:
                    fmts |= {ln.strip() for ln in fh
                             if re.search(r"(echo|print)\b", ln)}
    return sorted(fmts)


def function_formats(body):
    local = {}
    for m in re.finditer(r"\bsnprintf\(\s*(\w+)\s*,\s*sizeof\s*\(?\s*\w+"
                         r"\s*\)?\s*,\s*(" + LITS.pattern + ")", body):
        if re.search(r"\bchar\s+[^;]*\b" + m.group(1) + r"\s*\[", body):
            local.setdefault(m.group(1), []).append(unescape(m.group(2)))
    out, dropped = set(), set()
    for m in LITS.finditer(body):
        out.add(unescape(m.group(0)))
    for m in re.finditer(r"\b(?:log_\w+|fatalx?|fprintf\(\s*stderr\s*,|"
                         r"snprintf\(\s*\w+\s*,[^,]+,)\s*\(?\s*(" +
                         LITS.pattern + r")\s*,", body):
        fmt = unescape(m.group(1))
        args = split_args(body[m.end():])
        # Each %s whose argument is known: a local buffer written by
        # snprintf, or a choice between strings (c ? "a" : "b").
        forms = [fmt]
        for cm, ai in reversed(conv_arg_count(fmt)):
            if cm.group(1) != "s" or ai >= len(args):
                continue
            alts = local.get(args[ai])
            t = re.match(r"^[^?\"]*\?\s*(" + STR_LIT + r")\s*:\s*(" +
                         STR_LIT + r")$", args[ai], re.S)
            if t:
                alts = [unescape(t.group(1)), unescape(t.group(2))]
            if not alts or len(forms) * len(alts) > 64:
                continue
            forms = [x[:cm.start()] + a + x[cm.end():] for x in forms
                     for a in alts]
        if len(forms) > 1:
            dropped.add(fmt)
            out |= set(forms)
    return {f for f in out - dropped if re.search(r"[A-Za-z]{2}", f)}


WILD = object()


def doc_items(text):
    items, i = [], 0
    while i < len(text):
        if text.startswith("...", i):
            items.append(WILD)
            i += 3
        elif text[i] == "\u2026":
            items.append(WILD)
            i += 1
        else:
            items.append(text[i])
            i += 1
    return items


def fmt_items(fmt):
    items, pos = [], 0
    fmt = fmt.rstrip("\n")
    convs = [m for m in CONV.finditer(fmt)]
    for m in convs:
        items.extend(fmt[pos:m.start()])
        if m.group(1) == "%":
            items.append("%")
        else:
            items.append(("conv", m.group(1)))
        pos = m.end()
    items.extend(fmt[pos:])
    return items


class Matcher:
    """Whether a quoted line is something leaderd prints: it must match a
    stretch of one of the sources' formats, starting at the format's
    start or at its literal text.  A conversion takes a value: a number
    for %d; for %s a placeholder or any token that is not a bare
    lowercase word, capitalised words (403 Forbidden), a whole string of
    the sources (a reason passed in), or a text that itself matches a
    format from its start (a message built by another format)."""

    def __init__(self, fmts):
        self.fmts = fmts
        self.phrases = set(fmts)
        self.memo = {}

    def candidates(self, text):
        words = re.findall(r"\b[a-z]{4,}\b", text)
        return [f for f in self.fmts if not words or
                any(w in f for w in words)]

    def composed(self, text):
        """text matches a format from its start."""
        if text not in self.memo:
            self.memo[text] = False
            words = sorted(re.findall(r"\b[a-z]{4,}\b", text), key=len)
            if words:
                self.memo[text] = any(self.matches(text, f, anchored=True)
                                      for f in self.fmts if words[-1] in f)
        return self.memo[text]

    def part_ok(self, p):
        if p in ("", "\u2026") or (" " in p and p in self.phrases):
            return True
        if " " not in p:
            return not re.match(r"^[a-z]+$", p)
        # Capitalised words (403 Forbidden), a system error's text
        # (Connection refused), or words around a placeholder
        # (lease NS/NAME), with "..." anywhere.
        if re.search(r"\b[A-Z][A-Z0-9_]*/[A-Z]", p) and \
                all(re.match(r"^([a-z]+|[A-Z][A-Z0-9_/]*|\u2026)$", w)
                    for w in p.split(" ")):
            return True
        return bool(re.match(r"^([A-Z0-9][\w/.:\-]*|\u2026)"
                             r"( ([A-Z0-9][\w/.:\-]*|\u2026))*$", p) or
                    re.match(r"^[A-Z][a-z]+( ([a-z]+|\u2026))*\u2026?$", p))

    def value_ok(self, frag, kind, last):
        text = "".join("\u2026" if x is WILD else x for x in frag)
        if kind in "diouxX":
            return bool(re.match(r"^(-?\d+|[A-Z][A-Z_]*|)$",
                                 text.replace("\u2026", "")))
        if (" " in text and text in self.phrases) or \
                all(self.part_ok(p) for p in text.split(": ")):
            return True
        # A message built by another format, as the line's last value.
        return last and self.composed(text)

    def matches(self, doc, fmt, anchored=False):
        d, s = doc_items(doc), fmt_items(fmt)

        @functools.lru_cache(maxsize=None)
        def f(i, j):
            if j == len(d):
                return True
            if d[j] is WILD:
                return any(f(k, j + 1) for k in range(i, len(s) + 1))
            if i == len(s):
                return False
            x = s[i]
            if isinstance(x, str):
                return x == d[j] and f(i + 1, j + 1)
            # A value is never the whole quote: some text must match.
            return any(self.value_ok(tuple(d[j:k]), x[1], k == len(d)) and
                       f(i + 1, k) for k in range(j, len(d) + 1)
                       if j > 0 or k < len(d))
        starts = [0] if anchored else [0] + [
            i for i in range(1, len(s)) if isinstance(s[i], str)]
        return any(f(i, 0) for i in starts)

    def known(self, doc):
        return any(self.matches(doc, f) for f in self.candidates(doc))


def marked_blocks(lines, mark):
    """(line number, text) of each block under mark: a table, or the
    paragraph or list item up to the next blank line or list item."""
    for i, ln in enumerate(lines):
        if ln.strip() != mark:
            continue
        j = i + 1
        while j < len(lines) and lines[j].strip() == "":
            j += 1
        table = lines[j].startswith("|") if j < len(lines) else False
        first = j
        while j < len(lines) and lines[j].strip() != "" and (
                not table or lines[j].startswith("|")) and (
                j == first or table or not re.match(r"^\s*[-*] ", lines[j])):
            yield j + 1, lines[j], table
            j += 1


def check_logs(root, probs):
    matcher = Matcher(source_formats(root))
    checked = 0
    for path in md_files(root):
        lines = read_lines(path)
        pending = []        # a span may cross lines in a paragraph
        for n, ln, table in marked_blocks(lines, LOGS_MARK):
            if table:
                cells = ln.strip().strip("|").split("|")
                if set(cells[0].strip()) <= set("-: ") or \
                        cells[0].strip() == "you see":
                    continue
                spans = [(n, s) for s in re.findall(r"`([^`]+)`", cells[0])]
            else:
                pending.append((n, ln.strip()))
                text = " ".join(x for _, x in pending)
                if text.count("`") % 2:
                    continue
                spans = [(pending[0][0], s) for s in
                         re.findall(r"`([^`]+)`", text)]
                pending = []
            for n0, span in spans:
                if " " not in span:
                    continue
                checked += 1
                if not matcher.known(span):
                    probs.add(path, n0, "`%s` matches no string of the "
                              "sources (lib/, cmd/): leaderd never prints "
                              "it" % span, root)
    return checked


# -- links and section references ------------------------------------------

def slug(heading):
    s = heading.strip().lower()
    s = s.replace("`", "")
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


@functools.lru_cache(maxsize=None)
def headings(path):
    out, fence = {}, False
    for ln in read_lines(path):
        if ln.lstrip().startswith("```"):
            fence = not fence
            continue
        m = re.match(r"^#{1,6} (.+?)\s*#*$", ln)
        if m and not fence:
            title = m.group(1)
            out[title] = slug(title)
    return out


def check_links(root, probs):
    checked = 0
    for path in md_files(root):
        base = os.path.dirname(path)
        fence = False
        for n, ln in enumerate(read_lines(path), 1):
            if ln.lstrip().startswith("```"):
                fence = not fence
            if fence or ln.startswith("    "):
                continue
            for text, target in re.findall(r"\[([^\]]+)\]\(([^)\s]+)\)", ln):
                if re.match(r"^[a-z]+:", target):
                    continue
                checked += 1
                file, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(base, file)) if file \
                    else path
                if not os.path.exists(dest):
                    probs.add(path, n, "link to %s: no such file" % target,
                              root)
                    continue
                if anchor and dest.endswith(".md") and \
                        anchor not in headings(dest).values():
                    probs.add(path, n, "link to %s: %s has no heading "
                              "with that anchor" % (target,
                                                    os.path.relpath(dest,
                                                                    root)),
                              root)
                m = re.match(r'^([\w.]+\.md), "([^"]+)"$', text)
                if m and dest.endswith(".md") and \
                        m.group(2) not in headings(dest):
                    probs.add(path, n, "link text names the section "
                              "\"%s\", which %s does not have" % (
                                  m.group(2), os.path.relpath(dest, root)),
                              root)
        # "Section" in FILE, across a line break too.
        text = "\n".join(read_lines(path))
        for m in re.finditer(r'"([^"]+)"\s+in\s+(?:the\s+)?'
                             r'(README|[\w]+\.md)\b', text):
            sec, where = m.group(1), m.group(2)
            n = text.count("\n", 0, m.start()) + 1
            checked += 1
            dest = os.path.join(root, "README.md") if where == "README" \
                else os.path.join(base, where)
            if not os.path.exists(dest):
                dest = os.path.join(root, "docs", where)
            if not os.path.exists(dest) or \
                    " ".join(sec.split()) not in headings(dest):
                probs.add(path, n, "\"%s\" in %s: no such section" % (
                    " ".join(sec.split()), where), root)
    return checked


# -- the deploy/ map -------------------------------------------------------

def check_deploy_map(root, probs):
    path = os.path.join(root, "docs", "DEPLOYING.md")
    deploy = os.path.join(root, "deploy")
    if not os.path.exists(path) or not os.path.isdir(deploy):
        return 0
    lines = read_lines(path)
    try:
        i = lines.index("## Layout")
    except ValueError:
        probs.add(path, 1, "no \"## Layout\" section with the map of "
                  "deploy/", root)
        return 0
    while i < len(lines) and not lines[i].startswith("    deploy/"):
        i += 1
    named, stack = set(), []
    j = i + 1
    while j < len(lines) and lines[j].startswith("    "):
        entry = lines[j][4:]
        depth = (len(entry) - len(entry.lstrip())) // 2 - 1
        name = entry.strip().split()[0]
        stack = stack[:max(depth, 0)]
        full = "/".join(stack + [name.rstrip("/")])
        parts = full.split("/")
        for k in range(1, len(parts) + (1 if name.endswith("/") else 0)):
            named.add("/".join(parts[:k]))
        if name.endswith("/"):
            stack.append(name.rstrip("/"))
        j += 1
    missing = []
    for dp, ds, _ in os.walk(deploy):
        # What a test run leaves (bytecode) is no part of the tree.
        ds[:] = [d for d in ds if d != "__pycache__" and
                 not d.startswith(".")]
        for d in ds:
            rel = os.path.relpath(os.path.join(dp, d), deploy)
            if rel not in named:
                missing.append(rel + "/")
    for m in sorted(missing):
        probs.add(path, i + 1, "the map of deploy/ leaves out deploy/%s" % m,
                  root)
    return 1


# -- man pages -------------------------------------------------------------

def check_man(root, probs):
    mandir = os.path.join(root, "docs", "man")
    pages = sorted(os.path.join(mandir, f) for f in os.listdir(mandir)
                   if re.search(r"\.[1-9]$", f))
    if shutil.which("mandoc") is None:
        probs.add(mandir, 0, "mandoc is missing (make deps)", root)
        return 0
    p = subprocess.run(["mandoc", "-T", "lint", "-W", "warning"] + pages,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for ln in p.stdout.decode(errors="replace").splitlines():
        probs.add(mandir, 0, "mandoc: " + ln, root)
    for page in pages:
        lines = read_lines(page)
        name, in_name = None, False
        for n, ln in enumerate(lines, 1):
            if ln.startswith(".Sh "):
                in_name = ln == ".Sh NAME"
            m = re.match(r"^\.Nm (\S+)", ln)
            if m and in_name and name is None:
                name = m.group(1)
            if ln.strip() == ".Nm" and not in_name and name and "." in name:
                probs.add(page, n, "a bare .Nm renders \"%s\", the file, "
                          "as the one who acts; write .Xr leaderd 8" % name,
                          root)
        r = subprocess.run(["mandoc", "-T", "utf8", page],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0 or not r.stdout:
            probs.add(page, 0, "mandoc cannot render it", root)
    return len(pages)


# -- driver ----------------------------------------------------------------

def check(root, leaderd, quiet=False):
    probs = Problems()
    counts = {
        "run": check_runs(root, leaderd, probs),
        "defaults": check_defaults(root, leaderd, probs),
        "logs": check_logs(root, probs),
        "links": check_links(root, probs),
        "deploy": check_deploy_map(root, probs),
        "man": check_man(root, probs),
    }
    if not quiet:
        for p in probs.items:
            print(p)
        print("docs-check: %s; %d problem%s" % (
            ", ".join("%s %d" % kv for kv in counts.items()),
            len(probs.items), "" if len(probs.items) == 1 else "s"))
    return probs.items, counts


def plant(root, tmp, name, edit):
    """A copy of the docs (and deploy/) of root in tmp/name, with the
    sources linked, after edit(copy) has planted one mistake."""
    dst = os.path.join(tmp, name)
    os.makedirs(dst)
    shutil.copy(os.path.join(root, "README.md"), dst)
    shutil.copytree(os.path.join(root, "docs"), os.path.join(dst, "docs"))
    shutil.copytree(os.path.join(root, "deploy"), os.path.join(dst, "deploy"))
    for d in os.listdir(root):
        if d not in ("README.md", "docs", "deploy", ".git", "build") and \
                not os.path.exists(os.path.join(dst, d)):
            os.symlink(os.path.join(root, d), os.path.join(dst, d))
    edit(dst)
    return dst


def replace_in(path, old, new):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if old not in text:
        raise SystemExit("docs-check self-test: %r is not in %s; update the "
                         "self-test" % (old, path))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace(old, new, 1))


def self_test(root, leaderd):
    problems, counts = check(root, leaderd, quiet=True)
    failed = []
    if problems:
        failed.append("the tree itself fails the check:\n  " +
                      "\n  ".join(problems))
    for kind, n in counts.items():
        if n == 0:
            failed.append("the %s check checked nothing" % kind)
    cases = [
        ("a wrong default", "the default of `lease_duration`",
         lambda d: replace_in(os.path.join(d, "docs", "configuration.md"),
                              "| `lease_duration` | `15s` |",
                              "| `lease_duration` | `16s` |")),
        ("a wrong default in leaderd.yaml(5)", "the default of "
         "`retry_period`",
         lambda d: replace_in(os.path.join(d, "docs", "man",
                                           "leaderd.yaml.5"),
                              "Default: 2s.", "Default: 3s.")),
        ("a broken link", "no heading with that anchor",
         lambda d: replace_in(os.path.join(d, "README.md"), "\n",
                              "\nSee [the budget](docs/operations.md"
                              "#no-such-section).\n")),
        ("a link to no file", "no such file",
         lambda d: replace_in(os.path.join(d, "docs", "api.md"), "\n",
                              "\n[x](nowhere.md)\n")),
        ("a section that is not there", "no such section",
         lambda d: replace_in(os.path.join(d, "docs", "DEPLOYING.md"),
                              "[operations.md, \"Shutdown\"](operations.md"
                              "#shutdown)", "\"Shutdown\" in the README")),
        ("a log line leaderd never prints", "API error: get:",
         lambda d: replace_in(os.path.join(d, "docs", "operations.md"),
                              "`lease NS/NAME: API error: 403 Forbidden: "
                              "...`", "`lease NS/NAME: API error: get: 403 "
                              "Forbidden: ...`")),
        ("a bare .Nm in leaderd.yaml(5)", "a bare .Nm",
         lambda d: replace_in(os.path.join(d, "docs", "man",
                                           "leaderd.yaml.5"),
                              "When it runs out,\n.Xr leaderd 8\n",
                              "When it runs out,\n.Nm\n")),
        ("a directory missing from the deploy/ map", "leaves out "
         "deploy/newoverlay/",
         lambda d: os.mkdir(os.path.join(d, "deploy", "newoverlay"))),
        ("an example whose output is not leaderd's", "but the page shows",
         lambda d: replace_in(os.path.join(d, "docs", "configuration.md"),
                              "shutdown_timeout: 8s  #",
                              "shutdown_timeout: 5s  #")),
    ]
    with tempfile.TemporaryDirectory(prefix="docs-check-self.") as tmp:
        for i, (what, expect, edit) in enumerate(cases):
            dst = plant(root, tmp, "case%d" % i, edit)
            probs, _ = check(dst, leaderd, quiet=True)
            if not any(expect in p for p in probs):
                failed.append("%s was not refused (wanted a problem with "
                              "%r; got %s)" % (what, expect,
                                               probs or "none"))
            else:
                print("docs-check self-test: %s refused" % what)
    for f in failed:
        print("docs-check self-test: FAIL: " + f)
    if not failed:
        print("docs-check self-test: OK, %d planted mistakes refused" %
              len(cases))
    return 1 if failed else 0


def main():
    sys.setrecursionlimit(20000)
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.normpath(
        os.path.join(here, "..", "..")))
    ap.add_argument("--leaderd", default=None)
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    leaderd = os.path.abspath(a.leaderd or os.environ.get("LEADERD") or
                              os.path.join(root, "leaderd"))
    if not os.access(leaderd, os.X_OK):
        raise SystemExit("docs-check: no leaderd binary at %s (make, or "
                         "--leaderd)" % leaderd)
    if a.self_test:
        return self_test(root, leaderd)
    problems, _ = check(root, leaderd)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
