"""Demo data built once and shared by the tests that roll back over it (`hiring`, `teams`).

Building a demo costs more time than most of the tests that use it take to run: the hiring demo
is 24 service calls, the admin's two teams (tests/admin/teams.py) a few hundred queries. So for
a test that uses a demo inside a rolled-back transaction (pytest-django's `db`, not
`transactional_db`), the demo is built once into an outer transaction left open while such
tests run one after another. Each test's own transaction is then a savepoint inside it, rolled
back at the test's end exactly as before, so whatever a test writes is gone for the next one;
the test gets its own copy of the demo's objects and an empty name cache, as when it built the
demo itself. Before any other test runs, the outer transaction is rolled back, so no other test
ever sees the demo. Within a module the tests sharing a demo run last, grouped by demo
(`grouped`), so each demo is built about once per module rather than once per test. A test
that asks for two demos builds both itself: one outer transaction holds one demo.

A demo is a fixture name and a builder, given to `register` where the fixture is defined (the
hiring demo in tests/conftest.py, the teams in tests/admin/conftest.py); the fixture asks
`SharedDemos.for_this_test` first and builds its own data only when that says None. The hooks
in tests/conftest.py drive the rest: `before_test` and `after_test` around every test, the
`shared_demos` session fixture to reach it, `grouped` at collection.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from pytest_django.fixtures import validate_django_db

from workflow.names import cache as names_cache

TRANSACTIONAL_FIXTURES = {
    "transactional_db",
    "live_server",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
}

# fixture name -> the builder of its demo, called inside the outer transaction
_builders: dict[str, Callable[[], Any]] = {}


def register(name: str, build: Callable[[], Any]) -> None:
    """Share the demo the fixture `name` returns; `build` makes it (the database is open).

    The fixture must take `shared_demos`: a fixture of the same name elsewhere that does not
    is left alone.
    """
    _builders[name] = build


def _asks_for_a_shared_demo(item: pytest.Item, name: str) -> bool:
    """Whether the fixture `name` this test gets is a shared demo's, not another of that name."""
    info: Any = getattr(item, "_fixtureinfo", None)
    definitions: Any = info.name2fixturedefs.get(name) if info is not None else None
    return bool(definitions) and "shared_demos" in definitions[-1].argnames


def shared_by(item: pytest.Item) -> str | None:
    """The demo this test shares, or None when it builds what it uses itself."""
    names = set(getattr(item, "fixturenames", ()))
    wanted = {name for name in names & _builders.keys() if _asks_for_a_shared_demo(item, name)}
    if len(wanted) != 1 or TRANSACTIONAL_FIXTURES & names:
        return None
    marker = item.get_closest_marker("django_db")
    if marker is not None:
        commits, resets_sequences, _, restores, _ = validate_django_db(marker)
        if commits or resets_sequences or restores:
            return None
    return next(iter(wanted))


class SharedDemos:
    """The outer transaction holding one demo, opened and rolled back around groups of tests."""

    def __init__(self, db_blocker: Any) -> None:
        self._db_blocker = db_blocker
        self._atomic: Any = None
        self._name: str | None = None
        self._demo: Any = None

    @property
    def open_demo(self) -> str | None:
        """The name of the demo built in the open outer transaction, if one is open."""
        return self._name

    def open(self, name: str) -> None:
        with self._db_blocker.unblock():
            self._atomic = transaction.atomic()
            self._atomic.__enter__()
            self._name = name
            self._demo = _builders[name]()

    def close(self) -> None:
        atomic, self._atomic, self._name, self._demo = self._atomic, None, None, None
        with self._db_blocker.unblock():
            if connection.atomic_blocks != [atomic]:
                raise RuntimeError(
                    "a test left a transaction open over a shared demo; "
                    f"open blocks: {connection.atomic_blocks!r}"
                )
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)
        # Names the demo's build cached are of rows rolled back just now.
        names_cache.clear_cache()

    def for_this_test(self, name: str) -> Any | None:
        """The test's own copy of the demo, or None when this test must build its own."""
        if self._name != name:
            return None
        if connection.atomic_blocks[:1] != [self._atomic] or len(connection.atomic_blocks) < 2:
            raise RuntimeError(
                f"this test commits (it is transactional), so it cannot share the {name} demo, "
                "but the suite could not tell: mark it @pytest.mark.django_db(transaction=True)"
            )
        # Its record IDs are the same in every test that shares it: a name list cached by an
        # earlier test (for writes since rolled back) must not answer this one.
        names_cache.clear_cache()
        return copy.deepcopy(self._demo)


_demos: SharedDemos | None = None
_current: pytest.Item | None = None


def start(db_blocker: Any) -> SharedDemos:
    """Once per session, when the first test using a demo starts (the database exists)."""
    global _demos
    _demos = SharedDemos(db_blocker)
    name = shared_by(_current) if _current is not None else None
    if name is not None:
        _demos.open(name)  # before this test's own transaction, which is set up after this
    return _demos


def stop() -> None:
    global _demos
    if _demos is not None and _demos.open_demo is not None:
        _demos.close()
    _demos = None


def before_test(item: pytest.Item) -> None:
    """Before the test's fixtures: the open demo is exactly the one this test shares."""
    global _current
    _current = item
    if _demos is None:
        return
    name = shared_by(item)
    if _demos.open_demo not in (None, name):
        _demos.close()
    if name is not None and _demos.open_demo is None:
        _demos.open(name)


def after_test(nextitem: pytest.Item | None) -> None:
    """After the test's teardown: close the demo unless the next test shares it too."""
    if _demos is None or _demos.open_demo is None:
        return
    if nextitem is None or shared_by(nextitem) != _demos.open_demo:
        _demos.close()


def grouped(items: list[pytest.Item]) -> None:
    """Reorder in place: within each module, the tests sharing a demo run last, by demo."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    # A stable sort: "" (shares nothing) first, then one run of tests per demo, in file order.
    items[:] = [
        item
        for module in modules.values()
        for item in sorted(module, key=lambda item: shared_by(item) or "")
    ]
