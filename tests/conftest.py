"""Shared fixtures (write contexts, the small hiring demo), the backend markers, fast passwords.

`@pytest.mark.postgres` and `@pytest.mark.sqlite` say which database a test needs; on the other
one it is skipped, with the reason and the way to run it. CI runs the suite on both.
`@pytest.mark.backend_free` marks a costly subprocess test that touches no database at all: it
runs once, in the SQLite run.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.db import connection

from records import services
from records.models import Collection, Record
from records.services import CollectionFields, WriteContext
from tests import shared_data, table_reset
from tests.fast_passwords import use_one_round_hashing
from tests.shared_data import SharedDemos

WORKSPACE = "local"
OTHER_WORKSPACE = "elsewhere"
ACTOR = "local-agent"

# marker -> (the vendor it needs, why it is skipped elsewhere)
BACKEND_MARKERS = {
    "postgres": (
        "postgresql",
        "needs PostgreSQL: run with DATABASE_URL=postgres://USER@HOST:PORT/NAME",
    ),
    "sqlite": ("sqlite", "needs SQLite: run without DATABASE_URL"),
    # Subprocess tests whose commands touch no database: a second run would repeat the first.
    "backend_free": ("sqlite", "touches no database: runs once, in the SQLite run"),
}


def pytest_configure(config: pytest.Config) -> None:
    use_one_round_hashing()  # before any test makes a person with a password
    table_reset.install()  # a transactional test's teardown deletes rows instead of flushing


@pytest.hookimpl(trylast=True)  # after the areas' conftests have added their markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the developer tools' checks unless asked for; skip every test marked for the
    backend this run is not on; group the demo's sharers; put the files with the most slow
    tests first."""
    leave_out_tooling(config, items)
    shared_data.grouped(items)
    for item in items:
        for name, (vendor, reason) in BACKEND_MARKERS.items():
            if item.get_closest_marker(name) and connection.vendor != vendor:
                item.add_marker(pytest.mark.skip(reason=reason))
    slow_files_first(items)


def leave_out_tooling(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`uv run pytest` runs behaviour tests only. The checks of the developer tools (the
    benchmark's quick run, the `manage.py test` bridge's subprocesses) take minutes and test no
    behaviour of Anchor; they run when the marker expression names them (`-m tooling`), as
    `.ci/run` does after the README's command."""
    if "tooling" in (config.getoption("markexpr") or ""):
        return
    tooling = [item for item in items if item.get_closest_marker("tooling")]
    if tooling:
        config.hook.pytest_deselected(items=tooling)
        items[:] = [item for item in items if not item.get_closest_marker("tooling")]


def slow_files_first(items: list[pytest.Item]) -> None:
    """Reorder in place: whole files, those with more slow tests that will run first, then
    those with more tests; each file's own order is kept.

    pytest-xdist hands out files in this order (`--no-loadscope-reorder` in pyproject.toml; its
    own order is by test count alone). A file of a few slow tests (servers, subprocesses) then
    starts while there is other work, instead of last, leaving the other core idle while it
    runs. The `slow` marker is the only duration the suite records; a skipped test costs nothing.
    """
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)

    def slow_runs(item: pytest.Item) -> bool:
        return bool(item.get_closest_marker("slow")) and not item.get_closest_marker("skip")

    ordered = sorted(files.values(), key=lambda tests: (-sum(map(slow_runs, tests)), -len(tests)))
    items[:] = [item for tests in ordered for item in tests]


@pytest.fixture(autouse=True, scope="session")
def every_tool_served() -> None:
    """The suite exercises every tool in process, as subprocess servers do (tests.e2e.server);
    the default (core) profile is tested where it is served on purpose."""
    from workflow.mcp.server import select_tools

    select_tools("full")


@pytest.fixture(autouse=True)
def forget_meaning_vectors() -> Iterator[None]:
    """Each test starts with no workspace's vectors cached: a rolled-back test's counters come
    back to the values the next test's counters reach with other records."""
    yield
    index = sys.modules.get("records.meaning.index")
    if index is not None:
        index.forget_cached()


@pytest.fixture
def ctx(db) -> WriteContext:
    services.workspace_ensure(WORKSPACE)
    return WriteContext(workspace_id=WORKSPACE, actor_id=ACTOR, decision_reason="test setup")


@pytest.fixture
def other_ctx(db) -> WriteContext:
    services.workspace_ensure(OTHER_WORKSPACE)
    return WriteContext(workspace_id=OTHER_WORKSPACE, actor_id=ACTOR, decision_reason="setup")


def make_collection(ctx: WriteContext, name: str, purpose: str | None = None) -> Collection:
    return services.collection_create(
        ctx=ctx,
        fields=CollectionFields.validated(
            name=name,
            purpose=purpose or f"Track {name}",
            record_meaning=f"One of the {name}",
            typical_fields=["notes"],
            relationship_guidance="",
        ),
    )


def make_record(ctx: WriteContext, collection: Collection, title: str, **data) -> Record:
    return services.record_create(ctx=ctx, collection_id=collection.pk, title=title, data=data)


def link(ctx: WriteContext, source: Record, relationship_type: str, target: Record):
    rel, _ = services.relationship_create(
        ctx=ctx, source_id=source.pk, relationship_type=relationship_type, target_id=target.pk
    )
    return rel


@dataclass
class Hiring:
    people: Collection
    openings: Collection
    applications: Collection
    interviews: Collection
    feedback: Collection
    kirat: Record
    abhishek: Record
    rahul_backend: Record
    rahul_frontend: Record
    backend: Record
    frontend: Record
    kirat_backend: Record
    kirat_frontend: Record
    abhishek_backend: Record
    coding_interview: Record


@pytest.fixture
def hiring(ctx: WriteContext, shared_demos: SharedDemos) -> Hiring:
    """Kirat, Abhishek and two Rahuls; two openings; applications; one coding interview.

    Built once and shared when the test rolls back (tests/shared_data.py), else built here.
    """
    return shared_demos.for_this_test("hiring") or build_hiring(ctx)


def _build_shared_hiring() -> Hiring:
    services.workspace_ensure(WORKSPACE)
    return build_hiring(
        WriteContext(workspace_id=WORKSPACE, actor_id=ACTOR, decision_reason="test setup")
    )


shared_data.register("hiring", _build_shared_hiring)


@pytest.fixture(scope="session")
def shared_demos(django_db_setup, django_db_blocker) -> Iterator[SharedDemos]:
    yield shared_data.start(django_db_blocker)
    shared_data.stop()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    shared_data.before_test(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    yield
    shared_data.after_test(nextitem)


def build_hiring(ctx: WriteContext) -> Hiring:
    people = make_collection(ctx, "people", "People we are hiring or working with")
    openings = make_collection(ctx, "openings", "Open roles we are hiring for")
    applications = make_collection(ctx, "applications", "A person's application to an opening")
    interviews = make_collection(ctx, "interviews", "Interviews held for an application")
    feedback = make_collection(ctx, "feedback", "An interviewer's assessment of an interview")
    kirat = make_record(ctx, people, "Kirat", email="kirat@example.com")
    abhishek = make_record(ctx, people, "Abhishek")
    rahul_backend = make_record(ctx, people, "Rahul", team="backend", city="Pune")
    rahul_frontend = make_record(ctx, people, "Rahul", team="frontend", city="Delhi")
    backend = make_record(ctx, openings, "Junior Backend", level="junior")
    frontend = make_record(ctx, openings, "Senior Frontend", level="senior")
    kirat_backend = make_record(ctx, applications, "Kirat - Junior Backend", stage="interview")
    kirat_frontend = make_record(ctx, applications, "Kirat - Senior Frontend", stage="applied")
    abhishek_backend = make_record(ctx, applications, "Abhishek - Junior Backend")
    coding = make_record(ctx, interviews, "Kirat backend coding interview", kind="coding")
    link(ctx, kirat_backend, "applicant", kirat)
    link(ctx, kirat_backend, "opening", backend)
    link(ctx, kirat_frontend, "applicant", kirat)
    link(ctx, kirat_frontend, "opening", frontend)
    link(ctx, abhishek_backend, "applicant", abhishek)
    link(ctx, abhishek_backend, "opening", backend)
    link(ctx, coding, "for_application", kirat_backend)
    return Hiring(
        people,
        openings,
        applications,
        interviews,
        feedback,
        kirat,
        abhishek,
        rahul_backend,
        rahul_frontend,
        backend,
        frontend,
        kirat_backend,
        kirat_frontend,
        abhishek_backend,
        coding,
    )
