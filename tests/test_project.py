"""Project-wide facts: migrations match the models, and the layout is the one DESIGN.md fixes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tokenize
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

REPO_ROOT = Path(__file__).resolve().parents[1]

TOP_LEVEL = {
    "manage.py",
    "pyproject.toml",
    "uv.lock",
    "README.md",
    "CONTRIBUTING.md",
    "CHANGELOG.md",
    "docs",
    "anchor_site",
    "records",
    "workflow",
    "templates",
    "tests",
}


@pytest.mark.django_db
def test_migrations_match_the_models():
    out = StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit as exit_:  # --check exits 1 when a migration is missing
        pytest.fail(f"models changed without a migration:\n{out.getvalue()} (exit {exit_.code})")


def tracked_files() -> list[str]:
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("needs a git checkout to tell tracked files from local ones")
    listed = subprocess.run(
        ["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    return listed.stdout.splitlines()


def test_top_level_is_exactly_the_designed_layout():
    top = {path.split("/", 1)[0] for path in tracked_files()}
    visible = {name for name in top if not name.startswith(".")}
    assert visible == TOP_LEVEL, (
        f"unexpected: {sorted(visible - TOP_LEVEL)}, missing: {sorted(TOP_LEVEL - visible)}"
    )
    assert top - visible <= {".ci", ".gitignore", ".python-version", ".gitattributes"}


def test_test_modules_follow_one_layout():
    """tests/test_<unit>.py for project-wide facts, tests/<area>/test_<unit>.py otherwise."""
    misplaced = [
        path
        for path in tracked_files()
        if path.startswith("tests/")
        and re.search(r"/test_[^/]*\.py$", path)
        and not re.fullmatch(r"tests/([a-z0-9_]+/)?test_[a-z0-9_]+\.py", path)
    ]
    assert misplaced == []


def test_dependency_pins_carry_their_reasons():
    lines = (REPO_ROOT / "pyproject.toml").read_text().splitlines()
    for pin in ('"django-mcp-server==0.5.7"', '"mcp>=1.27,<2"'):
        index = next((i for i, line in enumerate(lines) if line.strip().startswith(pin)), None)
        assert index is not None, f"{pin} is not pinned in pyproject.toml"
        assert lines[index - 1].strip().startswith("#"), f"{pin} has no reason written beside it"


def test_ci_script_is_executable_and_strict():
    script = REPO_ROOT / ".ci" / "run"
    assert os.access(script, os.X_OK), ".ci/run must be executable"
    assert "set -euo pipefail" in script.read_text()


def test_documentation_links_resolve():
    """Every relative link in the README and docs/ names a file that exists."""
    pages = [REPO_ROOT / "README.md", REPO_ROOT / "CONTRIBUTING.md", *REPO_ROOT.glob("docs/*.md")]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target:
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(REPO_ROOT)} -> {target}")
    assert broken == []


def import_cycles(graph: Any) -> list[list[str]]:
    """Strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> Iterator[str]:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        return iter(sorted(graph.find_modules_directly_imported_by(module)))

    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, visit(root))]
        while work:
            module, imported = work[-1]
            for other in imported:
                if other not in index:
                    work.append((other, visit(other)))
                    break
                if other in on_stack:
                    low[module] = min(low[module], index[other])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        other = stack.pop()
                        on_stack.discard(other)
                        component.append(other)
                        if other == module:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))
    return cycles


def test_no_import_cycles_anywhere():
    # grimp (import-linter's graph) counts function-level imports too: a deferred import that
    # closes a circle is still a circle.
    import grimp

    graph = grimp.build_graph("anchor_site", "records", "workflow")
    assert import_cycles(graph) == []
    graph.add_import(importer="records.models", imported="anchor_site.devtools.benchmarks.runner")
    assert any("records.models" in cycle for cycle in import_cycles(graph))


def kind_names(source: str) -> list[str]:
    """Where code names an action kind other than a single operation: the kind's stored name
    as a literal, or a constant of it."""
    found = []
    tokens = list(tokenize.generate_tokens(StringIO(source).readline))
    for at, token in enumerate(tokens):
        before = tokens[at - 2].string + tokens[at - 1].string if at > 1 else ""
        if (
            (token.type == tokenize.STRING and token.string.strip("\"'") in ("batch", "import"))
            or (token.type == tokenize.NAME and token.string == "BATCH")
            or (token.string == "OPERATION" and before == "imports.")
        ):
            found.append(f"{token.start[0]}: {token.line.strip()}")
    return found


def test_action_kinds_are_named_only_in_their_definitions():
    # A batch and an import are each one definition (workflow/action_kinds/), looked up by the
    # action's kind: code elsewhere asks the definition instead of branching on the name.
    named = {
        str(path.relative_to(REPO_ROOT)): found
        for folder in ("records", "workflow", "anchor_site")
        for path in sorted((REPO_ROOT / folder).rglob("*.py"))
        if "action_kinds" not in path.parts and "migrations" not in path.parts
        if (found := kind_names(path.read_text()))
    }
    assert named == {}
    assert kind_names('if action.operation == "batch":\n    pass\n')
    assert kind_names("from workflow import imports\nx = imports.OPERATION\n")
