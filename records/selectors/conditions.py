"""Which records a search or a total covers: collection, title query, filters, where, links, text.

parse_criteria validates every argument (naming the field and the fix) and checks referenced IDs
belong to the workspace; criteria_sql turns the result into one WHERE clause over records r.
"""

from __future__ import annotations

import json
from dataclasses import astuple, dataclass, field
from typing import Any

from records import validation as v
from records.errors import invalid
from records.models import Record
from records.selectors import arguments as args
from records.selectors.casefold import title_contains
from records.selectors.fulltext import matching_ids, require_fulltext, text_words
from records.selectors.jsonpath import DataField
from records.selectors.scoped import collection_checked, in_workspace
from records.selectors.sql import Sql, all_of, any_of, compose, joined, link_sides, of_types, vendor

MAX_QUERY_LENGTH = v.MAX_TITLE
MAX_CONDITIONS = 20
MAX_IN_VALUES = 100
OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "between", "in", "contains", "exists", "missing")
COMPARISONS = {"eq": "=", "ne": "<>", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
# An array element equal to a where value of each kind, as SQLite's json_each shows it.
SQLITE_ELEMENTS = {
    "boolean": "e.type = %s",
    "number": "e.type IN ('integer', 'real') AND e.value = %s",
    "string": "e.type = 'text' AND e.value = %s",
}


@dataclass(frozen=True)
class Condition:
    keys: list[str]
    op: str
    value: Any = None


@dataclass(frozen=True)
class LinkedTo:
    record_id: str
    relationship_types: list[str] | None
    direction: str


@dataclass(frozen=True)
class Criteria:
    collection_id: str | None = None
    query: str | None = None
    filters: dict[str, Any] = field(default_factory=dict)
    words: list[str] | None = None
    where: list[Condition] = field(default_factory=list)
    linked_to: LinkedTo | None = None

    def fingerprint_params(self) -> dict[str, Any]:
        return {
            "collection_id": self.collection_id,
            "query": self.query,
            "filters": self.filters,
            "text": self.words,
            "where": [[c.keys, c.op, c.value] for c in self.where],
            "linked_to": None if self.linked_to is None else list(astuple(self.linked_to)),
        }


def parse_criteria(
    *,
    workspace_id: str,
    collection_id: Any = None,
    query: Any = None,
    filters: Any = None,
    text: Any = None,
    where: Any = None,
    linked_to: Any = None,
) -> Criteria:
    collection_id = collection_checked(workspace_id, collection_id)
    words = None
    if text is not None:
        words = text_words(text)
        require_fulltext()
    return Criteria(
        collection_id=collection_id,
        query=args.optional_text(query, "query", max_length=MAX_QUERY_LENGTH),
        filters={} if filters is None else v.json_object("filters", filters),
        words=words,
        where=_parse_where(where),
        linked_to=_parse_linked_to(workspace_id, linked_to),
    )


def criteria_sql(workspace_id: str, criteria: Criteria, *, rank_joined: bool = False) -> Sql:
    """WHERE clause over active records r. rank_joined: text is matched by a ranked JOIN."""
    parts = [Sql("r.workspace_id = %s", (workspace_id,)), Sql("r.archived_at IS NULL")]
    if criteria.collection_id is not None:
        parts.append(Sql("r.collection_id = %s", (criteria.collection_id,)))
    if criteria.query is not None:
        parts.append(title_contains(criteria.query))
    parts += [_filter_sql(key, value) for key, value in criteria.filters.items()]
    parts += [_condition_sql(condition) for condition in criteria.where]
    if criteria.linked_to is not None:
        parts.append(_linked_sql(workspace_id, criteria.linked_to))
    if criteria.words is not None and not rank_joined:
        parts.append(matching_ids(criteria.words))
    return all_of(parts)


# --- filters: exact canonical-JSON equality of top-level keys ------------------------------


def _filter_sql(key: str, value: Any) -> Sql:
    data = DataField([key])
    if vendor() != "sqlite":
        # Both sides go through jsonb's one text rendering: 1 and 1.0 render differently.
        return data.value().wrap("({})::text = (%s::jsonb)::text", v.canonical_json(value))
    if value is None or isinstance(value, bool):  # json_type names null, true and false
        return data.kind().wrap("{} = %s", json.dumps(value))
    sqlite_type = {int: "integer", float: "real", str: "text"}.get(type(value))
    if sqlite_type is not None:
        return data.kind().wrap("{} = %s", sqlite_type) & data.value().wrap("{} = %s", value)
    whole = data.value().wrap("anchor_canonical_json({}) = %s", v.canonical_json(value))
    return data.type_is("object", "array") & whole


# --- where: typed conditions -----------------------------------------------------------------


def value_kind(value: Any) -> str | None:
    """The JSON type a where value compares as: boolean, number or string (None otherwise)."""
    return {bool: "boolean", int: "number", float: "number", str: "string"}.get(type(value))


def _parse_where(value: Any) -> list[Condition]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_CONDITIONS:
        raise invalid(
            "where",
            f'must be a list of up to {MAX_CONDITIONS} conditions such as {{"field": ["amount"], '
            '"op": "gt", "value": 100}.',
        )
    return [_parse_condition(item, f"where[{index}]") for index, item in enumerate(value)]


def _parse_condition(item: Any, where: str) -> Condition:
    if not isinstance(item, dict):
        raise invalid(where, 'must be an object {"field": [...], "op": ..., "value": ...}.')
    args.only_keys(item, where, {"field", "op", "value"}, {"field", "op"})
    keys = args.field_path(item["field"], f"{where}.field")
    op = item["op"]
    if op not in OPERATORS:
        raise invalid(f"{where}.op", f"must be one of {' '.join(OPERATORS)}, got {op!r}.")
    if op in ("exists", "missing"):
        if "value" in item:
            raise invalid(f"{where}.value", f"{op} takes no value; remove it.")
        return Condition(keys, op)
    if "value" not in item:
        raise invalid(f"{where}.value", f"{op} needs a value.")
    value = item["value"]
    v.json_object(f"{where}.value", {"value": value})  # finite, bounded JSON
    field_name = f"{where}.value"
    if op == "between":
        if (
            not isinstance(value, list)
            or len(value) != 2
            or value_kind(value[0]) not in ("number", "string")
            or value_kind(value[0]) != value_kind(value[1])
        ):
            raise invalid(field_name, "between needs [low, high]: two numbers or two strings.")
        if value[0] > value[1]:
            raise invalid(field_name, "between needs low <= high.")
    elif op == "in":
        if not isinstance(value, list) or not 1 <= len(value) <= MAX_IN_VALUES:
            raise invalid(field_name, f"in needs a list of 1-{MAX_IN_VALUES} values.")
        if any(value_kind(item_value) is None for item_value in value):
            raise invalid(field_name, "in accepts strings, numbers and booleans only.")
    elif value_kind(value) is None:
        raise invalid(
            field_name,
            f"{op} needs a string, number or boolean. For null use exists/missing (exists is "
            "true for null); to match a whole object or array exactly use filters.",
        )
    elif op in ("gt", "gte", "lt", "lte") and value_kind(value) == "boolean":
        raise invalid(field_name, f"{op} compares numbers or strings, not booleans.")
    return Condition(keys, op, value)


def _condition_sql(condition: Condition) -> Sql:
    data = DataField(condition.keys)
    op, value = condition.op, condition.value
    if op == "exists":
        return data.present()
    if op == "missing":
        return data.absent()
    if op == "between":
        low, high = value
        return _compare(data, ">=", low) & _compare(data, "<=", high)
    if op == "in":
        return any_of(_compare(data, "=", item) for item in value)
    if op == "contains":
        element = _array_contains(data, value)
        if value_kind(value) == "string":  # a substring of a string, or an element
            function = "instr({}, %s) > 0" if vendor() == "sqlite" else "strpos({}, %s) > 0"
            return (data.type_is("string") & data.string().wrap(function, value)) | element
        return element
    return _compare(data, COMPARISONS[op], value)


def _compare(data: DataField, operator: str, value: Any) -> Sql:
    """Typed: only a stored value of the operand's JSON type can match, ne included."""
    kind = value_kind(value)
    if kind == "boolean":
        wanted = value if operator == "=" else not value
        if vendor() == "sqlite":
            return Sql("json_type(r.data, %s) = %s", (data.sqlite_path(), str(wanted).lower()))
        return data.value().wrap("{} = %s::jsonb", json.dumps(wanted))
    if kind == "number":
        if vendor() == "sqlite":
            operand = Sql("%s", (value,))
        else:
            operand = Sql("%s::numeric", (repr(value),))
        return data.type_is("number") & compose("{} " + operator + " {}", data.number(), operand)
    return data.type_is("string") & data.string().wrap("{} " + operator + " %s", value)


def _array_contains(data: DataField, value: Any) -> Sql:
    if vendor() != "sqlite":
        return data.type_is("array") & data.value().wrap("{} @> %s::jsonb", json.dumps([value]))
    kind = value_kind(value) or "string"
    wanted = json.dumps(value) if kind == "boolean" else value
    return data.type_is("array") & Sql(
        f"EXISTS (SELECT 1 FROM json_each(r.data, %s) AS e WHERE {SQLITE_ELEMENTS[kind]})",
        (data.sqlite_path(), wanted),
    )


# --- linked_to -------------------------------------------------------------------------------


def _parse_linked_to(workspace_id: str, value: Any) -> LinkedTo | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise invalid(
            "linked_to",
            'must be an object such as {"record_id": "...", "relationship_types": ["applicant"], '
            '"direction": "both"}.',
        )
    args.only_keys(
        value, "linked_to", {"record_id", "relationship_types", "direction"}, {"record_id"}
    )
    record_id = v.record_id(value["record_id"], "linked_to.record_id")
    in_workspace(
        Record.objects.values("pk"),
        workspace_id=workspace_id,
        pk=record_id,
        kind="record",
        field="linked_to.record_id",
    )
    return LinkedTo(record_id, *args.link_filter(value, "linked_to"))


def _linked_sql(workspace_id: str, linked: LinkedTo) -> Sql:
    """The records linked to linked.record_id, from their side: outgoing means they are the
    source."""
    types = of_types(linked.relationship_types)
    branches = [
        Sql(
            f"SELECT rel.{own} FROM records_relationship rel "
            f"WHERE rel.workspace_id = %s AND rel.{other} = %s{types.text}",
            (workspace_id, linked.record_id, *types.params),
        )
        for _, own, other in link_sides(linked.direction)
    ]
    return joined(branches, " UNION ALL ").wrap("r.id IN ({})")
