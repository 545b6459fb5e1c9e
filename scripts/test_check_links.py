"""Tests of scripts/check-links.py: a tree whose links resolve passes, each kind of broken link fails."""
import importlib.util
import pathlib
import subprocess
import sys

CHECKER = pathlib.Path(__file__).with_name("check-links.py")


def load_checker():
    spec = importlib.util.spec_from_file_location("check_links", CHECKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(root):
    result = subprocess.run([sys.executable, str(CHECKER), "--root", str(root)],
                            capture_output=True, text=True, check=False)
    return result.returncode, result.stdout + result.stderr


def write(root, relative, text):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def good_tree(root):
    write(root, "README.md",
          "# Product — a title\n\n"
          "See [the design](docs/architecture.md#the-door-overload-is-refused-not-queued), "
          "[the results](docs/results/) and [this page](#product--a-title).\n\n"
          "```\n[not a link](docs/missing.md)\n```\n\n"
          "Inline code is not a link either: `[x](docs/missing.md)`.\n")
    write(root, "docs/architecture.md",
          "# Architecture\n\n## The door: overload is refused, not queued\n\n"
          "Back to the [README](../README.md) and [the load tests](../load-tests/README.md#faults-the-fault-drill-issue-12).\n")
    write(root, "docs/results/README.md", "# Results\n\n[raw output](../bench/run.txt)\n")
    write(root, "docs/bench/run.txt", "output\n")
    write(root, "load-tests/README.md", "# Drills\n\n## faults: the fault drill (issue 12)\n\n"
          "[external](https://example.com/x.md) is not checked.\n")


def test_a_tree_whose_links_resolve_passes(tmp_path):
    good_tree(tmp_path)
    code, output = run(tmp_path)
    assert code == 0, output
    assert "every relative link resolves" in output


def test_a_link_to_a_missing_file_fails_and_is_named(tmp_path):
    good_tree(tmp_path)
    write(tmp_path, "docs/operations.md", "# Operations\n\nline two\n[gone](results/2026-01-01-gone.md)\n")
    code, output = run(tmp_path)
    assert code == 1
    assert "docs/operations.md:4: results/2026-01-01-gone.md: no such file" in output


def test_a_link_to_a_missing_heading_fails(tmp_path):
    good_tree(tmp_path)
    write(tmp_path, "k8s/README.md", "# k8s\n\n[runbook](../docs/architecture.md#the-door)\n")
    code, output = run(tmp_path)
    assert code == 1
    assert "k8s/README.md:3: ../docs/architecture.md#the-door: no heading '#the-door'" in output


def test_a_readme_over_300_lines_fails(tmp_path):
    good_tree(tmp_path)
    write(tmp_path, "README.md", "# Product\n" + "line\n" * 300)
    code, output = run(tmp_path)
    assert code == 1
    assert "README.md: 301 lines, more than 300" in output


def test_headings_get_githubs_slugs():
    checker = load_checker()
    assert checker.slug("flashsale — a flash-sale order backend") == "flashsale--a-flash-sale-order-backend"
    assert checker.slug("faults: the fault drill (issue 12)") == "faults-the-fault-drill-issue-12"
    assert checker.slug("Full bench at `aa11ba3` (2026-11-26)") == "full-bench-at-aa11ba3-2026-11-26"
    assert checker.slug("Worker autoscaling (KEDA)") == "worker-autoscaling-keda"


def test_a_repeated_heading_is_numbered(tmp_path):
    write(tmp_path, "page.md", "# Page\n\n## Output\n\ntext\n\n## Output\n")
    checker = load_checker()
    assert {"page", "output", "output-1"} <= checker.anchors(str(tmp_path / "page.md"))
