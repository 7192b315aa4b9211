"""SQL fragments with their parameters, and the per-connection functions SQLite needs. User
values (JSON paths included) travel only as parameters."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import connection

from records.validation import canonical_json


@dataclass(frozen=True)
class Sql:
    text: str
    params: tuple[Any, ...] = ()

    def __and__(self, other: Sql) -> Sql:
        return Sql(f"({self.text}) AND ({other.text})", self.params + other.params)

    def __or__(self, other: Sql) -> Sql:
        return Sql(f"({self.text}) OR ({other.text})", self.params + other.params)

    def wrap(self, template: str, *extra: Any) -> Sql:
        """Place this fragment at {} in template; extra params follow this fragment's params."""
        return Sql(template.format(self.text), self.params + extra)


def compose(template: str, *parts: Sql) -> Sql:
    """Each part at its {} in template (other braces doubled), their params in that order."""
    return Sql(template.format(*(p.text for p in parts)), tuple(x for p in parts for x in p.params))


def joined(parts: Iterable[Sql], separator: str) -> Sql:
    parts = list(parts)
    return compose(separator.join(["{}"] * len(parts)), *parts)


def all_of(parts: Iterable[Sql]) -> Sql:
    parts = list(parts)
    return joined((p.wrap("({})") for p in parts), " AND ") if parts else Sql("1 = 1")


def any_of(parts: Iterable[Sql]) -> Sql:
    return joined((p.wrap("({})") for p in parts), " OR ")


def placeholders(values: list[Any]) -> Sql:
    return Sql(", ".join(["%s"] * len(values)), tuple(values))


# A record's links per direction: (direction, the record's own column, the other end's).
LINK_SIDES = (("outgoing", "source_id", "target_id"), ("incoming", "target_id", "source_id"))


def link_sides(direction: str) -> list[tuple[str, str, str]]:
    """The LINK_SIDES a direction ("outgoing", "incoming" or "both") reads."""
    return [side for side in LINK_SIDES if direction in (side[0], "both")]


def of_types(types: list[str] | None) -> Sql:
    """The links of rel restricted to these types; no restriction for None."""
    return placeholders(types).wrap(" AND rel.relationship_type IN ({})") if types else Sql("")


def vendor() -> str:
    return connection.vendor


def fetch_all(sql: Sql) -> list[tuple[Any, ...]]:
    prepare_connection()
    with connection.cursor() as cursor:
        cursor.execute(sql.text, sql.params)
        rows: list[tuple[Any, ...]] = cursor.fetchall()
        return rows


def prepare_connection() -> None:
    """Register SQLite's Python functions on the live connection (cheap; idempotent), per query
    so that a connection opened before this module was imported is covered too."""
    if connection.vendor != "sqlite":
        return
    connection.ensure_connection()
    raw = connection.connection
    raw.create_function("anchor_casefold", 1, _casefold, deterministic=True)
    raw.create_function("anchor_canonical_json", 1, _canonical_json, deterministic=True)


def _casefold(value: Any) -> Any:
    return value.casefold() if isinstance(value, str) else value


def _canonical_json(value: Any) -> Any:
    if value is None:
        return None
    return canonical_json(json.loads(value))
