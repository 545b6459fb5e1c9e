"""Tests of scripts/check-links.py: a tree whose links resolve passes, each kind of broken link fails."""
import importlib.util
import pathlib
import subprocess
import sys

import pytest

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


def fails(root):
    """The checker's output on root, which it must reject (exit 1)."""
    code, output = run(root)
    assert code == 1, output
    return output


def passes(root):
    """The checker's output on root, which it must accept (exit 0)."""
    code, output = run(root)
    assert code == 0, output
    return output


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
    output = passes(tmp_path)
    assert "every relative link resolves" in output


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


def code_tree(root):
    good_tree(root)
    write(root, "docs/operations.md", "# Operations\n\n## JVM sizing\n\n#### Worker autoscaling (KEDA)\n")
    write(root, "k8s/README.md", "# Sale day\n\n## 2. Deploy a release (days before)\n")


def test_code_that_cites_existing_files_and_anchors_passes(tmp_path):
    code_tree(tmp_path)
    write(tmp_path, "order-api/src/main/java/Door.java",
          "/** Measured: docs/operations.md#jvm-sizing, docs/operations.md#worker-autoscaling-keda. */\n"
          "// Files a tool writes are not citations: summary.md, target/grid.md, https://x.example/README.md\n")
    write(tmp_path, "k8s/base/job.yaml", "# applied with the release (k8s/README.md, \"Deploy a release\")\n")
    write(tmp_path, "scripts/tool", "#!/bin/sh\n# see load-tests/README.md#faults-the-fault-drill-issue-12\n")
    output = passes(tmp_path)
    assert "every cited file and section exists" in output


@pytest.mark.parametrize(("relative", "text", "expected"), [
    pytest.param("docs/operations.md", "# Operations\n\nline two\n[gone](results/2026-01-01-gone.md)\n",
                 "docs/operations.md:4: results/2026-01-01-gone.md: no such file",
                 id="a_link_to_a_missing_file_fails_and_is_named"),
    pytest.param("k8s/README.md", "# k8s\n\n[runbook](../docs/architecture.md#the-door)\n",
                 "k8s/README.md:3: ../docs/architecture.md#the-door: no heading '#the-door'",
                 id="a_link_to_a_missing_heading_fails"),
    pytest.param("README.md", "# Product\n" + "line\n" * 300,
                 "README.md: 301 lines, more than 300",
                 id="a_readme_over_300_lines_fails"),
    pytest.param("order-api/src/main/resources/application.yml",
                 "app:\n  # sized as in docs/operations.md#overload-tails\n  x: 1\n",
                 "order-api/src/main/resources/application.yml:2: docs/operations.md#overload-tails: "
                 "no heading '#overload-tails' in docs/operations.md",
                 id="a_comment_citing_a_missing_anchor_fails"),
    pytest.param("deploy-tests/checks.py", "# the sizing: docs/sizing.md\n",
                 "deploy-tests/checks.py:1: docs/sizing.md: no such file",
                 id="a_comment_citing_a_missing_file_fails"),
    pytest.param("order-worker/Dockerfile", "FROM x\n# sized from the footprint (README, JVM sizing)\n",
                 "order-worker/Dockerfile:2: a README cited without its path",
                 id="a_readme_cited_without_its_path_fails"),
])
def test_a_broken_reference_fails_and_is_named(tmp_path, relative, text, expected):
    """One file planted in a tree whose links resolve (the docs' and the code's): the checker names it."""
    code_tree(tmp_path)
    write(tmp_path, relative, text)
    assert expected in fails(tmp_path)


def test_a_section_cited_by_a_name_no_heading_has_fails_in_code_and_in_docs(tmp_path):
    code_tree(tmp_path)
    write(tmp_path, "k8s/base/api.yaml", "# what to do: k8s/README.md, \"When an alert fires\"\n")
    write(tmp_path, "docs/results/old.md", "# Old\n\nAs measured (README, \"Overload tails\").\n")
    output = fails(tmp_path)
    assert 'k8s/base/api.yaml:1: k8s/README.md, "When an alert fires": no heading names it' in output
    assert 'docs/results/old.md:3: README, "Overload tails": no heading names it in README.md' in output


def test_raw_result_folders_and_the_checkers_own_tests_are_not_scanned(tmp_path):
    code_tree(tmp_path)
    write(tmp_path, "docs/results/bench/run.sh", "# README, \"gone\"\n")
    write(tmp_path, "deploy-tests/test_refs.py", "PLANTED = 'k8s/README-deployment.md'\n")
    output = passes(tmp_path)


def test_a_comment_citing_a_missing_tool_fails_and_written_or_placeholder_paths_do_not(tmp_path):
    code_tree(tmp_path)
    write(tmp_path, ".gitignore", "target/\n/load-tests/results/\n")
    write(tmp_path, "load-tests/run.sh", "#!/bin/sh\n# the fault drill: exec load-tests/faults.sh\n"
          "# writes load-tests/results/run-1/summary.json and target/x.json; schemas in k8s/GROUP/KIND.json\n")
    output = fails(tmp_path)
    assert "load-tests/run.sh:2: load-tests/faults.sh: no such file" in output
    assert "results/run-1" not in output and "target/x.json" not in output and "GROUP" not in output


def test_a_page_naming_a_missing_file_or_anchor_in_prose_or_a_command_fails(tmp_path):
    code_tree(tmp_path)
    write(tmp_path, "scripts/profile/breakdown.py", "")
    write(tmp_path, "docs/testing.md",
          "# Testing\n\nAs `docs/operations.md#no-such-anchor` says:\n\n"
          "```\nscripts/profile.sh PID 30 /tmp/api.collapsed\n```\n")
    output = fails(tmp_path)
    assert ("docs/testing.md:3: docs/operations.md#no-such-anchor: no heading '#no-such-anchor' in "
            "docs/operations.md") in output
    assert "docs/testing.md:6: scripts/profile.sh: no such file" in output
