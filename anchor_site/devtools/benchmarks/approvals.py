"""A person's approval against the length of the queue (200 waiting beside 5, alternately, each
queue a workspace of its own), and a bulk approval of 50 at 200 waiting. The approval timed is
a new person's creation: the write that moves the names every waiting review depends on."""

from __future__ import annotations

import time
from itertools import count
from typing import Any

from django.db.models import QuerySet

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.measure import Row, Samples, timed_row
from records import services
from records.errors import AnchorError
from records.models import Record
from records.services import WriteContext
from workflow.actions import approve_prepared_action, commit_write, prepare_write
from workflow.models import ActionState, PreparedAction
from workflow.resolution import resolve_record
from workflow.scope import Scope

SMALL, LARGE, BULK = 5, 200, 50
ROUNDS = 7
REVIEWER = "user:bench-reviewer"


class Queue:
    """A workspace of its own: what is waiting elsewhere does not count."""

    def __init__(self, size: int) -> None:
        self.workspace_id = f"{data.WORKSPACE}-approvals-{size}"
        services.workspace_ensure(self.workspace_id)
        ctx = WriteContext(
            workspace_id=self.workspace_id, actor_id=data.ACTOR, decision_reason=data.REASON
        )
        self.scope = Scope(self.workspace_id, data.ACTOR)
        self.collection = data.collection(ctx, "bench approvals")
        for name in data.person_names(size + BULK + ROUNDS, seed=11):
            services.record_create(
                ctx=ctx, collection_id=self.collection.pk, title=name, data={"n": 1}
            )
        services.collection_set_requires_approval(
            ctx=ctx, collection_id=self.collection.pk, requires_approval=True
        )
        self.records = iter(
            Record.objects.filter(collection_id=self.collection.pk).order_by("title")
        )
        self.new_names = (f"Newcomer {n}" for n in count())

    def pending(self) -> QuerySet[PreparedAction]:
        return PreparedAction.objects.filter(
            workspace_id=self.workspace_id, state=ActionState.AWAITING_APPROVAL
        )

    def _held(self, operation: str, arguments: dict[str, Any], query: str) -> str:
        review = resolve_record(self.scope, query=query, collection_id=self.collection.pk)
        prepared = prepare_write(
            self.scope,
            operation=operation,
            arguments=arguments,
            review_ids=[review["resolution_id"]],
            decision_reason="benchmark: the user asked for it",
            clarification="The user confirmed which one.",
        )
        held = commit_write(self.scope, action_id=prepared["action_id"])
        assert held["status"] == "awaiting_approval", held
        return str(prepared["action_id"])

    def fill(self, size: int) -> None:
        """Waiting updates until `size` writes wait."""
        for _ in range(size - self.pending().count()):
            record = next(self.records)
            changes = {"changes": {"stage": "offer"}, "expected_version": record.version}
            self._held("update_record", {"record_id": record.pk, **changes}, record.title)

    def time_create_approval(self, size: int) -> float:
        """One creation approved with `size` writes waiting (itself included)."""
        self.fill(size - 1)
        title = next(self.new_names)
        arguments = {"collection_id": self.collection.pk, "title": title, "data": {}}
        action_id = self._held("create_record", arguments, title)
        started = time.perf_counter()
        approve_prepared_action(action_id=action_id, reviewer=REVIEWER, described=f"add {title}")
        return time.perf_counter() - started

    def bulk(self, size: int) -> tuple[float, int, int]:
        """The `size` oldest waiting writes approved one after another, as the admin's bulk
        action does: (seconds, applied, refused)."""
        oldest = list(self.pending().order_by("created_at").values_list("pk", flat=True)[:size])
        applied = refused = 0
        started = time.perf_counter()
        for action_id in oldest:
            try:
                approve_prepared_action(action_id=action_id, reviewer=REVIEWER)
                applied += 1
            except AnchorError:
                refused += 1
        return time.perf_counter() - started, applied, refused


def run() -> list[Row]:
    short, long = Queue(SMALL), Queue(LARGE)
    small, large = Samples(warmup=1), Samples(warmup=1)  # round 0 warms the code paths
    for _ in range(ROUNDS + 1):
        small.add(short.time_create_approval(SMALL))
        large.add(long.time_create_approval(LARGE))
    long.fill(LARGE)
    waiting = long.pending().count()
    seconds, applied, refused = long.bulk(BULK)
    return [
        timed_row(
            f"approve a creation with {LARGE} writes waiting in its collection",
            large,
            at_most=(1.5, small, f"the same approval at {SMALL} waiting"),
            reference_what=f"the same approval with {SMALL} waiting, same run",
            note=f"median of {ROUNDS}",
        ),
        Row(
            f"bulk approval of the {BULK} oldest with {waiting} waiting",
            seconds,
            "s",
            target="well within a proxy's 60 s (<= 30 s)",
            passed=seconds <= 30,
            note=f"{applied} applied, {refused} refused (each with its reason)",
        ),
    ]
