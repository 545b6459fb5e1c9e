#!/usr/bin/env python3
"""Check the repository's Markdown links (python3 standard library only).

Every relative link in README.md and in every *.md under docs/, k8s/ and load-tests/ must resolve to an
existing file or directory; a `#anchor` into a Markdown file (or within the same file) must name one of its
headings, by GitHub's slug rules. README.md must stay within 300 lines (the runbook's limit). Exits 1 and
lists every broken link otherwise.

    python3 scripts/check-links.py [--root DIR]
"""
import argparse
import os
import re
import sys
import unicodedata
from urllib.parse import unquote

README_MAX_LINES = 300
SCANNED_DIRS = ("docs", "k8s", "load-tests")

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*?(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+[\"'(][^)]*)?\)")
REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def prose_lines(text):
    """(line number, line) outside fenced code blocks, with inline code spans blanked."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        opened = FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        yield number, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def slug(heading):
    """GitHub's anchor for a heading's text: markup dropped, lower case, punctuation removed, spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").lower()
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if char in " -_" or category[0] in "LMN":
            kept.append(char)
    return "".join(kept).replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        found, seen = set(), {}
        fence = None
        for line in text.split("\n"):
            opened = FENCE.match(line)
            if fence:
                if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                    fence = None
                continue
            if opened:
                fence = opened.group(1)
                continue
            found.update(HTML_ANCHOR.findall(line))
            heading = HEADING.match(line)
            if heading:
                base = slug(heading.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
        cache[path] = found
    return cache[path]


def links(text):
    for number, line in prose_lines(text):
        for match in INLINE_LINK.finditer(line):
            yield number, match.group(1)
        definition = REFERENCE_DEF.match(line)
        if definition:
            yield number, definition.group(1)


def check_file(root, path):
    """Broken links of one Markdown file, as 'file:line: target: reason' strings."""
    problems = []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    shown = os.path.relpath(path, root)
    for number, target in links(text):
        target = target.strip("<>")
        if SCHEME.match(target) or target.startswith("//"):
            continue  # http:, https:, mailto: and the like are not checked here
        file_part, _, anchor = target.partition("#")
        file_part = unquote(file_part)
        if not file_part:
            resolved = path
        elif file_part.startswith("/"):
            resolved = os.path.join(root, file_part.lstrip("/"))
        else:
            resolved = os.path.join(os.path.dirname(path), file_part)
        resolved = os.path.normpath(resolved)
        if not os.path.exists(resolved):
            problems.append(f"{shown}:{number}: {target}: no such file")
            continue
        if anchor and resolved.endswith(".md") and os.path.isfile(resolved):
            if unquote(anchor).lower() not in anchors(resolved):
                problems.append(f"{shown}:{number}: {target}: no heading '#{anchor}' in "
                                f"{os.path.relpath(resolved, root)}")
    return problems


def markdown_files(root):
    readme = os.path.join(root, "README.md")
    if os.path.isfile(readme):
        yield readme
    for top in SCANNED_DIRS:
        for directory, subdirectories, files in os.walk(os.path.join(root, top)):
            subdirectories.sort()
            for name in sorted(files):
                if name.endswith(".md"):
                    yield os.path.join(directory, name)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--root", default=default_root, help="the repository root (default: this script's)")
    args = parser.parse_args(argv)
    root = os.path.abspath(args.root)

    problems, checked = [], 0
    for path in markdown_files(root):
        checked += 1
        problems.extend(check_file(root, path))
    readme = os.path.join(root, "README.md")
    if os.path.isfile(readme):
        with open(readme, encoding="utf-8") as f:
            lines = len(f.read().splitlines())
        if lines > README_MAX_LINES:
            problems.append(f"README.md: {lines} lines, more than {README_MAX_LINES}")
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-links: {len(problems)} problem(s) in {checked} Markdown file(s)", file=sys.stderr)
        return 1
    print(f"check-links: {checked} Markdown file(s), every relative link resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
