"""`manage.py test` runs the pytest suite: the same tests, fixtures and settings as `pytest`.

The suite is written for pytest and pytest-django (fixtures, marks, conftest plugins), which
Django's unittest-based DiscoverRunner cannot collect. This runner accepts the `test` command's
labels and the options that mean something to pytest, turns them into pytest arguments, and
reports pytest's exit status as the failure count, so any nonzero status (failures, errors,
a usage error, or nothing collected) makes the command exit nonzero. `--parallel` is
pytest-xdist's `-n`, each worker with a test database of its own, as `pytest -n` runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from argparse import ArgumentParser
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError


class PytestTestRunner:
    """TEST_RUNNER for Django's `test` command; see the module docstring."""

    def __init__(
        self,
        verbosity: int = 1,
        failfast: bool = False,
        keepdb: bool = False,
        test_name_patterns: Sequence[str] | None = None,
        parallel: int | str = 0,
        pdb: bool = False,
        collect_only: bool = False,
        no_color: bool = False,
        force_color: bool = False,
        **_options_without_a_pytest_meaning: Any,
    ) -> None:
        self.verbosity = verbosity
        self.failfast = failfast
        self.keepdb = keepdb
        self.test_name_patterns = list(test_name_patterns or [])
        self.parallel = parallel
        self.pdb = pdb
        self.collect_only = collect_only
        self.no_color = no_color
        self.force_color = force_color

    @classmethod
    def add_arguments(cls, parser: ArgumentParser) -> None:
        # Only these are offered: an option of DiscoverRunner's that pytest cannot honour
        # (--shuffle, --tag, --debug-sql...) is then an argparse error, never silently ignored.
        parser.add_argument(
            "--failfast", action="store_true", help="Stop at the first failure (pytest -x)."
        )
        parser.add_argument(
            "--keepdb",
            action="store_true",
            help="Keep the test database between runs (pytest-django --reuse-db).",
        )
        parser.add_argument(
            "-k",
            action="append",
            dest="test_name_patterns",
            help="Only tests matching this pytest -k expression; repeated -k are or-ed.",
        )
        parser.add_argument(
            "--parallel",
            nargs="?",
            const="auto",
            default=0,
            metavar="N",
            help=(
                "Run in N worker processes, or one per core without N (pytest-xdist's -n). "
                "Without it the configured default applies (pyproject.toml's addopts)."
            ),
        )
        parser.add_argument(
            "--pdb", action="store_true", help="Open pdb at a failure or error (pytest --pdb)."
        )
        parser.add_argument(
            "--collect-only",
            action="store_true",
            help="List the tests the labels select without running them (pytest --collect-only).",
        )

    def pytest_args(self, test_labels: Sequence[str]) -> list[str]:
        args: list[str] = []
        if self.parallel:  # 0 and None are Django's "not asked for"
            args += ["-n", _worker_count(self.parallel)]
        if self.verbosity == 0:
            args.append("-q")
        elif self.verbosity >= 2:  # Django's 2 and 3 are pytest's -v and -vv
            args.append("-" + "v" * (self.verbosity - 1))
        if self.failfast:
            args.append("-x")
        if self.keepdb:
            args.append("--reuse-db")
        if self.test_name_patterns:
            args += ["-k", " or ".join(f"({p})" for p in self.test_name_patterns)]
        if self.pdb:
            args.append("--pdb")
        if self.collect_only:
            args.append("--collect-only")
        if self.no_color:
            args.append("--color=no")
        elif self.force_color:
            args.append("--color=yes")
        root = Path(settings.BASE_DIR)
        return args + [pytest_target(label, root, Path.cwd()) for label in test_labels]

    def run_tests(self, test_labels: Sequence[str], **_kwargs: Any) -> int:
        # A fresh interpreter, not pytest.main() in this one: manage.py has already set up
        # Django and imported every app (and the MCP SDK), which pytest would find loaded
        # before its assertion rewriting and plugins, so the run would differ from `pytest`.
        # It starts in the project root, as `uv run pytest` does, so pyproject.toml's
        # configuration (testpaths, markers, strict options) applies wherever manage.py was
        # started from. The environment is inherited: --settings reaches pytest-django too.
        root, cwd = Path(settings.BASE_DIR), Path.cwd()
        # pytest run in parallel reports a path it cannot find as "0 items", not by name.
        missing = [label for label in test_labels if _names_nothing(label, root, cwd)]
        if missing:
            raise CommandError(
                f"not found: {', '.join(missing)} (no test module, package, class or path of "
                "that name)."
            )
        command = [sys.executable, "-m", "pytest", *self.pytest_args(test_labels)]
        return subprocess.run(command, cwd=settings.BASE_DIR, check=False).returncode


def _worker_count(parallel: int | str) -> str:
    """Django's --parallel value as xdist's -n: a positive count, or "auto" (one per core)."""
    if str(parallel) == "auto":
        return "auto"
    try:
        count = int(parallel)
    except ValueError:
        count = 0
    if count < 1:
        raise CommandError(f"--parallel takes a number of processes or 'auto', not {parallel!r}.")
    return str(count)


def pytest_target(label: str, root: Path, cwd: Path) -> str:
    """A test label as pytest's argument: a path (from `cwd`) as given, a dotted name converted.

    `tests.records.test_search.test_text_bounds` becomes
    `tests/records/test_search.py::test_text_bounds`, and a class's method `...py::Class::test`.
    The result is relative to `root`, where pytest runs. A dotted label naming nothing is
    passed on unchanged, so pytest reports it as not found.
    """
    file_part, sep, node_part = label.partition("::")
    if sep or "/" in label or os.sep in label or label.endswith(".py") or (cwd / label).exists():
        return _from_root(cwd / file_part, root) + sep + node_part
    parts = label.split(".")
    for length in range(len(parts), 0, -1):
        base = root.joinpath(*parts[:length])
        rest = parts[length:]
        if base.with_suffix(".py").is_file():
            return "::".join([_from_root(base.with_suffix(".py"), root), *rest])
        if base.is_dir() and not rest:
            return _from_root(base, root)
    return label


def _names_nothing(label: str, root: Path, cwd: Path) -> bool:
    """True when the label is neither a dotted name of the suite nor an existing path."""
    if pytest_target(label, root, cwd) != label:
        return False
    file_part = label.partition("::")[0]
    return not (cwd / file_part).exists() and not (root / file_part).exists()


def _from_root(path: Path, root: Path) -> str:
    absolute = Path(os.path.abspath(path))
    return str(absolute.relative_to(root)) if absolute.is_relative_to(root) else str(absolute)
