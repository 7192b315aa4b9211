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


def all_of(parts: Iterable[Sql]) -> Sql:
    parts = list(parts)
    if not parts:
        return Sql("1 = 1")
    return Sql(
        " AND ".join(f"({part.text})" for part in parts),
        tuple(p for part in parts for p in part.params),
    )


def any_of(parts: Iterable[Sql]) -> Sql:
    parts = list(parts)
    return Sql(
        " OR ".join(f"({part.text})" for part in parts),
        tuple(p for part in parts for p in part.params),
    )


def placeholders(values: list[Any]) -> Sql:
    return Sql(", ".join(["%s"] * len(values)), tuple(values))


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
