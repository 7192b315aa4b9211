"""aggregate: counts, sums, averages, minima and maxima on the server, honest about skips.

Every non-count metric reports how many records it used and how many it skipped because the
field was missing or not a number; used + skipped_missing + skipped_non_numeric = the group's
count. Two queries: the matched total, and the groups with their metrics. Full scans over JSON,
fine for hundreds of thousands of records: each field is read out of a record's data once (see
Extracted), and every test on it then works on that small value rather than the whole record.
"""

from __future__ import annotations

import json
from typing import Any, NotRequired, TypedDict

from records.errors import invalid
from records.selectors import arguments as args
from records.selectors.conditions import criteria_sql, parse_criteria
from records.selectors.jsonpath import DataField
from records.selectors.search import plain_number
from records.selectors.sql import Sql, fetch_all, placeholders, vendor

MAX_GROUPS = 100
MAX_METRICS = 10
METRIC_OPS = ("count", "sum", "avg", "min", "max")
SQL_FUNCTIONS = {"sum": "SUM", "avg": "AVG", "min": "MIN", "max": "MAX"}
BUCKET_PATTERNS = {
    # An ISO 8601 date or timestamp string; its first 7 (month) or 4 (year) characters.
    "month": ("[0-9][0-9][0-9][0-9]-[0-9][0-9]*", "^[0-9]{4}-[0-9]{2}", 7),
    "year": ("[0-9][0-9][0-9][0-9]*", "^[0-9]{4}", 4),
}
SKIP_NOTE = (
    "Non-count metrics use only numeric values: used + skipped_missing + skipped_non_numeric "
    "= count. Say so when anything was skipped (e.g. a salary stored as '95 LPA')."
)
LINKED_NOTE = (
    "Grouped by linked record: a record linked to several records counts in each group, so "
    "group counts can add up to more than matched; records with no such link form the "
    "group with key null."
)


def aggregate(
    *,
    workspace_id: str,
    collection_id: Any = None,
    where: Any = None,
    filters: Any = None,
    text: Any = None,
    linked_to: Any = None,
    group_by: Any = None,
    metrics: Any = None,
    limit: Any = 50,
) -> dict[str, Any]:
    limit = args.bounded_int(limit, "limit", low=1, high=MAX_GROUPS)
    metric_list = _parse_metrics(metrics)
    grouping = _parse_group_by(workspace_id, group_by)
    criteria = parse_criteria(
        workspace_id=workspace_id,
        collection_id=collection_id,
        filters=filters,
        text=text,
        where=where,
        linked_to=linked_to,
    )
    condition = criteria_sql(workspace_id, criteria)
    matched = fetch_all(condition.wrap("SELECT COUNT(*) FROM records_record r WHERE {}"))[0][0]
    fields = _distinct_fields(metric_list)
    rows = fetch_all(_grouped_sql(condition, grouping, fields, limit))
    groups = [_group(row, grouping, metric_list, fields) for row in rows[:limit]]
    result: dict[str, Any] = {"matched": matched, "notes": [SKIP_NOTE]}
    if grouping is None:
        result["totals"] = groups[0] if groups else _empty_totals(metric_list)
        return result
    result["groups"] = groups
    result["group_count"] = rows[0][-1] if rows else 0
    result["groups_truncated"] = len(rows) > limit
    if grouping["kind"] == "linked":
        result["notes"].append(LINKED_NOTE)
    return result


class Metric(TypedDict):
    """One requested metric: count, or an op over the numeric values of one field."""

    op: str
    field: NotRequired[list[str]]  # absent exactly when op is "count"


def _parse_metrics(value: Any) -> list[Metric]:
    if value is None:
        return [{"op": "count"}]
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_METRICS:
        raise invalid(
            "metrics",
            f'must be a list of 1-{MAX_METRICS} metrics such as [{{"op": "sum", "field": '
            '["amount"]}, {"op": "count"}].',
        )
    parsed: list[Metric] = []
    for index, item in enumerate(value):
        name = f"metrics[{index}]"
        if not isinstance(item, dict):
            raise invalid(name, 'must be an object {"op": ..., "field"?: [...]}.')
        args.only_keys(item, name, {"op", "field"}, {"op"})
        op = item["op"]
        if op not in METRIC_OPS:
            raise invalid(f"{name}.op", f"must be one of {', '.join(METRIC_OPS)}, got {op!r}.")
        if op == "count":
            if "field" in item:
                raise invalid(f"{name}.field", "count counts records; remove field.")
            parsed.append({"op": "count"})
            continue
        if "field" not in item:
            raise invalid(f"{name}.field", f'{op} needs a field, e.g. ["amount"].')
        parsed.append({"op": op, "field": args.field_path(item["field"], f"{name}.field")})
    return parsed


def _parse_group_by(workspace_id: str, value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    shapes = (
        'must be {"field": [...], "bucket"?: "month" | "year"}, {"collection": true} or '
        '{"linked": {"relationship_types"?: [...], "direction"?: ...}}.'
    )
    if not isinstance(value, dict) or len({"field", "collection", "linked"} & set(value)) != 1:
        raise invalid("group_by", shapes)
    if "field" in value:
        args.only_keys(value, "group_by", {"field", "bucket"}, {"field"})
        bucket = value.get("bucket")
        if bucket is not None and bucket not in BUCKET_PATTERNS:
            raise invalid("group_by.bucket", f'must be "month" or "year", got {bucket!r}.')
        return {
            "kind": "field",
            "field": args.field_path(value["field"], "group_by.field"),
            "bucket": bucket,
        }
    if "collection" in value:
        args.only_keys(value, "group_by", {"collection"}, {"collection"})
        if value["collection"] is not True:
            raise invalid("group_by.collection", "must be true.")
        return {"kind": "collection"}
    args.only_keys(value, "group_by", {"linked"}, {"linked"})
    linked = value["linked"]
    if not isinstance(linked, dict):
        raise invalid("group_by.linked", shapes)
    args.only_keys(linked, "group_by.linked", {"relationship_types", "direction"}, set())
    return {
        "kind": "linked",
        "workspace_id": workspace_id,
        "relationship_types": args.relationship_types(
            linked.get("relationship_types"), "group_by.linked.relationship_types"
        ),
        "direction": args.direction(
            linked.get("direction"), "group_by.linked.direction", default="both"
        ),
    }


def _distinct_fields(metric_list: list[Metric]) -> list[list[str]]:
    fields: list[list[str]] = []
    for metric in metric_list:
        if metric["op"] != "count" and metric["field"] not in fields:
            fields.append(metric["field"])
    return fields


class Extracted(DataField):
    """A field already read out of the record by the extraction layer, as column `column`.

    SQLite keeps it as the JSON text of the value (`data -> path`: minified, NULL when
    missing), so a value's type is its first character and a string without escapes is its
    text between the quotes: plain string functions, no JSON parsing per test. PostgreSQL keeps
    the jsonb value. Every test means the same as DataField's on r.data.
    """

    SQLITE_FIRST_CHARACTER = {
        "number": "[-0-9]*",
        "string": '"*',
        "array": "[[]*",
        "object": "{*",
    }
    SQLITE_LITERALS = {"null": ("null",), "boolean": ("true", "false")}

    def __init__(self, column: str) -> None:
        super().__init__([], column)

    def sqlite_path(self) -> str:
        return "$"

    def value(self) -> Sql:
        if self.sqlite:
            return Sql(f"json_extract({self.column}, '$')")
        return Sql(f"({self.column})")

    def type_is(self, *kinds: str) -> Sql:
        if not self.sqlite:
            return super().type_is(*kinds)
        tests = []
        for kind in kinds:
            if kind in self.SQLITE_LITERALS:
                quoted = ", ".join(f"'{literal}'" for literal in self.SQLITE_LITERALS[kind])
                tests.append(f"{self.column} IN ({quoted})")
            else:
                tests.append(f"{self.column} GLOB '{self.SQLITE_FIRST_CHARACTER[kind]}'")
        return Sql("(" + " OR ".join(tests) + ")")

    def present(self) -> Sql:
        return Sql(f"{self.column} IS NOT NULL") if self.sqlite else super().present()

    def absent(self) -> Sql:
        return Sql(f"{self.column} IS NULL") if self.sqlite else super().absent()

    def string(self) -> Sql:
        """Only where type_is("string") holds; an escaped string is decoded by json_extract."""
        if not self.sqlite:
            return super().string()
        column = self.column
        return Sql(
            f"(CASE WHEN instr({column}, '\\') = 0 "
            f"THEN substr({column}, 2, length({column}) - 2) "
            f"ELSE json_extract({column}, '$') END)"
        )


def _extraction(keys: list[str]) -> Sql:
    """The field's value as Extracted expects it, read from the record's data."""
    data = DataField(keys)
    if data.sqlite:
        return Sql(f"({data.column} -> %s)", (data.sqlite_path(),))
    return data.value()


# An optimisation fence: without it both planners inline the extraction layer and read the
# field out of the record again for every expression that uses it.
FENCE = {"sqlite": "LIMIT -1 OFFSET 0", "postgresql": "OFFSET 0"}


def _grouped_sql(
    condition: Sql, grouping: dict[str, Any] | None, fields: list[list[str]], limit: int
) -> Sql:
    """Fields read once per record innermost; per-record group key and metric inputs in the
    middle; one row per group outside."""
    wanted = list(fields)
    if grouping is not None and grouping["kind"] == "field" and grouping["field"] not in wanted:
        wanted.append(grouping["field"])
    extracted = [_extraction(keys) for keys in wanted]
    extract = Sql(
        "SELECT r.id, r.collection_id"
        + "".join(f", {e.text} AS f_{i}" for i, e in enumerate(extracted))
        + f" FROM records_record r WHERE {condition.text} {FENCE[vendor()]}",
        tuple(p for e in extracted for p in e.params) + condition.params,
    )
    read = {json.dumps(keys): Extracted(f"r.f_{i}") for i, keys in enumerate(wanted)}
    key, label, kind, join = _group_columns(grouping, read)
    columns = [key.wrap("{} AS group_key"), label.wrap("{} AS group_label")]
    if grouping is not None and grouping["kind"] == "field":
        columns.append(read[json.dumps(grouping["field"])].absent().wrap("{} AS group_absent"))
    for index, keys in enumerate(fields):
        data = read[json.dumps(keys)]
        numeric = data.type_is("number")
        columns.append(
            Sql(
                f"CASE WHEN {numeric.text} THEN {data.number().text} END AS value_{index}",
                numeric.params + data.number().params,
            )
        )
        columns.append(
            Sql(
                f"CASE WHEN {numeric.text} THEN 'used' WHEN {data.absent().text} THEN 'missing' "
                f"ELSE 'other' END AS state_{index}",
                numeric.params + data.absent().params,
            )
        )
    source = Sql(f"({extract.text}) r", extract.params)
    if grouping is not None and grouping["kind"] == "linked":
        source = _linked_source(extract, grouping)
    inner = Sql(
        "SELECT "
        + ", ".join(c.text for c in columns)
        + f" FROM {source.text} {join.text} "
        + FENCE[vendor()],
        tuple(p for c in columns for p in c.params) + source.params + join.params,
    )
    outer = ["group_key", "group_label", f"{kind} AS group_kind", "COUNT(*) AS n"]
    for index in range(len(fields)):
        outer += [
            f"SUM(CASE WHEN state_{index} = 'used' THEN 1 ELSE 0 END) AS used_{index}",
            f"SUM(CASE WHEN state_{index} = 'missing' THEN 1 ELSE 0 END) AS missing_{index}",
            *(
                f"{function}(value_{index}) AS {op}_{index}"
                for op, function in SQL_FUNCTIONS.items()
            ),
        ]
    outer.append("COUNT(*) OVER () AS group_total")
    order = "ORDER BY n DESC, group_key IS NULL, group_key"
    grouped = Sql(
        f"SELECT {', '.join(outer)} FROM ({inner.text}) grouped "
        f"GROUP BY group_key, group_label, group_kind {order} LIMIT %s",
        inner.params + (limit + 1,),
    )
    if grouping is None or grouping["kind"] != "linked":
        return grouped
    # A linked record's title is looked up for the groups returned only, not joined to every
    # matched record's links (which read the whole records table to hash it).
    names = [name.rsplit(" AS ", 1)[-1] for name in outer]
    names[1] = "(SELECT t.title FROM records_record t WHERE t.id = g.group_key) AS group_label"
    return grouped.wrap(f"SELECT {', '.join(names)} FROM ({{}}) g {order}")


def _group_columns(
    grouping: dict[str, Any] | None, read: dict[str, Extracted]
) -> tuple[Sql, Sql, str, Sql]:
    """(key, label, join) expressions for the middle query, and the kind for the outer one.

    The kind reads the middle query's group_key (and group_absent, whether a grouping field
    is missing) rather than recomputing the key: the key is the costliest expression per row.
    """
    if grouping is None:
        return Sql("NULL"), Sql("NULL"), "'all'", Sql("")
    if grouping["kind"] == "collection":
        return (
            Sql("r.collection_id"),
            Sql("c.name"),
            "'collection'",
            Sql("JOIN records_collection c ON c.id = r.collection_id"),
        )
    if grouping["kind"] == "linked":
        return _linked_columns()
    data = read[json.dumps(grouping["field"])]
    if grouping["bucket"] is None:
        kind = "CASE WHEN group_key IS NULL THEN 'missing' ELSE 'value' END"
        return data.json_text(), Sql("NULL"), kind, Sql("")
    glob, regex, length = BUCKET_PATTERNS[grouping["bucket"]]
    string = data.string()
    matches = (
        string.wrap("{} GLOB %s", glob) if vendor() == "sqlite" else string.wrap("{} ~ %s", regex)
    )
    is_string = data.type_is("string")
    key = Sql(
        f"CASE WHEN {is_string.text} AND {matches.text} THEN substr({string.text}, 1, {length}) "
        "END",
        is_string.params + matches.params + string.params,
    )
    kind = (
        "CASE WHEN group_absent THEN 'missing' WHEN group_key IS NULL THEN 'not_a_date' "
        "ELSE 'value' END"
    )
    return key, Sql("NULL"), kind, Sql("")


def _linked_source(extract: Sql, grouping: dict[str, Any]) -> Sql:
    """The matched records, one row per record and linked record (`linked_id`), or one row
    with linked_id NULL for a record with no such link.

    Each matched record looks its links up by source and by target (relationship_unique,
    relationship_in), so the cost follows the matched records and their links, never the
    workspace's. The records drive the lookups rather than a set of links being joined to
    them: a join to a subquery of links has no index, and a planner without statistics runs
    it as a nested scan (matched records times links). UNION keeps a record's link to the same
    record, in both directions or by several types, once.
    """
    types = Sql("")
    if grouping["relationship_types"]:
        types = placeholders(grouping["relationship_types"]).wrap(
            " AND rel.relationship_type IN ({})"
        )
    branches = []
    # Direction is from the matched record's side: outgoing means it is the source.
    if grouping["direction"] in ("outgoing", "both"):
        branches.append(("source_id", "target_id"))
    if grouping["direction"] in ("incoming", "both"):
        branches.append(("target_id", "source_id"))
    parts = [
        Sql(
            f"SELECT m.*, rel.{other} AS linked_id FROM ({extract.text}) m "
            f"JOIN records_relationship rel ON rel.{own} = m.id{types.text}",
            extract.params + types.params,
        )
        for own, other in branches
    ]
    unlinked = " AND ".join(
        f"NOT EXISTS (SELECT 1 FROM records_relationship rel WHERE rel.{own} = m.id{types.text})"
        for own, _ in branches
    )
    parts.append(
        Sql(
            f"SELECT m.*, NULL AS linked_id FROM ({extract.text}) m WHERE {unlinked}",
            extract.params + types.params * len(branches),
        )
    )
    return Sql(
        "(" + " UNION ".join(part.text for part in parts) + ") r",
        tuple(p for part in parts for p in part.params),
    )


def _linked_columns() -> tuple[Sql, Sql, str, Sql]:
    return (
        Sql("r.linked_id"),
        Sql("NULL"),  # the title is looked up for the groups returned (_grouped_sql)
        "CASE WHEN group_key IS NULL THEN 'not_linked' ELSE 'linked' END",
        Sql(""),
    )


def _group(
    row: tuple[Any, ...],
    grouping: dict[str, Any] | None,
    metric_list: list[Metric],
    fields: list[list[str]],
) -> dict[str, Any]:
    key, label, kind, count = row[:4]
    group: dict[str, Any] = {}
    if grouping is not None:
        group |= _describe_key(key, label, kind, grouping)
    group["count"] = count
    per_field = {}
    for index, keys in enumerate(fields):
        used, missing, total, average, low, high = row[4 + index * 6 : 10 + index * 6]
        per_field[json.dumps(keys)] = {
            "used": int(used or 0),
            "skipped_missing": int(missing or 0),
            "skipped_non_numeric": count - int(used or 0) - int(missing or 0),
            "sum": None if total is None else plain_number(total),
            "avg": None if average is None else float(average),
            "min": None if low is None else plain_number(low),
            "max": None if high is None else plain_number(high),
        }
    group["metrics"] = []
    for metric in metric_list:
        if metric["op"] == "count":
            group["metrics"].append({"op": "count", "value": count})
            continue
        stats = per_field[json.dumps(metric["field"])]
        group["metrics"].append(
            {
                "op": metric["op"],
                "field": metric["field"],
                "value": stats[metric["op"]],
                "used": stats["used"],
                "skipped_missing": stats["skipped_missing"],
                "skipped_non_numeric": stats["skipped_non_numeric"],
            }
        )
    return group


def _describe_key(key: Any, label: Any, kind: str, grouping: dict[str, Any]) -> dict[str, Any]:
    if grouping["kind"] == "collection":
        return {"key": key, "collection_name": label}
    if grouping["kind"] == "linked":
        if key is None:
            return {"key": None, "not_linked": True}
        return {"key": key, "title": label}
    if kind == "missing":
        return {"key": None, "missing": True}
    if kind == "not_a_date":
        return {"key": None, "not_a_date": True}
    return {"key": key if grouping["bucket"] else json.loads(key)}


def _empty_totals(metric_list: list[Metric]) -> dict[str, Any]:
    metrics = []
    for metric in metric_list:
        if metric["op"] == "count":
            metrics.append({"op": "count", "value": 0})
            continue
        metrics.append(
            {
                "op": metric["op"],
                "field": metric["field"],
                "value": None,
                "used": 0,
                "skipped_missing": 0,
                "skipped_non_numeric": 0,
            }
        )
    return {"count": 0, "metrics": metrics}
