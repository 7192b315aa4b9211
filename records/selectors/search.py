"""search_records: active records matching every given criterion, one keyset page at a time.

Three orders, each with its own cursor key: oldest first (created_at, id), best text match
first (rank, id), or a data field (value, id). Two queries per page at most: the page itself
and, for text searches, the snippets of that page. Mode "meaning" ranks text by words and by
meaning together (selectors/meaning_search.py).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from django.db import connection

from records.errors import UNSUPPORTED, AnchorError, invalid
from records.models import Record
from records.selectors import arguments as args
from records.selectors.conditions import Criteria, criteria_sql, parse_criteria
from records.selectors.cursors import decode_cursor, encode_cursor, fingerprint
from records.selectors.fulltext import ranked_source, snippets
from records.selectors.jsonpath import DataField
from records.selectors.mismatch import data_prefix_hint, mismatch_hint
from records.selectors.serialize import data_preview, iso, parse_iso_key
from records.selectors.sql import Sql, all_of, prepare_connection, vendor

MAX_LIMIT = 100
NUMBER_TEXT = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
INTEGER_TEXT = re.compile(r"-?\d+")
COLUMNS = (
    "r.id, r.collection_id, c.name AS collection_name, r.title, r.data, r.version, "
    "r.created_at, r.updated_at"
)


def search_records(
    *,
    workspace_id: str,
    collection_id: Any = None,
    query: Any = None,
    filters: Any = None,
    limit: Any = 20,
    cursor: Any = None,
    text: Any = None,
    where: Any = None,
    linked_to: Any = None,
    order_by: Any = None,
    mode: Any = None,
) -> dict[str, Any]:
    limit = args.bounded_int(limit, "limit", low=1, high=MAX_LIMIT)
    by_meaning = _parse_mode(mode)
    criteria = parse_criteria(
        workspace_id=workspace_id,
        collection_id=collection_id,
        query=query,
        filters=filters,
        text=text,
        where=where,
        linked_to=linked_to,
    )
    sort = _parse_order_by(order_by)
    if sort is not None and criteria.words is not None:
        raise invalid(
            "order_by",
            "cannot be combined with text, whose results are ordered by relevance; drop one.",
        )
    if by_meaning:
        return _meaning_search(workspace_id, criteria, cursor, limit)
    bound_to = fingerprint(
        "search", workspace_id, {**criteria.fingerprint_params(), "order_by": sort}
    )
    key = decode_cursor(cursor, bound_to, key_length=2)
    order: _Order
    if criteria.words is not None:
        order = _RelevanceOrder(criteria.words)
    elif sort is not None:
        order = _FieldOrder(**sort)
    else:
        order = _CreatedOrder()
    page, last = words_page(workspace_id, criteria, order, key, limit)
    page["next_cursor"] = (
        encode_cursor(bound_to, order.cursor_key(last)) if last is not None else None
    )
    if not page["records"] and key is None and criteria.where:
        hints = []
        path_hint = data_prefix_hint(workspace_id, criteria)
        if path_hint:
            hints.append(f"Nothing matched, perhaps because of a path: {path_hint}")
        type_hint = mismatch_hint(workspace_id, criteria)
        if type_hint:
            hints.append(f"Nothing matched, perhaps because of a value's type: {type_hint}")
        if hints:
            page["hint"] = " ".join(hints)
    return page


def words_page(
    workspace_id: str, criteria: Criteria, order: _Order, key: list[Any] | None, limit: int
) -> tuple[dict[str, Any], Record | None]:
    """One page in `order`, and the last row shown when there is more (for the cursor)."""
    sql = _page_sql(workspace_id, criteria, order, key, limit)
    prepare_connection()
    rows = list(Record.objects.raw(sql.text, sql.params))
    has_more = len(rows) > limit
    rows = rows[:limit]
    found_snippets = (
        snippets(criteria.words, [row.pk for row in rows]) if criteria.words is not None else {}
    )
    results = [record_item(row) | order.extra_fields(row, found_snippets) for row in rows]
    page = {
        "records": results,
        "count": len(results),
        "has_more": has_more,
        "next_cursor": None,
        "order": order.description,
    }
    return page, rows[-1] if has_more else None


def record_item(row: Record) -> dict[str, Any]:
    """A search hit's preview, from a row of the raw SELECT of COLUMNS."""
    preview, truncated = data_preview(row.data)
    return {
        "record_id": row.pk,
        "collection_id": row.collection_id,
        # A column of the raw SELECT (COLUMNS), which the stubs cannot know Record carries.
        "collection_name": row.collection_name,  # type: ignore[attr-defined]
        "title": row.title,
        "version": row.version,
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
        "data_preview": preview,
        "data_truncated": truncated,
    }


def _parse_mode(value: Any) -> bool:
    """Whether the search is by meaning; refused when this server has meaning turned off."""
    if value is None or value == "words":
        return False
    if value != "meaning":
        raise invalid("mode", f'must be "words" (the default) or "meaning", got {value!r}.')
    from records.meaning.model import enabled

    if not enabled():
        raise AnchorError(
            UNSUPPORTED,
            "mode: search by meaning is turned off on this server (ANCHOR_MEANING=off); "
            'search with mode "words" (the default), or ask its operator to turn it on.',
            field="mode",
        )
    return True


def _meaning_search(
    workspace_id: str, criteria: Criteria, cursor: Any, limit: int
) -> dict[str, Any]:
    # Imported here: numpy and the model load on the first search by meaning, not at start-up.
    from records.selectors.meaning_search import meaning_search

    if criteria.words is None:
        raise invalid(
            "mode",
            '"meaning" ranks records against text; give text (the question, in any words) '
            'or search with mode "words".',
        )
    return meaning_search(workspace_id, criteria, cursor, limit)


def _page_sql(
    workspace_id: str, criteria: Criteria, order: _Order, key: list[Any] | None, limit: int
) -> Sql:
    columns, join, extra_where = order.source()
    records = order.records_from()
    where = all_of([criteria_sql(workspace_id, criteria, rank_joined=order.ranks), extra_where])
    inner = Sql(
        f"SELECT {COLUMNS}{columns.text} FROM {records.text} "
        f"JOIN records_collection c ON c.id = r.collection_id {join.text} WHERE {where.text}",
        columns.params + records.params + join.params + where.params,
    )
    resume = order.after(key) if key is not None else Sql("1 = 1")
    return Sql(
        f"SELECT * FROM ({inner.text}) page WHERE {resume.text} "
        f"ORDER BY {order.order_sql()} LIMIT %s",
        inner.params + resume.params + (limit + 1,),
    )


class _Order:
    description = ""
    ranks = False

    def source(self) -> tuple[Sql, Sql, Sql]:
        """(extra select columns, extra JOIN, extra WHERE) for the inner query."""
        return Sql(""), Sql(""), Sql("1 = 1")

    def records_from(self) -> Sql:
        """The FROM item that yields the records r."""
        return Sql("records_record r")

    def order_sql(self) -> str:
        raise NotImplementedError

    def after(self, key: list[Any]) -> Sql:
        raise NotImplementedError

    def cursor_key(self, row: Record) -> list[Any]:
        raise NotImplementedError

    def extra_fields(self, row: Record, found_snippets: dict[str, str]) -> dict[str, Any]:
        return {}


def _record_id_key(value: Any) -> str:
    if not isinstance(value, str) or len(value) > 36:
        raise invalid("cursor", "is malformed; pass next_cursor unchanged.")
    return value


class _CreatedOrder(_Order):
    description = "oldest first (created_at, record_id)"

    def order_sql(self) -> str:
        return "page.created_at, page.id"

    def after(self, key: list[Any]) -> Sql:
        created_at = connection.ops.adapt_datetimefield_value(parse_iso_key(key[0]))
        record_id = _record_id_key(key[1])
        return Sql(
            "page.created_at > %s OR (page.created_at = %s AND page.id > %s)",
            (created_at, created_at, record_id),
        )

    def cursor_key(self, row: Record) -> list[Any]:
        return [iso(row.created_at), row.pk]


class _RelevanceOrder(_Order):
    description = "best text match first (title matches weigh 4x value matches)"
    ranks = True

    def __init__(self, words: list[str]) -> None:
        self.words = words

    def source(self) -> tuple[Sql, Sql, Sql]:
        _, join, rank = ranked_source(self.words)
        return Sql(f", {rank} AS text_rank"), join, Sql("1 = 1")

    def records_from(self) -> Sql:
        return ranked_source(self.words)[0]

    def order_sql(self) -> str:
        return "page.text_rank, page.id"

    def after(self, key: list[Any]) -> Sql:
        rank = key[0]
        if isinstance(rank, bool) or not isinstance(rank, (int, float)):
            raise invalid("cursor", "is malformed; pass next_cursor unchanged.")
        record_id = _record_id_key(key[1])
        return Sql(
            "page.text_rank > %s OR (page.text_rank = %s AND page.id > %s)",
            (float(rank), float(rank), record_id),
        )

    def cursor_key(self, row: Record) -> list[Any]:
        return [float(row.text_rank), row.pk]  # type: ignore[attr-defined]

    def extra_fields(self, row: Record, found_snippets: dict[str, str]) -> dict[str, Any]:
        return {"match_snippet": found_snippets.get(row.pk, "")}


class _FieldOrder(_Order):
    def __init__(self, *, field: list[str], type: str, direction: str) -> None:
        self.field = field
        self.type = type
        self.direction = direction
        self.description = (
            f"by {type} field {field} {'ascending' if direction == 'asc' else 'descending'}, "
            "then record_id; records lacking the field or holding another type are excluded"
        )

    def source(self) -> tuple[Sql, Sql, Sql]:
        data = DataField(self.field)
        value = data.number() if self.type == "number" else data.string()
        return value.wrap(", {} AS sort_value"), Sql(""), data.type_is(self.type)

    def order_sql(self) -> str:
        return f"page.sort_value {'ASC' if self.direction == 'asc' else 'DESC'}, page.id"

    def after(self, key: list[Any]) -> Sql:
        operator = ">" if self.direction == "asc" else "<"
        record_id = _record_id_key(key[1])
        value = self._key_value(key[0])
        operand = "%s::numeric" if self.type == "number" and vendor() != "sqlite" else "%s"
        if self.type == "string" and vendor() != "sqlite":
            operand = '%s COLLATE "C"'
        return Sql(
            f"page.sort_value {operator} {operand} "
            f"OR (page.sort_value = {operand} AND page.id > %s)",
            (value, value, record_id),
        )

    def _key_value(self, value: Any) -> Any:
        if self.type == "string":
            if not isinstance(value, str):
                raise invalid("cursor", "is malformed; pass next_cursor unchanged.")
            return value
        # Numbers travel as text so PostgreSQL numerics keep every digit.
        if not isinstance(value, str) or not NUMBER_TEXT.fullmatch(value):
            raise invalid("cursor", "is malformed; pass next_cursor unchanged.")
        if vendor() != "sqlite":
            return value
        return int(value) if INTEGER_TEXT.fullmatch(value) else float(value)

    def cursor_key(self, row: Record) -> list[Any]:
        value = row.sort_value  # type: ignore[attr-defined]
        return [value if self.type == "string" else _number_text(value), row.pk]

    def extra_fields(self, row: Record, found_snippets: dict[str, str]) -> dict[str, Any]:
        value = row.sort_value  # type: ignore[attr-defined]
        return {"sort_value": value if self.type == "string" else plain_number(value)}


def _number_text(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def plain_number(value: Any) -> int | float:
    """PostgreSQL numerics come back as Decimal; give the agent an int or a float."""
    if isinstance(value, Decimal):
        exponent = value.as_tuple().exponent
        return int(value) if isinstance(exponent, int) and exponent >= 0 else float(value)
    return value


def _parse_order_by(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise invalid(
            "order_by",
            'must be an object such as {"field": ["amount"], "type": "number", "direction": '
            '"desc"}.',
        )
    args.only_keys(value, "order_by", {"field", "type", "direction"}, {"field", "type"})
    if value["type"] not in ("number", "string"):
        raise invalid("order_by.type", f'must be "number" or "string", got {value["type"]!r}.')
    direction = value.get("direction", "asc")
    if direction not in ("asc", "desc"):
        raise invalid("order_by.direction", f'must be "asc" or "desc", got {direction!r}.')
    return {
        "field": args.field_path(value["field"], "order_by.field"),
        "type": value["type"],
        "direction": direction,
    }
