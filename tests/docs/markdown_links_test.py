#!/usr/bin/python3
"""Checks that the repository's Markdown does not point at things that are not there.

  markdown_links_test.py --root SOURCE_DIR --bin-dir BUILD/bin [--skip DIR ...]
  markdown_links_test.py --self-test --bin-dir BUILD/bin

Every Markdown file under --root (build*/, .git and node_modules left out, and every --skip
directory) is read, and:

links     every relative link, [text](path), [text](path#anchor), [text](#anchor), images and
          reference definitions alike, must resolve: the file or folder exists inside the
          repository, and an anchor names a heading of the target Markdown file by GitHub's rules
          (the heading's text lowercased, punctuation but `-` and `_` dropped, each space a `-`; a
          repeated heading gets -1, -2, ...; explicit <a name> / id anchors count too). A link into
          a source file may carry a line anchor (#L10, #L10-L20). Links with a scheme (http:,
          https:, mailto:, ...) are not followed. Code spans and code blocks are not links.
commands  every `build/bin/NAME` in a code block (fenced, or indented by four spaces) must name a
          binary of --bin-dir. Where it starts a command (at the start of a line, after `$ `, after
          VAR=value assignments, or after &&, ||, ;, |), and NAME is a binary with subcommands
          (--subcommand-binary, default tilingctl), its first operand must be one of the
          subcommands the binary itself lists: its usage line when run without arguments and its
          --help text are read, never a list kept here. The binary's boolean flags, also read from
          --help, tell a flag's value from the subcommand (`tilingctl --server HOST health`).
          Lines continued with a backslash are one command. A binary that this build tree does not
          build (a target of the sources' CMake files that is switched off here, such as the
          benchmarks in a tree without them) is noted and not checked; any other missing name fails.

Each problem is printed as FILE:LINE: message, naming the link or command. Exit status: 0 when
nothing is broken, 1 when something is, 2 on bad usage.

--self-test writes a small repository with a broken link, a missing anchor, an unknown
subcommand and an unknown binary into a temporary folder, runs this script on it and requires it
to fail naming each of them, then runs it on the same repository without the mistakes and
requires it to pass.
"""

import argparse
import difflib
import html
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unicodedata
import urllib.parse

SKIPPED_DIRS = {".git", "node_modules"}
MARKDOWN_SUFFIXES = (".md", ".markdown")

FENCE_RE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
LIST_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
HTML_ANCHOR_RE = re.compile(r"<[^>]*\b(?:name|id)\s*=\s*[\"']([^\"']+)[\"'][^>]*>", re.IGNORECASE)
# [text](destination "title"): the text may hold one level of brackets; the destination is
# <...> or a run without spaces whose parentheses balance.
INLINE_LINK_RE = re.compile(
    r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REFERENCE_DEF_RE = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*(<[^>]*>|\S+)")
SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
LINE_ANCHOR_RE = re.compile(r"^L\d+(?:C\d+)?(?:-L\d+(?:C\d+)?)?$")
BINARY_RE = re.compile(r"(?<![\w./-])(?:\./)?build/bin/([A-Za-z0-9_][A-Za-z0-9_.+-]*)")
COMMAND_BINARY_RE = re.compile(r"^(?:\./)?build/bin/([A-Za-z0-9_][A-Za-z0-9_.+-]*)$")
ASSIGNMENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
CONTROL_TOKENS = {"&&", "||", ";", "|", "&", "(", ")", "|&", ";;", "!", "{", "}"}
WRAPPERS = {"time", "exec", "env", "sudo", "nohup", "command", "then", "do", "else"}
HELP_FLAGS = {"help", "helpfull", "helpshort", "helppackage", "version", "only_check_args"}


class Problem:
    def __init__(self, path, line, message):
        self.path, self.line, self.message = path, line, message

    def __str__(self):
        return f"{self.path}:{self.line}: {self.message}"


# ------------------------------------------------------------------------------------------------
# Reading a Markdown file: code blocks, headings, link text.


class MarkdownFile:
    """One file split into prose lines (code blocks blanked) and code blocks."""

    def __init__(self, path, text):
        self.path = path
        self.lines = text.split("\n")
        self.prose = list(self.lines)  # code blocks replaced by empty lines
        self.code_blocks = []  # (first line number, [lines])
        self._split_code()

    def _split_code(self):
        lines = self.lines
        i = 0
        in_list = False
        previous_blank = True
        while i < len(lines):
            line = lines[i]
            fence = FENCE_RE.match(line)
            if fence and not (fence.group(2)[0] == "`" and "`" in fence.group(3)):
                marker = fence.group(2)
                start = i
                body = []
                i += 1
                while i < len(lines):
                    closing = FENCE_RE.match(lines[i])
                    if (closing and closing.group(2)[0] == marker[0]
                            and len(closing.group(2)) >= len(marker) and not closing.group(3).strip()):
                        break
                    body.append(lines[i])
                    i += 1
                self.code_blocks.append((start + 2, body))
                for j in range(start, min(i + 1, len(lines))):
                    self.prose[j] = ""
                i += 1
                previous_blank = False
                continue
            indent = len(line) - len(line.lstrip(" "))
            stripped = line.strip()
            if not stripped:
                previous_blank = True
                i += 1
                continue
            if LIST_ITEM_RE.match(line) and indent < 4:
                in_list = True
            elif indent == 0 and previous_blank:
                in_list = False
            if indent >= 4 and previous_blank and not in_list:
                # An indented code block: this line and the next ones indented by four or blank.
                start = i
                body = []
                while i < len(lines) and (not lines[i].strip() or lines[i].startswith("    ")):
                    body.append(lines[i][4:])
                    self.prose[i] = ""
                    i += 1
                while body and not body[-1].strip():
                    body.pop()
                self.code_blocks.append((start + 1, body))
                previous_blank = True
                continue
            previous_blank = False
            i += 1

    def headings(self):
        """(line number, heading text) of every ATX and setext heading outside code."""
        out = []
        for index, line in enumerate(self.prose):
            match = ATX_RE.match(line)
            if match and line.strip():
                out.append((index + 1, match.group(2) or ""))
                continue
            if SETEXT_RE.match(line) and index > 0:
                above = self.prose[index - 1]
                if (above.strip() and not ATX_RE.match(above) and not LIST_ITEM_RE.match(above)
                        and not SETEXT_RE.match(above) and not above.lstrip().startswith(("|", ">"))):
                    out.append((index, above.strip()))
        return out

    def anchors(self):
        """Every anchor a link into this file may name."""
        anchors = set()
        seen_counts = {}
        for _, text in self.headings():
            base = slug(text)
            if not base:
                continue
            candidate = base
            if base in anchors:
                count = seen_counts.get(base, 0)
                while candidate in anchors:
                    count += 1
                    candidate = f"{base}-{count}"
                seen_counts[base] = count
            anchors.add(candidate)
        for line in self.prose:
            for match in HTML_ANCHOR_RE.finditer(line):
                anchors.add(match.group(1))
        return anchors


def blank_code_spans(text):
    """The text with every code span's characters (backticks included) turned into spaces, line
    breaks kept, so that positions still map to lines."""
    out = list(text)
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            i += 2
            continue
        if text[i] != "`":
            i += 1
            continue
        run = 0
        while i + run < len(text) and text[i + run] == "`":
            run += 1
        closing = re.compile(r"(?<!`)" + "`" * run + r"(?!`)")
        end = closing.search(text, i + run)
        if not end:
            i += run
            continue
        for j in range(i, end.end()):
            if out[j] != "\n":
                out[j] = " "
        i = end.end()
    return "".join(out)


def heading_text(raw):
    """The text GitHub shows for a heading's source: code spans' contents, link and image texts,
    no emphasis markers or HTML tags, entities decoded."""
    spans = []

    def keep_code(match):
        spans.append(match.group(2).strip() if match.group(2).strip() else match.group(2))
        return f"\x00{len(spans) - 1}\x00"

    text = re.sub(r"(`+)(.+?)(?<!`)\1(?!`)", keep_code, raw)
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", text)
    text = re.sub(r"(?<![A-Za-z0-9_])_(?!\s)(.+?)(?<!\s)_(?![A-Za-z0-9_])", r"\1", text)
    text = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)
    text = re.sub("\x00(\\d+)\x00", lambda m: spans[int(m.group(1))], text)
    return html.unescape(text)


def slug(raw_heading):
    """GitHub's anchor for a heading: lowercase; letters, digits, marks, `_`, `-` and spaces kept,
    every other character dropped; each space becomes `-`."""
    text = heading_text(raw_heading).strip().lower()
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if char in "- " or char == "_" or category[0] in "LM" or category in ("Nd", "Nl", "Pc"):
            kept.append(char)
    return "".join(kept).replace(" ", "-")


# ------------------------------------------------------------------------------------------------
# Links.


def iter_links(markdown):
    """(line number, text, destination) of every inline link, image and reference definition in
    the file's prose."""
    text = "\n".join(markdown.prose)
    text = re.sub(r"<!--.*?-->", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    text = blank_code_spans(text)
    text = text.replace("\\[", "  ").replace("\\]", "  ")
    for match in INLINE_LINK_RE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        yield line, match.group(1), match.group(2)
    for index, line_text in enumerate(text.split("\n")):
        match = REFERENCE_DEF_RE.match(line_text)
        if match:
            yield index + 1, match.group(1), match.group(2)


def check_link(root, markdown, files, line, text, destination):
    """The problem with one link, or None."""
    shown = f"[{' '.join(text.split())}]({destination})"
    dest = destination.strip()
    if dest.startswith("<") and dest.endswith(">"):
        dest = dest[1:-1].strip()
    if not dest:
        return Problem(markdown.path, line, f"empty link {shown}")
    if SCHEME_RE.match(dest) or dest.startswith("//"):
        return None
    path_part, _, anchor = dest.partition("#")
    path_part = urllib.parse.unquote(path_part.split("?", 1)[0])
    anchor = urllib.parse.unquote(anchor)
    here = os.path.dirname(os.path.join(root, markdown.path))
    if not path_part:
        target = os.path.join(root, markdown.path)
    elif path_part.startswith("/"):
        target = os.path.normpath(os.path.join(root, path_part.lstrip("/")))
    else:
        target = os.path.normpath(os.path.join(here, path_part))
    relative = os.path.relpath(target, root)
    if relative == ".." or relative.startswith(".." + os.sep):
        return Problem(markdown.path, line, f"broken link {shown}: {path_part} leaves the repository")
    if not os.path.exists(target):
        return Problem(markdown.path, line, f"broken link {shown}: no file {relative}")
    if not anchor:
        return None
    if os.path.isdir(target):
        return Problem(markdown.path, line, f"broken link {shown}: {relative} is a folder, it has no #{anchor}")
    if not target.endswith(MARKDOWN_SUFFIXES):
        if LINE_ANCHOR_RE.match(anchor):
            return None
        return Problem(markdown.path, line, f"broken link {shown}: #{anchor} is not a line anchor (#L10) of {relative}")
    target_file = files.get(relative)
    if target_file is None:
        with open(target, encoding="utf-8") as f:
            target_file = MarkdownFile(relative, f.read())
        files[relative] = target_file
    anchors = target_file.anchors()
    if anchor in anchors:
        return None
    close = difflib.get_close_matches(anchor, sorted(anchors), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join('#' + c for c in close)}?" if close else ""
    where = "this file" if relative == markdown.path else relative
    return Problem(markdown.path, line, f"broken link {shown}: no heading #{anchor} in {where}{hint}")


# ------------------------------------------------------------------------------------------------
# Commands in code blocks.


class Binaries:
    """What --bin-dir holds, and what the binaries with subcommands accept."""

    def __init__(self, bin_dir, root, subcommand_binaries):
        self.bin_dir = bin_dir
        self.root = root
        self.subcommand_binaries = set(subcommand_binaries)
        self._cli = {}
        self._declared = None

    def exists(self, name):
        path = os.path.join(self.bin_dir, name)
        return os.path.isfile(path) and os.access(path, os.X_OK)

    def declared_target(self, name):
        """The CMake file of the sources that makes an executable called `name`, or None."""
        if self._declared is None:
            self._declared = {}
            pattern = re.compile(r"add_executable\(\s*([A-Za-z0-9_.+-]+)|OUTPUT_NAME\s+\"?([A-Za-z0-9_.+-]+)")
            for directory, dirs, names in walk(self.root, []):
                for file_name in names:
                    if file_name == "CMakeLists.txt" or file_name.endswith(".cmake"):
                        path = os.path.join(directory, file_name)
                        with open(path, encoding="utf-8", errors="replace") as f:
                            for match in pattern.finditer(f.read()):
                                target = match.group(1) or match.group(2)
                                self._declared.setdefault(target, os.path.relpath(path, self.root))
        return self._declared.get(name)

    def cli(self, name):
        """(subcommands, boolean flags) of a binary with subcommands, read from what it prints."""
        if name not in self._cli:
            path = os.path.join(self.bin_dir, name)
            texts = []
            for args in ([], ["--help"]):
                try:
                    run = subprocess.run([path] + args, stdin=subprocess.DEVNULL, capture_output=True,
                                         text=True, timeout=30)
                    texts.append(run.stdout + "\n" + run.stderr)
                except (OSError, subprocess.TimeoutExpired) as error:
                    texts.append("")
                    print(f"note: running {path} {' '.join(args)}: {error}", file=sys.stderr)
            self._cli[name] = (parse_subcommands(name, texts[0], texts[1]), parse_bool_flags(texts[1]))
        return self._cli[name]


def parse_subcommands(name, usage_text, help_text):
    """Subcommands named by the usage line (`usage: NAME a|b FILE|c [flags]`) and by the help's
    example lines (`  NAME sub ...`, `  NAME a | b`)."""
    commands = set()
    escaped = re.escape(name)
    for match in re.finditer(r"usage:\s*" + escaped + r"\s+([^\n;]*)", usage_text + "\n" + help_text):
        spec = re.split(r"\s\[", match.group(1))[0]
        for alternative in spec.split("|"):
            words = alternative.split()
            if words and re.match(r"^[a-z][a-z0-9_-]*$", words[0]):
                commands.add(words[0])
    for match in re.finditer(r"^\s+" + escaped + r"\s+([a-z][a-z0-9_-]*(?:\s*\|\s*[a-z][a-z0-9_-]*)*)",
                             help_text, re.M):
        for word in match.group(1).split("|"):
            commands.add(word.strip())
    return commands


def parse_bool_flags(help_text):
    """Names of the flags whose default is true or false (Abseil's --help: `--name (text); default:
    false;`)."""
    flags = set()
    for match in re.finditer(r"^\s*--([A-Za-z0-9_]+) \(.*?\);\s+default: ([^;]*);", help_text, re.M | re.S):
        if match.group(2).strip() in ("true", "false"):
            flags.add(match.group(1))
    return flags


def logical_lines(block_lines, first_line):
    """(line number, text) of each command line, backslash continuations joined."""
    out = []
    buffer, start = "", None
    for offset, line in enumerate(block_lines):
        if start is None:
            start = first_line + offset
        if line.rstrip().endswith("\\"):
            buffer += line.rstrip()[:-1] + " "
            continue
        out.append((start, buffer + line))
        buffer, start = "", None
    if buffer:
        out.append((start, buffer))
    return out


def split_command_line(text):
    """Shell-like tokens of one line, comments dropped; None if it does not parse as shell."""
    text = re.sub(r"^\s*\$\s+", "", text)
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:
        return None


def command_starts(tokens):
    """Indexes of the tokens that start a command."""
    starts = []
    expect = True
    for index, token in enumerate(tokens):
        if token in CONTROL_TOKENS:
            expect = True
            continue
        if expect:
            if ASSIGNMENT_RE.match(token) or token in WRAPPERS:
                continue
            starts.append(index)
            expect = False
    return starts


def first_operand(args, bool_flags):
    """The first argument that is neither a flag nor a flag's value, or None."""
    i = 0
    while i < len(args):
        token = args[i]
        if token in CONTROL_TOKENS:
            return None
        if token == "--":
            return args[i + 1] if i + 1 < len(args) else None
        if token.startswith("-") and len(token) > 1:
            name = token.lstrip("-")
            if "=" in name or not bool_flags:
                i += 1
                continue
            name = name.replace("-", "_")
            boolean = (name in bool_flags or name in HELP_FLAGS
                       or (name.startswith("no") and name[2:] in bool_flags))
            i += 1 if boolean else 2
            continue
        return token
    return None


def check_code_block(markdown, first_line, block_lines, binaries, notes, counts):
    problems = []
    for line_number, text in logical_lines(block_lines, first_line):
        for match in BINARY_RE.finditer(text):
            counts["commands"] += 1
            name = match.group(1).rstrip(".,:")
            if binaries.exists(name):
                continue
            declared = binaries.declared_target(name)
            if declared:
                notes.add(f"build/bin/{name} is not built in {binaries.bin_dir} (a target of {declared}); not checked")
                continue
            problems.append(Problem(markdown.path, line_number,
                                    f"build/bin/{name}: no such binary in {binaries.bin_dir} "
                                    f"(nor a target of the sources' CMake files)"))
        tokens = split_command_line(text)
        if tokens is None:
            continue
        for start in command_starts(tokens):
            match = COMMAND_BINARY_RE.match(tokens[start])
            if not match or match.group(1) not in binaries.subcommand_binaries:
                continue
            name = match.group(1)
            if not binaries.exists(name):
                continue  # reported above, or not built here
            commands, bool_flags = binaries.cli(name)
            if not commands:
                problems.append(Problem(markdown.path, line_number,
                                        f"build/bin/{name} lists no subcommands (run it without arguments)"))
                continue
            operand = first_operand(tokens[start + 1:], bool_flags)
            args = tokens[start + 1:]
            if operand is None:
                if any(a.lstrip("-").replace("-", "_") in HELP_FLAGS for a in args if a.startswith("-")):
                    continue
                problems.append(Problem(markdown.path, line_number,
                                        f"build/bin/{name} without a subcommand (it has: {', '.join(sorted(commands))})"))
                continue
            if operand.startswith("$"):
                continue
            if operand not in commands:
                close = difflib.get_close_matches(operand, sorted(commands), n=1)
                hint = f"; did you mean {close[0]}?" if close else ""
                problems.append(Problem(markdown.path, line_number,
                                        f"build/bin/{name} {operand}: no such subcommand "
                                        f"(it has: {', '.join(sorted(commands))}){hint}"))
    return problems


# ------------------------------------------------------------------------------------------------


def walk(root, skip):
    skip = {os.path.realpath(s) for s in skip}
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs
                         if d not in SKIPPED_DIRS and not d.startswith("build")
                         and os.path.realpath(os.path.join(directory, d)) not in skip)
        yield directory, dirs, sorted(names)


def check(root, bin_dir, skip, subcommand_binaries):
    """(problems, notes, number of files) for the tree under root."""
    root = os.path.realpath(root)
    files = {}
    for directory, _, names in walk(root, skip):
        for name in names:
            if name.endswith(MARKDOWN_SUFFIXES):
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, root)
                with open(path, encoding="utf-8") as f:
                    files[relative] = MarkdownFile(relative, f.read())
    binaries = Binaries(bin_dir, root, subcommand_binaries)
    problems, notes = [], set()
    counts = {"files": len(files), "links": 0, "commands": 0}
    for relative in sorted(files):
        markdown = files[relative]
        for line, text, destination in iter_links(markdown):
            counts["links"] += 1
            problem = check_link(root, markdown, files, line, text, destination)
            if problem:
                problems.append(problem)
        for first_line, block in markdown.code_blocks:
            problems.extend(check_code_block(markdown, first_line, block, binaries, notes, counts))
    problems.sort(key=lambda p: (p.path, p.line))
    return problems, sorted(notes), counts


def run(root, bin_dir, skip, subcommand_binaries):
    if not os.path.isdir(root):
        print(f"markdown_links_test: no folder {root}", file=sys.stderr)
        return 2
    if not os.path.isdir(bin_dir):
        print(f"markdown_links_test: no folder {bin_dir} (--bin-dir)", file=sys.stderr)
        return 2
    problems, notes, counts = check(root, bin_dir, skip, subcommand_binaries)
    for note in notes:
        print(f"note: {note}")
    for problem in problems:
        print(problem)
    summary = (f"{counts['files']} Markdown files under {root}, {counts['links']} links, "
               f"{counts['commands']} build/bin names in code blocks")
    if problems:
        print(f"FAIL: {len(problems)} broken link(s) or command(s); {summary}")
        return 1
    print(f"PASS: {summary}; every one resolves")
    return 0


SELF_TEST_GOOD = """\
# Top

See [the guide](docs/guide.md), [its usage](docs/guide.md#usage-buildbintilingctl),
[the second Usage](docs/guide.md#usage-1), [here](#top), [a folder](docs/) and
[a line](tool.py#L3). `[not a link](nowhere.md)` is code; [out](https://example.com/x) is external.

```sh
build/bin/tilingctl tile --m 64 --n 64 --k 64
$ NPU_X=1 build/bin/tilingctl --local --server localhost:1 \\
    platforms
cd build && build/bin/tilingctl --json health   # a comment naming build/bin/tilingctl
```

    build/bin/tilingctl health
"""

SELF_TEST_GUIDE = """\
# Guide

## Usage: `build/bin/tilingctl`

## Usage

## Usage

Back to [the top](../README.md#top).
"""

SELF_TEST_BAD = """\
# Bad

A [missing file](docs/missing.md), a [missing anchor](docs/guide.md#no-such-heading) and
[one here](#nowhere).

```sh
build/bin/tilingctl nosuchcmd --m 1
build/bin/no_such_binary --flag
```
"""


def self_test(bin_dir, subcommand_binaries):
    """Runs the check on a small repository with known mistakes, then without them."""
    script = os.path.abspath(__file__)
    failures = []
    with tempfile.TemporaryDirectory(prefix="markdown_links_self_test.") as root:
        os.makedirs(os.path.join(root, "docs"))
        with open(os.path.join(root, "docs", "guide.md"), "w") as f:
            f.write(SELF_TEST_GUIDE)
        with open(os.path.join(root, "tool.py"), "w") as f:
            f.write("# a\n# b\n# c\n")
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write(SELF_TEST_GOOD)
        # A build tree inside the sources is not read.
        os.makedirs(os.path.join(root, "build-x"))
        with open(os.path.join(root, "build-x", "broken.md"), "w") as f:
            f.write("[x](nowhere.md)\n")

        def run_on_tree():
            result = subprocess.run([sys.executable, script, "--root", root, "--bin-dir", bin_dir]
                                    + [a for b in subcommand_binaries for a in ("--subcommand-binary", b)],
                                    capture_output=True, text=True)
            return result.returncode, result.stdout + result.stderr

        code, output = run_on_tree()
        print("--- the repository without mistakes:\n" + output)
        if code != 0:
            failures.append(f"a correct repository failed (exit {code})")

        with open(os.path.join(root, "BAD.md"), "w") as f:
            f.write(SELF_TEST_BAD)
        code, output = run_on_tree()
        print("--- the repository with mistakes:\n" + output)
        if code != 1:
            failures.append(f"a repository with broken links passed or did not run (exit {code}, want 1)")
        for expected in ("BAD.md:3: broken link [missing file](docs/missing.md): no file docs/missing.md",
                         "BAD.md:3: broken link [missing anchor](docs/guide.md#no-such-heading): no heading #no-such-heading in docs/guide.md",
                         "BAD.md:4: broken link [one here](#nowhere): no heading #nowhere in this file",
                         "BAD.md:7: build/bin/tilingctl nosuchcmd: no such subcommand",
                         "BAD.md:8: build/bin/no_such_binary: no such binary"):
            if expected not in output:
                failures.append(f"not reported: {expected}")
        if "build-x" in output:
            failures.append("a build* folder was read")
        if "README.md:" in output.replace("BAD.md:", ""):
            failures.append("a correct link or command of README.md was reported")
    for failure in failures:
        print(f"self-test: {failure}")
    print("self-test: " + ("FAIL" if failures else "PASS"))
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", help="the repository: every Markdown file under it is checked")
    parser.add_argument("--bin-dir", required=True, help="the build tree's bin/ (build/bin in the docs)")
    parser.add_argument("--skip", action="append", default=[], help="a folder not to read (repeatable)")
    parser.add_argument("--subcommand-binary", action="append", default=None,
                        help="a binary whose first operand is a subcommand (default: tilingctl)")
    parser.add_argument("--self-test", action="store_true",
                        help="check that the check fails on broken links and passes without them")
    args = parser.parse_args()
    subcommand_binaries = args.subcommand_binary or ["tilingctl"]
    if args.self_test:
        return self_test(args.bin_dir, subcommand_binaries)
    if not args.root:
        parser.error("--root is required")
    return run(args.root, args.bin_dir, args.skip, subcommand_binaries)


if __name__ == "__main__":
    sys.exit(main())
