"""One keyset page of active records in an order, as search by words and search by meaning
both read it: oldest first (created_at, id), best text match first (rank, id), or a data field
(value, id), each with its own cursor key."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from django.db import connection

from records.errors import invalid
from records.models import Record
from records.selectors.conditions import Criteria, criteria_sql
from records.selectors.fulltext import ranked_source, snippets
from records.selectors.jsonpath import DataField
from records.selectors.serialize import data_preview, iso, parse_iso_key
from records.selectors.sql import Sql, all_of, prepare_connection, vendor

NUMBER_TEXT = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
INTEGER_TEXT = re.compile(r"-?\d+")
RECORDS = Sql("records_record r")
COLUMNS = (
    "r.id, r.collection_id, c.name AS collection_name, r.title, r.data, r.version, "
    "r.created_at, r.updated_at"
)


def words_page(
    workspace_id: str, criteria: Criteria, order: Order, key: list[Any] | None, limit: int
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


def _page_sql(
    workspace_id: str, criteria: Criteria, order: Order, key: list[Any] | None, limit: int
) -> Sql:
    columns, records, join, extra_where = order.source()
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


class Order:
    description = ""
    ranks = False

    def source(self) -> tuple[Sql, Sql, Sql, Sql]:
        """(extra select columns, the FROM item yielding the records r, extra JOIN, extra WHERE)
        for the inner query."""
        return Sql(""), RECORDS, Sql(""), Sql("1 = 1")

    def order_sql(self) -> str:
        raise NotImplementedError

    def after(self, key: list[Any]) -> Sql:
        raise NotImplementedError

    def cursor_key(self, row: Record) -> list[Any]:
        raise NotImplementedError

    def extra_fields(self, row: Record, found_snippets: dict[str, str]) -> dict[str, Any]:
        return {}


def _after(
    column: str, value: Any, record_id: Any, operator: str = ">", operand: str = "%s"
) -> Sql:
    """The rows past a cursor's key (value, record ID) in the page's order of `column`."""
    if not isinstance(record_id, str) or len(record_id) > 36:
        raise invalid("cursor", "is malformed; pass next_cursor unchanged.")
    return Sql(
        f"page.{column} {operator} {operand} OR (page.{column} = {operand} AND page.id > %s)",
        (value, value, record_id),
    )


class CreatedOrder(Order):
    description = "oldest first (created_at, record_id)"

    def order_sql(self) -> str:
        return "page.created_at, page.id"

    def after(self, key: list[Any]) -> Sql:
        created_at = connection.ops.adapt_datetimefield_value(parse_iso_key(key[0]))
        return _after("created_at", created_at, key[1])

    def cursor_key(self, row: Record) -> list[Any]:
        return [iso(row.created_at), row.pk]


class RelevanceOrder(Order):
    description = "best text match first (title matches weigh 4x value matches)"
    ranks = True

    def __init__(self, words: list[str]) -> None:
        self.words = words

    def source(self) -> tuple[Sql, Sql, Sql, Sql]:
        records, join, rank = ranked_source(self.words)
        return Sql(f", {rank} AS text_rank"), records, join, Sql("1 = 1")

    def order_sql(self) -> str:
        return "page.text_rank, page.id"

    def after(self, key: list[Any]) -> Sql:
        rank = key[0]
        if isinstance(rank, bool) or not isinstance(rank, (int, float)):
            raise invalid("cursor", "is malformed; pass next_cursor unchanged.")
        return _after("text_rank", float(rank), key[1])

    def cursor_key(self, row: Record) -> list[Any]:
        return [float(row.text_rank), row.pk]  # type: ignore[attr-defined]

    def extra_fields(self, row: Record, found_snippets: dict[str, str]) -> dict[str, Any]:
        return {"match_snippet": found_snippets.get(row.pk, "")}


class FieldOrder(Order):
    def __init__(self, *, field: list[str], type: str, direction: str) -> None:
        self.field = field
        self.type = type
        self.direction = direction
        self.description = (
            f"by {type} field {field} {'ascending' if direction == 'asc' else 'descending'}, "
            "then record_id; records lacking the field or holding another type are excluded"
        )

    def source(self) -> tuple[Sql, Sql, Sql, Sql]:
        data = DataField(self.field)
        value = data.number() if self.type == "number" else data.string()
        return value.wrap(", {} AS sort_value"), RECORDS, Sql(""), data.type_is(self.type)

    def order_sql(self) -> str:
        return f"page.sort_value {'ASC' if self.direction == 'asc' else 'DESC'}, page.id"

    def after(self, key: list[Any]) -> Sql:
        operator = ">" if self.direction == "asc" else "<"
        value = self._key_value(key[0])
        operand = "%s::numeric" if self.type == "number" and vendor() != "sqlite" else "%s"
        if self.type == "string" and vendor() != "sqlite":
            operand = '%s COLLATE "C"'
        return _after("sort_value", value, key[1], operator, operand)

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
        return [repr(value) if isinstance(value, float) else str(value), row.pk]

    def extra_fields(self, row: Record, found_snippets: dict[str, str]) -> dict[str, Any]:
        value = row.sort_value  # type: ignore[attr-defined]
        return {"sort_value": value if self.type == "string" else plain_number(value)}


def plain_number(value: Any) -> int | float:
    """PostgreSQL numerics come back as Decimal; give the agent an int or a float."""
    if isinstance(value, Decimal):
        exponent = value.as_tuple().exponent
        return int(value) if isinstance(exponent, int) and exponent >= 0 else float(value)
    number: int | float = value
    return number
