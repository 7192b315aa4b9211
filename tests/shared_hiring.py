"""The hiring demo built once and shared by the tests that roll back over it.

Building the demo takes 24 service calls, more time than most of the tests that use it take to
run. So for a test that uses `hiring` inside a rolled-back transaction (pytest-django's `db`,
not `transactional_db`), the demo is built once into an outer transaction left open while such
tests run one after another. Each test's own transaction is then a savepoint inside it, rolled
back at the test's end exactly as before, so whatever a test writes is gone for the next one;
the test gets its own copy of the demo's objects and an empty name cache, as when it built
the demo itself. Before any other test runs, the outer transaction is rolled back, so no other
test ever sees the demo. Within a module the tests that share it run last (`grouped`), so it is
built about once per module rather than once per test.

The hooks in tests/conftest.py drive it: `before_test` and `after_test` around every test, the
`shared_hiring_demo` session fixture to reach it, `grouped` at collection.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from pytest_django.fixtures import validate_django_db

from workflow import name_index

TRANSACTIONAL_FIXTURES = {
    "transactional_db",
    "live_server",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
}


def shares_the_demo(item: pytest.Item) -> bool:
    """Whether this test uses `hiring` inside a transaction rolled back at its end."""
    names = getattr(item, "fixturenames", ())
    if "hiring" not in names or TRANSACTIONAL_FIXTURES & set(names):
        return False
    marker = item.get_closest_marker("django_db")
    if marker is None:
        return True
    commits, resets_sequences, _, restores, _ = validate_django_db(marker)
    return not (commits or resets_sequences or restores)


class SharedDemo:
    """The outer transaction holding the demo, opened and rolled back around groups of tests."""

    def __init__(self, db_blocker: Any, build: Callable[[], Any]) -> None:
        self._db_blocker = db_blocker
        self._build = build
        self._atomic: Any = None
        self._demo: Any = None

    @property
    def is_open(self) -> bool:
        return self._atomic is not None

    def open(self) -> None:
        with self._db_blocker.unblock():
            self._atomic = transaction.atomic()
            self._atomic.__enter__()
            self._demo = self._build()

    def close(self) -> None:
        atomic, self._atomic, self._demo = self._atomic, None, None
        with self._db_blocker.unblock():
            if connection.atomic_blocks != [atomic]:
                raise RuntimeError(
                    "a test left a transaction open over the shared hiring demo; "
                    f"open blocks: {connection.atomic_blocks!r}"
                )
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)

    def for_this_test(self) -> Any | None:
        """The test's own copy of the demo, or None when this test must build its own."""
        if not self.is_open:
            return None
        if connection.atomic_blocks[:1] != [self._atomic] or len(connection.atomic_blocks) < 2:
            raise RuntimeError(
                "this test commits (it is transactional), so it cannot share the hiring demo, "
                "but the suite could not tell: mark it @pytest.mark.django_db(transaction=True)"
            )
        # Its record IDs are the same in every test that shares it: a name list cached by an
        # earlier test (for writes since rolled back) must not answer this one.
        name_index.clear_cache()
        return copy.deepcopy(self._demo)


_demo: SharedDemo | None = None
_current: pytest.Item | None = None


def start(db_blocker: Any, build: Callable[[], Any]) -> SharedDemo:
    """Once per session, when the first test using `hiring` starts (the database exists)."""
    global _demo
    _demo = SharedDemo(db_blocker, build)
    if _current is not None and shares_the_demo(_current):
        _demo.open()  # before this test's own transaction, which is set up after this fixture
    return _demo


def stop() -> None:
    global _demo
    if _demo is not None and _demo.is_open:
        _demo.close()
    _demo = None


def before_test(item: pytest.Item) -> None:
    """Before the test's fixtures: the demo is open exactly when this test shares it."""
    global _current
    _current = item
    if _demo is None:
        return
    if shares_the_demo(item):
        if not _demo.is_open:
            _demo.open()
    elif _demo.is_open:
        _demo.close()


def after_test(nextitem: pytest.Item | None) -> None:
    """After the test's teardown: close the demo unless the next test shares it too."""
    if _demo is not None and _demo.is_open and (nextitem is None or not shares_the_demo(nextitem)):
        _demo.close()


def grouped(items: list[pytest.Item]) -> None:
    """Reorder in place: within each module, the tests sharing the demo run last, in order."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    items[:] = [
        item
        for module in modules.values()
        for sharing in (False, True)
        for item in module
        if shares_the_demo(item) is sharing
    ]
