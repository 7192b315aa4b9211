"""`manage.py test` is the pytest suite: same tests selected, pytest's verdict as the exit status.

The agreement and exit-status tests run the commands as subprocesses, as a person or CI would,
and compare the node IDs each collects.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management.base import CommandError

from tests.runner import PytestTestRunner, pytest_target

REPO_ROOT = Path(__file__).resolve().parents[1]
MANAGE = [sys.executable, str(REPO_ROOT / "manage.py"), "test"]
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]


def run(command: list[str], cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def node_ids(command: list[str], cwd: Path = REPO_ROOT) -> list[str]:
    """The node IDs a `--collect-only` quiet run lists; the run itself must succeed."""
    done = run(command, cwd)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [line for line in done.stdout.splitlines() if "::" in line]


# --- both commands collect the same tests --------------------------------------------------


# Options that leave out some of what the testpaths hold (by deselecting or not collecting).
NARROWING_OPTIONS = ("keyword", "markexpr", "deselect", "ignore", "ignore_glob", "lf", "stepwise")


def collected_whole_suite(config: pytest.Config) -> bool:
    """Whether this run collected what a bare `pytest` does: the testpaths, nothing left out."""
    return config.args_source is pytest.Config.ArgsSource.TESTPATHS and not any(
        getattr(config.option, name, None) for name in NARROWING_OPTIONS
    )


@pytest.fixture(scope="module")
def suite_by_pytest(request: pytest.FixtureRequest) -> list[str]:
    """What `pytest --collect-only` lists for the whole suite.

    When this run is itself a bare `pytest` (the README's command, CI), its session holds that
    list already, in the same order: collecting the whole suite again in a subprocess would
    add only its cost. Run on a part of the suite, it asks a subprocess.
    """
    if collected_whole_suite(request.config):
        nodes = [item.nodeid for item in request.session.items]
    else:
        nodes = node_ids([*PYTEST, "--collect-only", "-q"])
    assert any(node.startswith("tests/test_test_runner.py::") for node in nodes)
    return nodes


def under(nodes: list[str], *prefixes: str) -> list[str]:
    return [node for node in nodes if node.startswith(prefixes)]


@pytest.mark.tooling  # manage.py and pytest subprocesses: a check of the bridge, not behaviour
@pytest.mark.slow
@pytest.mark.backend_free  # they collect or run tests that use no database
def test_manage_py_test_collects_the_whole_suite_pytest_does(suite_by_pytest):
    assert node_ids([*MANAGE, "--collect-only", "-v", "0"]) == suite_by_pytest


@pytest.mark.tooling  # manage.py and pytest subprocesses: a check of the bridge, not behaviour
@pytest.mark.slow
@pytest.mark.backend_free  # they collect or run tests that use no database
def test_manage_py_test_collects_what_pytest_collects_for_an_area(suite_by_pytest):
    area = under(suite_by_pytest, "tests/records/")
    assert len(area) > 50, area
    assert node_ids([*MANAGE, "tests/records", "--collect-only", "-v", "0"]) == area


@pytest.mark.tooling  # manage.py and pytest subprocesses: a check of the bridge, not behaviour
@pytest.mark.slow
@pytest.mark.backend_free  # they collect or run tests that use no database
def test_dotted_and_relative_labels_select_the_same_modules(suite_by_pytest):
    """Typed in tests/: a dotted module name (from the project) and a path (from here)."""
    labels = ["tests.records.test_search", "records/test_selectors.py"]
    listed = node_ids([*MANAGE, *labels, "--collect-only", "-v", "0"], cwd=REPO_ROOT / "tests")
    expected = under(
        suite_by_pytest, "tests/records/test_search.py::", "tests/records/test_selectors.py::"
    )
    assert expected and listed == expected


# --- pytest's verdict is the command's exit status -----------------------------------------


@pytest.fixture
def verdicts(tmp_path) -> str:
    module = tmp_path / "test_verdicts.py"
    module.write_text(
        "def test_passes():\n    assert True\n\n\ndef test_fails():\n    assert 1 == 2\n"
    )
    return str(module)


@pytest.mark.tooling  # manage.py and pytest subprocesses: a check of the bridge, not behaviour
@pytest.mark.slow
@pytest.mark.backend_free  # they collect or run tests that use no database
def test_a_failing_test_makes_manage_py_test_exit_nonzero(verdicts):
    # that a passing selection exits 0 is test_parallel_runs_the_tests_in_that_many_workers's
    failing = run([*MANAGE, verdicts])
    assert failing.returncode != 0
    assert "1 failed, 1 passed" in failing.stdout, failing.stdout[-2000:]


@pytest.mark.tooling  # manage.py and pytest subprocesses: a check of the bridge, not behaviour
@pytest.mark.slow
@pytest.mark.backend_free  # they collect or run tests that use no database
def test_a_selection_of_nothing_is_a_failure_not_a_pass(verdicts):
    nothing = run([*MANAGE, verdicts, "-k", "no_test_is_named_this"])
    assert nothing.returncode != 0, nothing.stdout[-2000:]
    assert "2 deselected" in nothing.stdout, nothing.stdout[-2000:]
    unknown = run([*MANAGE, "tests.records.no_such_module"])
    assert unknown.returncode != 0
    assert "not found: tests.records.no_such_module" in unknown.stdout + unknown.stderr


@pytest.mark.tooling  # manage.py and pytest subprocesses: a check of the bridge, not behaviour
@pytest.mark.slow
@pytest.mark.backend_free  # they collect or run tests that use no database
def test_parallel_runs_the_tests_in_that_many_workers(verdicts):
    done = run([*MANAGE, verdicts, "--parallel", "2", "-k", "test_passes"])
    assert done.returncode == 0, done.stdout[-2000:]  # a passing selection exits 0
    assert "2 workers [1 item]" in done.stdout, done.stdout[-2000:]
    assert "1 passed" in done.stdout, done.stdout[-2000:]
    # --parallel 1 is xdist's -n 1 (test_parallel_is_the_number_of_xdist_workers): that -n
    # reaches pytest is shown above, so a second run of the command would add only its cost.


# --- Django's options as pytest arguments --------------------------------------------------


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, []),
        ({"verbosity": 0}, ["-q"]),
        ({"verbosity": 2}, ["-v"]),
        ({"verbosity": 3}, ["-vv"]),
        ({"failfast": True}, ["-x"]),
        ({"keepdb": True}, ["--reuse-db"]),
        ({"test_name_patterns": ["search"]}, ["-k", "(search)"]),
        ({"test_name_patterns": ["search", "not slow"]}, ["-k", "(search) or (not slow)"]),
        ({"pdb": True}, ["--pdb"]),
        ({"collect_only": True}, ["--collect-only"]),
        ({"no_color": True}, ["--color=no"]),
        ({"force_color": True}, ["--color=yes"]),
        ({"parallel": 0, "interactive": False, "settings": None}, []),
    ],
)
def test_options_become_pytest_arguments(options, expected):
    assert PytestTestRunner(**options).pytest_args([]) == expected


@pytest.mark.parametrize(
    ("parallel", "expected"),
    [(1, ["-n", "1"]), (2, ["-n", "2"]), ("3", ["-n", "3"]), ("auto", ["-n", "auto"])],
)
def test_parallel_is_the_number_of_xdist_workers(parallel, expected):
    assert PytestTestRunner(parallel=parallel).pytest_args([]) == expected


@pytest.mark.parametrize("parallel", [-1, "two"])
def test_a_parallel_that_is_no_count_is_refused(parallel):
    with pytest.raises(CommandError, match="--parallel takes a number of processes or 'auto'"):
        PytestTestRunner(parallel=parallel).pytest_args([])


def test_the_command_offers_only_options_pytest_can_honour():
    from django.core.management import load_command_class

    parser = load_command_class("django.core", "test").create_parser("manage.py", "test")
    offered = {option for action in parser._actions for option in action.option_strings}
    assert {"--failfast", "--keepdb", "-k", "--parallel", "--pdb", "--collect-only"} <= offered
    assert not {"--shuffle", "--reverse", "--tag", "--debug-sql", "--buffer"} & offered


# --- labels: paths as typed, dotted names as paths -----------------------------------------


@pytest.fixture
def tree(tmp_path) -> Path:
    (tmp_path / "tests" / "area").mkdir(parents=True)
    (tmp_path / "tests" / "area" / "test_unit.py").write_text("")
    return tmp_path


@pytest.mark.parametrize(
    ("label", "target"),
    [
        ("tests.area", "tests/area"),
        ("tests.area.test_unit", "tests/area/test_unit.py"),
        ("tests.area.test_unit.test_one", "tests/area/test_unit.py::test_one"),
        ("tests.area.test_unit.TestCase.test_one", "tests/area/test_unit.py::TestCase::test_one"),
        ("tests/area", "tests/area"),
        ("tests/area/test_unit.py::test_one", "tests/area/test_unit.py::test_one"),
        ("tests/nowhere", "tests/nowhere"),  # pytest reports a missing path itself
        ("tests.area.missing", "tests.area.missing"),  # and an unknown dotted name
    ],
)
def test_labels_from_the_project_root(tree, label, target):
    assert pytest_target(label, tree, tree) == target


def test_path_labels_are_relative_to_where_the_command_was_typed(tree, tmp_path_factory):
    assert pytest_target("area", tree, tree / "tests") == "tests/area"
    assert pytest_target("test_unit.py", tree, tree / "tests" / "area") == (
        "tests/area/test_unit.py"
    )
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    assert pytest_target("test_x.py", tree, elsewhere) == str(elsewhere / "test_x.py")


def test_dotted_labels_resolve_against_the_project_not_the_working_directory(tree):
    assert pytest_target("tests.area", tree, tree / "tests") == "tests/area"
