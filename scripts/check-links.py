#!/usr/bin/env python3
"""Check the repository's links and cited sections (python3 standard library only).

Markdown: every relative link in README.md and in every *.md under docs/, k8s/ and load-tests/ must resolve
to an existing file or directory; a `#anchor` into a Markdown file (or within the same file) must name one of
its headings, by GitHub's slug rules. README.md must stay within 300 lines. Exits 1 and lists every broken
link or reference otherwise.

Code and configuration (Java, YAML, Python, shell, JavaScript, Lua, XML, SQL, Dockerfiles; everything outside
target/ and the raw result folders) cite documentation and tools in one form the checker can follow:

    docs/operations.md#jvm-sizing        a path from the repository root (or from the citing file's folder),
    k8s/README.md                        optionally with the #anchor GitHub gives the heading
    load-tests/faults/drill.sh           any other file of the repository, by its path

The path must exist and the anchor must be a heading of it. A README named without its path
(`README, "JVM sizing"`) cannot be checked, so it fails. The Markdown pages are held to the same paths in
their prose, code spans and command blocks (a moved script fails where a page still names it). Anywhere, a
section cited by name after its file (`k8s/README.md, "Deploy a release"`) must be part of one of that
file's headings. Not citations: paths under what .gitignore ignores (target/, load-tests/results/: a tool
writes them) and placeholders in capitals (docs/FILE.md). Files named test_*.py, and this checker, are
skipped: they show broken references on purpose.

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
LINK_TARGET = re.compile(r"\]\([^)\s]*[^)]*\)")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")

# A Markdown file cited from code or prose, with an optional anchor: docs/operations.md#jvm-sizing.
CITED_FILE = re.compile(r"(?<![\w./:-])((?:\.\.?/)?(?:[\w.-]+/)*[\w.-]+\.md)\b(?:#([\w-]+))?")
# Any other file of the repository cited by its path (it has a folder and an extension): load-tests/run.sh.
CITED_PATH = re.compile(r"(?<![\w./:@$-])((?:\.\.?/)?(?:[\w.-]+/)+[\w-][\w.-]*\.(?!md\b)[A-Za-z]\w*)\b")
# A placeholder in a cited path: docs/FILE.md, k8s/crd-schemas/GROUP/KIND_VERSION.json.
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*$")
REAL_CAPITALS = {"README", "RESULTS", "LICENSE"}
# A section cited by name after its file: k8s/README.md, "Deploy a release" (or README "...").
CITED_NAME = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*README(?:\.md)?|(?:[\w.-]+/)*[\w.-]+\.md)\)?,?\s\(?\"([^\"]+)\"")
# README without a path: a citation nobody can follow or check.
BARE_README = re.compile(r"\bREADME\b(?![.\-_])")
CODE_SUFFIXES = (".java", ".yml", ".yaml", ".py", ".sh", ".js", ".lua", ".xml", ".sql", ".properties", ".env")
SKIPPED_DIRS = {".git", "target", "node_modules", "__pycache__", ".venv", ".pytest_cache"}
RAW_RESULT_DIRS = ("docs/results/bench", "docs/results/seeds", "docs/results/profiles", "docs/results/faults", "ops-tests/results")


def outside_fences(text):
    """(line number, line) of the lines outside fenced code blocks."""
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
        yield number, line


def prose_lines(text):
    """(line number, line) outside fenced code blocks, with inline code spans blanked."""
    for number, line in outside_fences(text):
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
        for _, line in outside_fences(text):
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


def headings(path, cache={}):
    """The text of each heading of a Markdown file, lower case."""
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        cache[path] = [m.group(2).lower() for _, line in prose_lines(text)
                       for m in [HEADING.match(line)] if m]
    return cache[path]


def is_citation(root, cited):
    """A path into the repository (its first folder exists at the root, or a file at the root), not the name
    of a file a tool writes (summary.md, target/simulator-grid.md, load-tests/results/...) nor a placeholder."""
    if cited in ("README", "README.md"):
        return True
    parts = cited.split("/")
    if any(PLACEHOLDER.match(part.split(".")[0]) and part.split(".")[0] not in REAL_CAPITALS for part in parts):
        return False
    if is_ignored(root, cited):
        return False
    if cited.startswith(("./", "../")):
        return True
    return "/" in cited and parts[0] not in SKIPPED_DIRS and os.path.isdir(os.path.join(root, parts[0]))


def ignored_folders(root, cache={}):
    """The folders .gitignore names (target/, /load-tests/results/): (anchored at the root?, path) pairs."""
    if root not in cache:
        folders = []
        try:
            with open(os.path.join(root, ".gitignore"), encoding="utf-8") as f:
                for line in f:
                    line = line.strip()
                    if line.endswith("/") and not line.startswith(("#", "!")) and "*" not in line:
                        folders.append((line.startswith("/"), line.strip("/")))
        except OSError:
            pass
        cache[root] = folders
    return cache[root]


def is_ignored(root, cited):
    """Whether a cited path lies in a folder .gitignore ignores: what a tool writes, never in the repository."""
    path = os.path.normpath(cited).replace(os.sep, "/")
    for anchored, folder in ignored_folders(root):
        if anchored and (path + "/").startswith(folder + "/"):
            return True
        if not anchored and folder in path.split("/")[:-1]:
            return True
    return False


def resolve_cited(root, citing, cited):
    """The cited file: from the repository root, else from the citing file's folder; None if neither exists."""
    if cited == "README":
        cited = "README.md"
    for base in (root, os.path.dirname(citing)):
        candidate = os.path.normpath(os.path.join(base, cited))
        if os.path.exists(candidate):
            return candidate
    return None


def check_cited_name(root, path, number, cited, name):
    """A section cited by name must be part of one of its file's headings."""
    shown = os.path.relpath(path, root)
    resolved = resolve_cited(root, path, cited)
    if resolved is None:
        return [f"{shown}:{number}: {cited}: no such file"]
    if resolved.endswith(".md") and name.lower() not in " / ".join(headings(resolved)):
        return [f"{shown}:{number}: {cited}, \"{name}\": no heading names it in {os.path.relpath(resolved, root)}"
                f" (cite it as FILE.md#anchor)"]
    return []


def check_cited_paths(root, path, number, line):
    """Files cited by their path in one line (a Markdown file with its anchor) that do not exist."""
    problems = []
    shown = os.path.relpath(path, root)
    cited_paths = [(m.group(1), m.group(2)) for m in CITED_FILE.finditer(line)]
    cited_paths += [(m.group(1), None) for m in CITED_PATH.finditer(line)]
    for cited, anchor in cited_paths:
        if not is_citation(root, cited):
            continue
        resolved = resolve_cited(root, path, cited)
        if resolved is None:
            problems.append(f"{shown}:{number}: {cited}: no such file")
        elif anchor and resolved.endswith(".md") and anchor.lower() not in anchors(resolved):
            problems.append(f"{shown}:{number}: {cited}#{anchor}: no heading '#{anchor}' in "
                            f"{os.path.relpath(resolved, root)}")
    return problems


def check_code_file(root, path):
    """Broken or uncheckable references in one code or configuration file."""
    problems = []
    shown = os.path.relpath(path, root)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for number, line in enumerate(text.split("\n"), 1):
        problems.extend(check_cited_paths(root, path, number, line))
        for match in CITED_NAME.finditer(line):
            problems.extend(check_cited_name(root, path, number, match.group(1), match.group(2)))
        if BARE_README.search(line):
            problems.append(f"{shown}:{number}: a README cited without its path: write README.md#anchor, "
                            "docs/FILE.md#anchor or DIR/README.md")
    return problems


def code_files(root):
    for directory, subdirectories, files in os.walk(root):
        relative = os.path.relpath(directory, root)
        subdirectories[:] = sorted(d for d in subdirectories if d not in SKIPPED_DIRS
                                   and os.path.normpath(os.path.join(relative, d)) not in RAW_RESULT_DIRS)
        for name in sorted(files):
            if name.startswith("test_") and name.endswith(".py") or name == os.path.basename(__file__):
                continue
            path = os.path.join(directory, name)
            if name.endswith(CODE_SUFFIXES) or name == "Dockerfile" or is_script(path, name):
                yield path


def is_script(path, name):
    if "." in name:
        return False
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


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
    for number, line in prose_lines(text):
        for match in CITED_NAME.finditer(line):
            problems.extend(check_cited_name(root, path, number, match.group(1), match.group(2)))
    if not in_raw_results(root, path):  # a raw output keeps the commands of its day
        for number, line in enumerate(text.split("\n"), 1):
            # Link targets are resolved above, from the page's own folder.
            line = REFERENCE_DEF.sub("", LINK_TARGET.sub("]", line))
            problems.extend(check_cited_paths(root, path, number, line))
    return problems


def in_raw_results(root, path):
    relative = os.path.relpath(path, root).replace(os.sep, "/")
    return any(relative.startswith(folder + "/") for folder in RAW_RESULT_DIRS)


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
    code = 0
    for path in code_files(root):
        code += 1
        problems.extend(check_code_file(root, path))
    readme = os.path.join(root, "README.md")
    if os.path.isfile(readme):
        with open(readme, encoding="utf-8") as f:
            lines = len(f.read().splitlines())
        if lines > README_MAX_LINES:
            problems.append(f"README.md: {lines} lines, more than {README_MAX_LINES}")
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-links: {len(problems)} problem(s) in {checked} Markdown and {code} code file(s)",
              file=sys.stderr)
        return 1
    print(f"check-links: {checked} Markdown file(s), every relative link resolves; "
          f"{code} code file(s), every cited file and section exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
