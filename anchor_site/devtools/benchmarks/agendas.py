"""Agendas against the guarded write timed beside them, in process, in a collection of the
store of `--records` records (at most 50,000) restored from an export (locks.restored_store):

- an agenda step (complete, then next) on an agenda of 100 bound records, its event log
  growing from 2 to about 200 events while it is worked through, against one guarded write
  (resolve_record -> prepare_write update_record citing it -> commit_write) of a record of the
  same collection, the two timed in alternation;
- agenda_sync_records of the finished agenda (100 bound records, each completed) against the
  same guarded write.

A missed row is explained (unless profiling is off) by one more agenda worked through untimed
and synced twice: its statements grouped by shape with their time at the driver, then under
cProfile.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from typing import Any

from anchor_site.devtools.benchmarks import data, locks, profile
from anchor_site.devtools.benchmarks.measure import Row, Samples, Sizes, timed_row
from anchor_site.devtools.benchmarks.server import update_action
from records import services
from records.services import NewRecord, WriteContext
from workflow.actions import commit_write, prepare_write
from workflow.agendas.lifecycle import acknowledge, control
from workflow.agendas.steps import agenda_start, step
from workflow.agendas.sync import sync_records
from workflow.resolution import resolve_record
from workflow.scope import Scope

BOUND = 100
SYNC_RATIO = 10  # a sync of BOUND records may cost this many guarded writes
STEP_RATIO = 3  # an agenda step may cost this many guarded writes
ROUNDS = 3  # agendas worked through and synced: the sync row is their median


class Guarded:
    """One record updated by a guarded write per call, as an agent does."""

    def __init__(self, scope: Scope, ctx: WriteContext, collection_id: str) -> None:
        self.scope = scope
        self.collection_id = collection_id
        self.record_id = services.record_create(
            ctx=ctx,
            collection_id=collection_id,
            title="Agenda benchmark counter",
            data={"n": 0},
        ).pk
        self.version = 1

    def write(self) -> float:
        started = time.perf_counter()
        review = resolve_record(self.scope, query=self.record_id, collection_id=self.collection_id)
        action = update_action(review, {"n": self.version}, self.version, "guarded write")
        prepared = prepare_write(self.scope, **action)
        outcome = commit_write(self.scope, action_id=prepared["action_id"])
        assert outcome["status"] == "committed", outcome
        self.version += 1
        return time.perf_counter() - started


def _cursor(state: dict[str, Any]) -> dict[str, Any]:
    return {"agenda_id": state["agenda_id"], "cursor_token": state["cursor_token"]}


def _worked_agenda(
    scope: Scope,
    ctx: WriteContext,
    collection_id: str,
    round_: int,
    guarded: Guarded,
    steps: Samples,
    writes: Samples,
) -> dict[str, Any]:
    """A finished agenda of BOUND bound records, each completed; its steps' and the guarded
    writes' times, taken in alternation, added to `steps` and `writes`."""
    rows = [NewRecord(ctx=ctx, title=f"Chore {round_}-{n}", data={}) for n in range(BOUND)]
    records = services.record_create_many(collection_id=collection_id, rows=rows)
    started = agenda_start(
        scope,
        title=f"Benchmark chores {round_}",
        record_ids=[r.pk for r in records],
        source_reference="benchmark",
    )
    state = acknowledge(scope, **_cursor(started), presentation_id=started["presentation_id"])
    for number in range(BOUND):
        actions: list[tuple[str, str | None]] = [("complete", f"Chore {number} done.")]
        if number < BOUND - 1:
            actions.append(("next", None))
        for action, text in actions:
            state = steps.timed(partial(step, scope, **_cursor(state), action=action, text=text))
            writes.add(guarded.write())
    return control(scope, **_cursor(state), action="finish", text="All done.")


def _sync_profile(
    scope: Scope, ctx: WriteContext, collection_id: str, round_: int, guarded: Guarded
) -> list[str]:
    """Why a sync missed: two more agendas worked through untimed; the first synced with its
    statements captured, grouped by shape (IN lists folded) with their count and time at the
    driver; the second synced under cProfile."""

    def sync(number: int) -> Callable[[], Any]:
        state = _worked_agenda(scope, ctx, collection_id, number, guarded, Samples(), Samples())
        return partial(sync_records, scope, **_cursor(state))

    statements, wall = profile.captured(sync(round_))
    shapes: defaultdict[str, list[float]] = defaultdict(list)
    for sql, _params, seconds in statements:
        shapes[re.sub(r"\((?:%s, )+%s\)", "(...)", " ".join(sql.split()))[:150]].append(seconds)
    in_database = sum(seconds for _sql, _params, seconds in statements)
    lines = [
        "  profile of two more syncs, untimed: the first's SQL by shape, the second's Python",
        f"  {wall * 1000:.1f} ms wall: {in_database * 1000:.1f} ms in {len(statements)} SQL "
        f"statement(s) at the driver, {(wall - in_database) * 1000:.1f} ms in Python",
    ]
    for shape, times in sorted(shapes.items(), key=lambda item: -sum(item[1]))[:8]:
        lines.append(f"    {sum(times) * 1000:7.1f} ms {len(times):4}x  {shape}")
    return lines + profile.python(sync(round_ + 1))


def run(sizes: Sizes) -> list[Row]:
    store, built = locks.restored_store(min(sizes.records, locks.STORE))
    scope = Scope(store.workspace_id, data.ACTOR)
    ctx = WriteContext(
        workspace_id=store.workspace_id, actor_id=data.ACTOR, decision_reason=data.REASON
    )
    # The store's first collection (a fifth of its records) holds the chores and the counter.
    collection_id = store.collections[0]
    guarded = Guarded(scope, ctx, collection_id)
    for _ in range(3):
        guarded.write()  # warm: the collection's names, the model of each tool
    steps, step_writes, syncs, sync_writes = Samples(), Samples(), Samples(), Samples()
    events = 0
    for round_ in range(ROUNDS):
        state = _worked_agenda(scope, ctx, collection_id, round_, guarded, steps, step_writes)
        events = state["revision"]
        synced = syncs.timed(partial(sync_records, scope, **_cursor(state)))
        assert synced["sync"]["counts"] == {"synced": BOUND}, synced["sync"]["counts"]
        sync_writes.seconds += [guarded.write() for _ in range(5)]
    guarded_what = "one guarded write (resolve_record, prepare_write update_record, commit_write)"
    rows = [
        timed_row(
            f"agenda step (complete / next), {BOUND} bound items, log of 2-{events} events",
            steps,
            at_most=(STEP_RATIO, step_writes, "a guarded write"),
            reference_what=f"{guarded_what}, timed in alternation",
            note=built,
        ),
        timed_row(
            f"agenda_sync_records of {BOUND} bound records, all completed",
            syncs,
            at_most=(SYNC_RATIO, sync_writes, "a guarded write"),
            reference_what=f"{guarded_what}, timed after each sync",
            note=f"{len(syncs.seconds)} sync(s); {built}",
        ),
    ]
    if rows[1].passed is False and sizes.profile:
        rows[1].profile = _sync_profile(scope, ctx, collection_id, ROUNDS, guarded)
    return rows
