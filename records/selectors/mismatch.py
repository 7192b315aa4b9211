"""Why a search found nothing, when the reason is a value of the wrong JSON type or a path
that starts above the record's data.

`where` comparisons are typed (`"100000"` matches only strings), so after an empty first page
each typed condition is checked once: if the scope stores that field as another type, the reply
says what to send instead; likewise a path such as ["data", "amount"] gets ["amount"]."""

from __future__ import annotations

import json
from typing import Any

from records.field_paths import data_keys
from records.selectors.conditions import OPERATORS, Condition, Criteria, criteria_sql, value_kind
from records.selectors.jsonpath import SQLITE_TYPES, DataField
from records.selectors.sql import Sql, all_of, compose, fetch_all

# Each check is one indexed-by-scope query stopping at the first hit; a few bound the cost of
# an empty answer when the collection is large.
MAX_CHECKED_CONDITIONS = 3
KINDS = ("string", "number", "boolean")
TYPED_OPS = tuple(op for op in OPERATORS if op not in ("exists", "missing"))
# SQLite's json_type names -> JSON type names; PostgreSQL's jsonb_typeof already gives these.
KIND_OF = {name: kind for kind, names in SQLITE_TYPES.items() for name in names}


def mismatch_hint(workspace_id: str, criteria: Criteria) -> str:
    """A sentence per condition whose value's type the scope does not store; "" if none."""
    said = []
    typed = [(i, c, sent) for i, c in enumerate(criteria.where) if (sent := _sent_kind(c))]
    for index, condition, sent in typed[:MAX_CHECKED_CONDITIONS]:
        stored = _stored_kind(workspace_id, criteria.collection_id, condition.keys, sent)
        if stored is not None:
            said.append(_sentence(index, condition, sent, stored))
    return " ".join(said)


def data_prefix_hint(workspace_id: str, criteria: Criteria) -> str:
    """A sentence per condition whose path starts with a "data" key, or a dotted key
    (["data.amount"]), that no record here holds."""
    said = []
    for index, condition in enumerate(criteria.where[:MAX_CHECKED_CONDITIONS]):
        first = condition.keys[0]
        if "." in first and not _holds_key(workspace_id, criteria.collection_id, first):
            keys = json.dumps(data_keys(first) + condition.keys[1:], ensure_ascii=False)
            said.append(
                f"where[{index}].field holds {json.dumps(first, ensure_ascii=False)} as one key, "
                f"and no record here has that key: a path is a list of keys, use {keys}."
            )
            continue
        if len(condition.keys) < 2 or first != "data":
            continue
        if _holds_key(workspace_id, criteria.collection_id, "data"):
            break  # the scope does use a key "data": the path may mean it
        inside = json.dumps(condition.keys[1:], ensure_ascii=False)
        said.append(
            f'where[{index}].field starts with "data", but a path starts inside the '
            f'record\'s data and no record here has a key "data": use {inside}.'
        )
    return " ".join(said)


def _holds_key(workspace_id: str, collection_id: str | None, key: str) -> bool:
    return _first(workspace_id, collection_id, Sql("1"), DataField([key]).present()) is not None


def _first(
    workspace_id: str, collection_id: str | None, select: Sql, condition: Sql
) -> tuple[Any, ...] | None:
    """`select` of the first active record in scope meeting `condition`, or None."""
    scope = criteria_sql(workspace_id, Criteria(collection_id=collection_id))
    where = all_of([scope, condition])
    rows = fetch_all(compose("SELECT {} FROM records_record r WHERE {} LIMIT 1", select, where))
    return rows[0] if rows else None


def _sent_kind(condition: Condition) -> str | None:
    if condition.op not in TYPED_OPS:
        return None
    value = condition.value
    if condition.op in ("between", "in") and isinstance(value, list) and value:
        value = value[0]
    return value_kind(value)


def _stored_kind(
    workspace_id: str, collection_id: str | None, keys: list[str], sent: str
) -> str | None:
    """The first other type the field holds among active records in scope, or None."""
    field = DataField(keys)
    other = field.type_is(*(kind for kind in KINDS if kind != sent))
    row = _first(workspace_id, collection_id, field.kind(), other)
    return KIND_OF.get(row[0], row[0]) if row else None


def _sentence(index: int, condition: Condition, sent: str, stored: str) -> str:
    path = json.dumps(condition.keys, ensure_ascii=False)
    example = condition.value[0] if isinstance(condition.value, list) else condition.value
    instead = _converted(example, stored)
    fix = f" Send {json.dumps(instead)} instead of {json.dumps(example)}." if instead else ""
    return (
        f"where[{index}] compares {path} with a {sent}, but records here store it as a "
        f"{stored}, and comparisons match only the same type.{fix}"
    )


def _converted(value: Any, kind: str) -> Any:
    if kind == "string":
        return json.dumps(value) if not isinstance(value, str) else None
    if kind == "number" and isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return int(number) if number.is_integer() and "." not in value else number
    if kind == "boolean" and isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None
