"""The suite's order (tests/conftest.py, slow_files_first): whole files, those with more slow
tests that run first, which is the order pytest-xdist hands them out in."""

from __future__ import annotations

import pytest

from tests.conftest import slow_files_first


def slow_runs(items: list[pytest.Item]) -> list[tuple[str, int]]:
    """Each file in order, with how many of its tests are slow and not skipped."""
    files: dict[str, int] = {}
    for item in items:
        runs = bool(item.get_closest_marker("slow")) and not item.get_closest_marker("skip")
        name = item.nodeid.split("::", 1)[0]
        files[name] = files.get(name, 0) + runs
    return list(files.items())


def test_this_runs_files_are_whole_and_the_slowest_come_first(request):
    items = request.session.items
    files = [item.nodeid.split("::", 1)[0] for item in items]
    starts = [name for i, name in enumerate(files) if i == 0 or files[i - 1] != name]
    assert len(starts) == len(set(starts)), "a file's tests are split up"
    counts = [count for _, count in slow_runs(items)]
    assert counts == sorted(counts, reverse=True), slow_runs(items)


def test_reordering_keeps_each_files_own_order(request):
    """The order of this run's tests again: unchanged, nothing lost or repeated."""
    items = list(request.session.items)
    slow_files_first(items)
    assert [item.nodeid for item in items] == [item.nodeid for item in request.session.items]


def test_xdist_is_told_to_keep_the_order(pytestconfig):
    """Without --no-loadscope-reorder, xdist hands out files by test count alone."""
    assert pytestconfig.getoption("loadscopereorder") is False
