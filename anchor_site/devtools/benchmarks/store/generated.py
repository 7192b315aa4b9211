"""A generated workspace written straight in the export's table order, for areas that need a
team-sized store restored through the export format (locks, agendas): five collections; per
record two versions, an alias, a link and audit events."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import models

from records.models import (
    AuditEvent,
    Collection,
    Record,
    RecordAlias,
    RecordVersion,
    Relationship,
)
from records.names import normalize_name

COLLECTIONS = 5
ACTOR = "bench-restore"


class Store:
    """The rows of one generated workspace, made on demand in the export's table order."""

    def __init__(self, workspace_id: str, records: int, seed: int) -> None:
        self.workspace_id = workspace_id
        self.records = records
        rng = random.Random(seed)
        self.ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(records)]
        self.collections = [
            str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(COLLECTIONS)
        ]
        self.start = datetime(2024, 1, 1, tzinfo=UTC)
        self.first_event = seed * 10_000_000

    def at(self, index: int, step: int = 0) -> datetime:
        return self.start + timedelta(seconds=index, microseconds=step)

    def tables(self) -> Iterator[tuple[type[models.Model], Iterator[models.Model]]]:
        yield Collection, self._collections()
        yield Record, self._records()
        yield RecordVersion, self._versions()
        yield RecordAlias, self._aliases()
        yield Relationship, self._links()
        yield AuditEvent, self._events()

    def _collections(self) -> Iterator[models.Model]:
        for n, pk in enumerate(self.collections):
            name = f"restore {n}"
            yield Collection(
                id=pk,
                workspace_id=self.workspace_id,
                name=name,
                normalized_name=normalize_name(name),
                purpose="Benchmark restore",
                typical_fields=["n"],
                created_by=ACTOR,
                created_at=self.start,
                updated_at=self.start,
            )

    def _state(self, i: int) -> tuple[str, dict[str, Any]]:
        return f"Person {i:06d}", {"n": i, "notes": f"note {i % 97} about {i}"}

    def _records(self) -> Iterator[models.Model]:
        for i, pk in enumerate(self.ids):
            title, data = self._state(i)
            yield Record(
                id=pk,
                workspace_id=self.workspace_id,
                collection_id=self.collections[i % COLLECTIONS],
                title=title,
                data={**data, "status": "open"},
                version=2,
                created_by=ACTOR,
                created_at=self.at(i),
                updated_at=self.at(i, 1),
            )

    def _versions(self) -> Iterator[models.Model]:
        for i, pk in enumerate(self.ids):
            title, data = self._state(i)
            aliases = [f"P{i}"] if i % 10 == 0 else []
            for version, extra in ((1, {}), (2, {"status": "open"})):
                yield RecordVersion(
                    id=self.first_event + 2 * i + version,
                    record_id=pk,
                    version=version,
                    title=title,
                    data={**data, **extra},
                    aliases=aliases,
                    actor_id=ACTOR,
                    recorded_at=self.at(i, version - 1),
                )

    def _aliases(self) -> Iterator[models.Model]:
        for i in range(0, self.records, 10):
            yield RecordAlias(
                id=self.first_event + i,
                workspace_id=self.workspace_id,
                record_id=self.ids[i],
                alias=f"P{i}",
                normalized_alias=normalize_name(f"P{i}"),
                created_by=ACTOR,
                created_at=self.at(i),
            )

    def _links(self) -> Iterator[models.Model]:
        for i in range(1, self.records):
            yield Relationship(
                id=self._link_id(i),
                workspace_id=self.workspace_id,
                source_id=self.ids[i],
                relationship_type="knows",
                target_id=self.ids[i - 1],
                created_by=ACTOR,
                created_at=self.at(i, 2),
            )

    def _link_id(self, i: int) -> str:
        return str(uuid.UUID(int=(int(self.ids[i].replace("-", ""), 16) ^ 1), version=4))

    def _events(self) -> Iterator[models.Model]:
        pk = self.first_event
        for i, record in enumerate(self.ids):
            collection = self.collections[i % COLLECTIONS]
            for step, kind in ((0, "record.created"), (1, "record.updated"), (2, "link.created")):
                if kind == "link.created" and i == 0:
                    continue
                pk += 1
                yield AuditEvent(
                    id=pk,
                    workspace_id=self.workspace_id,
                    actor_id=ACTOR,
                    kind=kind,
                    entity_type="relationship" if step == 2 else "record",
                    entity_id=self._link_id(i) if step == 2 else record,
                    record_id=record,
                    collection_id=collection,
                    after={"version": min(step + 1, 2)},
                    created_at=self.at(i, step),
                )
