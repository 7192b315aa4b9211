"""Run as a script: writers make real writes through the services while exports are taken.

    python -m tests.records.busy_export OUT_DIR EXPORTS

The database comes from the environment (ANCHOR_DB_PATH or DATABASE_URL). Each writer thread
has its own connection and, until the last export is written, creates a record, updates it,
links it to its previous one and archives every third. Each export waits until the writers
have committed more since the one before, so every file is taken mid-stream; the seeded
records make each export long enough for commits to land while it reads.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import django

WORKSPACE = "busy"
WRITERS = 3
SEEDED = 1500


def main(out_dir: Path, exports: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anchor_site.settings")
    django.setup()
    from django.db import connection

    from records import services
    from records.models import Record
    from records.services import CollectionFields, WriteContext
    from records.services.many import NewRecord
    from records.transfer import export_workspace

    services.workspace_ensure(WORKSPACE)
    setup = WriteContext(workspace_id=WORKSPACE, actor_id="setup")
    people = services.collection_create(
        ctx=setup,
        fields=CollectionFields.validated(
            name="people",
            purpose="Track people",
            record_meaning="A person",
            typical_fields=["n"],
            relationship_guidance="",
        ),
    )
    # Enough rows that an export takes long enough for the writers to commit during it.
    services.record_create_many(
        collection_id=people.pk,
        rows=[NewRecord(ctx=setup, title=f"seed {i}", data={"n": i}) for i in range(SEEDED)],
    )
    stop = threading.Event()
    changed = threading.Condition()
    commits = [0]
    failures: list[BaseException] = []

    def committed() -> None:
        with changed:
            commits[0] += 1
            changed.notify_all()

    def write(n: int) -> None:
        ctx = WriteContext(workspace_id=WORKSPACE, actor_id=f"writer-{n}")
        previous = None
        try:
            for i in range(10**6):
                if stop.is_set():
                    break
                record = services.record_create(
                    ctx=ctx, collection_id=people.pk, title=f"person {n}-{i}", data={}
                )
                committed()
                record = services.record_update(
                    ctx=ctx, record_id=record.pk, changes={"n": i}, expected_version=1
                )
                committed()
                if previous is not None:
                    services.relationship_create(
                        ctx=ctx,
                        source_id=record.pk,
                        relationship_type="knows",
                        target_id=previous.pk,
                    )
                    committed()
                previous = record
                if i % 3 == 2:
                    version = Record.objects.get(pk=record.pk).version
                    services.record_archive(ctx=ctx, record_id=record.pk, expected_version=version)
                    committed()
                    previous = None  # an archived record takes no new links
        except (
            BaseException
        ) as exc:  # reported by the exit code; a thread's error is otherwise lost
            failures.append(exc)
            with changed:
                changed.notify_all()
        finally:
            connection.close()

    threads = [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    try:
        for index in range(exports):
            with changed:
                wanted = commits[0] + 5
                changed.wait_for(lambda: commits[0] >= wanted or bool(failures))  # noqa: B023
            if failures:
                break
            with open(out_dir / f"export-{index}.jsonl", "w", encoding="utf-8") as out:
                export_workspace(WORKSPACE, out)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    if failures:
        raise SystemExit(f"a writer failed: {failures[0]!r}")
    print(commits[0])


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
