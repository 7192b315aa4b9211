"""A long history: the workspace filled up to `Sizes.events` audit events by the bulk path.

Day 300 of a project is a workspace whose audit log holds a million events, most of them about
records the agent is not looking at. The session rows (stdio, batches, writes, guarded) run on
that workspace, in a server started after it was built. The events are record.created events
of bulk task records (data.bulk_insert leaves each record with its event, as record_create
does), spread over the task collections the search rows read too, so one build serves both:
the search area only tops the records up to its own count.
"""

from __future__ import annotations

import time

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.measure import Row, Sizes
from records.models import AuditEvent, Collection, Record
from records.services import WriteContext

AREA = "history"
VOCABULARY_SEED = 11


def vocabulary() -> list[str]:
    """The words task titles and notes are drawn from (the search rows look one up)."""
    return data.words(5000, seed=VOCABULARY_SEED)


def task_collections(ctx: WriteContext, count: int) -> list[str]:
    """IDs of the `count` task collections, made the first time they are asked for."""
    ids = []
    for index in range(count):
        name = f"bench tasks {index}"
        found = Collection.objects.filter(workspace_id=data.WORKSPACE, name=name).first()
        ids.append(found.pk if found else data.collection(ctx, name).pk)
    return ids


def add_tasks(ctx: WriteContext, sizes: Sizes, count: int) -> None:
    """`count` more task records by the bulk path, spread evenly over the task collections;
    the seeds move on with what is stored, so a top-up adds new titles, not the same ones."""
    collections = task_collections(ctx, sizes.collections)
    words = vocabulary()
    stored = Record.objects.filter(collection_id__in=collections).count()
    per = count // len(collections)
    for index, collection_id in enumerate(collections):
        share = per if index else count - per * (len(collections) - 1)
        if share:
            data.bulk_insert(collection_id, data.tasks(share, words, seed=stored + index))


def build(sizes: Sizes, ctx: WriteContext) -> Row:
    """Fill the workspace up to sizes.events audit events; the row says how long it took."""
    task_collections(ctx, sizes.collections)  # their own events count towards the history
    existing = AuditEvent.objects.filter(workspace_id=data.WORKSPACE).count()
    missing = max(0, sizes.events - existing)
    started = time.perf_counter()
    add_tasks(ctx, sizes, missing)
    elapsed = time.perf_counter() - started
    total = AuditEvent.objects.filter(workspace_id=data.WORKSPACE).count()
    return Row(
        AREA,
        f"long history: {total:,} audit events in the workspace, {missing:,} added as bulk "
        "records (record + version + record.created event each)",
        elapsed,
        "s",
        note=f"{missing / elapsed:,.0f} records/s" if missing and elapsed else "",
    )


def events() -> int:
    return AuditEvent.objects.filter(workspace_id=data.WORKSPACE).count()
