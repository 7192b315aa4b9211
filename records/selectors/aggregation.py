"""aggregate: counts, sums, averages, minima and maxima on the server, honest about skips.

Every non-count metric reports the records it used and those it skipped (field missing or not a
number). One statement per call, except that a linked grouping counts the matched records
first (a record can be in several groups). Each record's data is read once; what a key means
(its canonical JSON, its month) is worked out once per distinct raw value, not per record.
"""

from __future__ import annotations

import json
from typing import Any, NotRequired, TypedDict

from records.errors import invalid
from records.selectors import arguments as args
from records.selectors.active_counts import active_counts
from records.selectors.conditions import Criteria, criteria_sql, link_sides, parse_criteria
from records.selectors.jsonpath import DataField
from records.selectors.search_pages import plain_number
from records.selectors.sql import Sql, fetch_all, placeholders, vendor

MAX_GROUPS = 100
MAX_METRICS = 10
METRIC_OPS = ("count", "sum", "avg", "min", "max")
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
    fields = _distinct_fields(metric_list)
    extremes = [
        any(m["op"] in ("min", "max") and m["field"] == keys for m in metric_list)
        for keys in fields
    ]
    if grouping is not None and grouping["kind"] == "linked":
        # A record linked to several records is in several groups: the matched total is
        # counted on its own, and says which way round the links are cheaper to read.
        matched = _matched(workspace_id, criteria, condition)
        per_key = _linked_per_key(
            condition,
            grouping,
            fields,
            extremes,
            by_workspace=_links_are_few(workspace_id, matched),
        )
        rows = fetch_all(_grouped_sql(condition, grouping, fields, extremes, limit, per_key))
    else:
        rows = fetch_all(_grouped_sql(condition, grouping, fields, extremes, limit))
        matched = int(rows[0][-1] or 0) if rows else 0
    groups = [_group(row, grouping, metric_list, fields) for row in rows[:limit]]
    result: dict[str, Any] = {"matched": matched, "notes": [SKIP_NOTE]}
    if grouping is None:
        # Nothing matched: the totals of no records (count 0, every metric used 0 times).
        empty = (None, None, "all", 0, *(0, 0, None, None, None, None) * len(fields))
        result["totals"] = (
            groups[0] if groups and matched else _group(empty, None, metric_list, fields)
        )
        return result
    result["groups"] = groups
    result["group_count"] = rows[0][-2] if rows else 0
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
    """A field already read out of the record, as column `column`: on SQLite its minified JSON
    text (NULL when missing), tested with plain string functions (a value's type is its first
    character); on PostgreSQL the jsonb value. Every test means what DataField's does."""

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


# An optimisation fence: without it SQLite reads the field out of the record again for every
# aggregate using it. PostgreSQL's jsonb lookup is cheaper than the fence (100,000 records
# summed: 190 ms unfenced, 270 ms fenced).
FENCE = {"sqlite": "LIMIT -1 OFFSET 0", "postgresql": ""}
# Sums per field key are fenced on PostgreSQL too: seen through, the key looks unique per
# record, so the planner sorts every record on disk instead of hashing a few hundred keys
# (100,000 records, sum + avg by month: 180 ms sorted, 105 ms hashed). A count alone is not.
SUMS_FENCE = {"sqlite": FENCE["sqlite"], "postgresql": "OFFSET 0"}
# Links are read by workspace, not per matched record, when there are at most this many per
# matched record: reading one link costs about one probe of the link indexes.
LINKS_PER_RECORD = 2


def _matched(workspace_id: str, criteria: Criteria, condition: Sql) -> int:
    """The matched records: a whole collection's from its kept active count (a scan costs a
    third of the grouping on SQLite), anything narrower counted."""
    collection_id = criteria.collection_id
    if collection_id is not None and criteria == Criteria(collection_id=collection_id):
        return active_counts(workspace_id, [collection_id])[collection_id]
    counted: int = fetch_all(condition.wrap("SELECT COUNT(*) FROM records_record r WHERE {}"))[0][0]
    return counted


def _links_are_few(workspace_id: str, matched: int) -> bool:
    """Whether the workspace has at most LINKS_PER_RECORD links per matched record (counted
    only up to that bound)."""
    bound = LINKS_PER_RECORD * matched
    counted: int = fetch_all(
        Sql(
            "SELECT COUNT(*) FROM (SELECT 1 FROM records_relationship rel "
            "WHERE rel.workspace_id = %s LIMIT %s) bounded",
            (workspace_id, bound + 1),
        )
    )[0][0]
    return counted <= bound


def _raw_key(keys: list[str]) -> Sql:
    """The grouping field as a small value per record, NULL when missing: SQLite's minified
    JSON text, PostgreSQL's jsonb as text (which keeps 1 and 1.0 apart, as the key must)."""
    data = DataField(keys)
    if data.sqlite:
        return Sql(f"({data.column} -> %s)", (data.sqlite_path(),))
    return data.value().wrap("({})::text")


def _raw_column(column: str) -> Extracted:
    """A _raw_key column read back as the field's value for Extracted's tests."""
    return Extracted(column if vendor() == "sqlite" else f"({column})::jsonb")


def _inputs(fields: list[list[str]], column: str = "r.data") -> Sql:
    """Per record and metric field: v_i, the value when it is a number (else NULL), and a_i,
    1 when the field is missing (on SQLite both from one cached parse of the record)."""
    parts: list[Sql] = []
    for index, keys in enumerate(fields):
        data = DataField(keys, column)
        if data.sqlite:
            path = data.sqlite_path()
            parts.append(
                Sql(
                    f"CASE WHEN json_type({column}, %s) IN ('integer', 'real') "
                    f"THEN json_extract({column}, %s) END AS v_{index}, "
                    f"CASE WHEN json_type({column}, %s) IS NULL THEN 1 ELSE 0 END AS a_{index}",
                    (path, path, path),
                )
            )
        else:
            absent = data.absent()
            parts.append(
                Sql(
                    f"{data.number().text} AS v_{index}, "
                    f"CASE WHEN {absent.text} THEN 1 ELSE 0 END AS a_{index}",
                    data.number().params + absent.params,
                )
            )
    return Sql("".join(f", {p.text}" for p in parts), tuple(x for p in parts for x in p.params))


def _per_key(rows: Sql, extremes: list[bool], *, grouped: bool) -> Sql:
    """One row per distinct raw key k: its count and each field's used, missing, sum, and min
    and max where a metric asks for them (extremes: numeric MIN and MAX are dear on
    PostgreSQL)."""
    columns = ["k", "COUNT(*) AS cnt"]
    for index, wanted in enumerate(extremes):
        columns += [
            f"COUNT(v_{index}) AS u_{index}",
            f"SUM(a_{index}) AS m_{index}",
            f"SUM(v_{index}) AS s_{index}",
            f"MIN(v_{index}) AS lo_{index}" if wanted else f"NULL AS lo_{index}",
            f"MAX(v_{index}) AS hi_{index}" if wanted else f"NULL AS hi_{index}",
        ]
    if not grouped:  # one row even when nothing matched: the totals of nothing
        columns[0] = "NULL AS k"
    group = " GROUP BY k" if grouped else ""
    return rows.wrap(f"SELECT {', '.join(columns)} FROM ({{}}) per_record{group}")


def _grouped_sql(
    condition: Sql,
    grouping: dict[str, Any] | None,
    fields: list[list[str]],
    extremes: list[bool],
    limit: int,
    per_key: Sql | None = None,
) -> Sql:
    """Three layers: per record, the raw key and the metric inputs; per raw key, counts and
    sums; per group, the key's meaning, the groups merged, ordered and cut to the limit. Every
    row carries the matched total, which a linked grouping (per_key given) ignores."""
    if per_key is None:
        inputs = _inputs(fields)
        key = Sql("NULL")
        if grouping is not None and grouping["kind"] == "field":
            key = _raw_key(grouping["field"])
        elif grouping is not None:
            key = Sql("r.collection_id")
        sums_by_field = bool(fields) and grouping is not None and grouping["kind"] == "field"
        fence = (SUMS_FENCE if sums_by_field else FENCE)[vendor()]
        source = Sql(
            f"SELECT {key.text} AS k{inputs.text} FROM records_record r "
            f"WHERE {condition.text} {fence}",
            key.params + inputs.params + condition.params,
        )
        per_key = _per_key(source, extremes, grouped=grouping is not None)
    group_key, label, kind, join = _group_columns(grouping)
    # Only a field's raw keys can mean the same key (an escaped and a plain string, say):
    # every other kind of raw key is its group already, and needs no second grouping.
    merge = grouping is not None and grouping["kind"] == "field"

    def total(function: str, column: str) -> str:
        return f"{function}(g.{column})" if merge else f"g.{column}"

    outer = [
        group_key.wrap("{} AS group_key"),
        label.wrap("{} AS group_label"),
        kind.wrap("{} AS group_kind"),
        Sql(f"CAST({total('SUM', 'cnt')} AS BIGINT) AS n"),
    ]
    for index in range(len(fields)):
        used, total_sum = total("SUM", f"u_{index}"), total("SUM", f"s_{index}")
        outer += [
            Sql(f"CAST({used} AS BIGINT) AS used_{index}"),
            Sql(f"CAST({total('SUM', f'm_{index}')} AS BIGINT) AS missing_{index}"),
            Sql(f"{total_sum} AS sum_{index}"),
            Sql(f"{total_sum} * 1.0 / NULLIF({used}, 0) AS avg_{index}"),
            Sql(f"{total('MIN', f'lo_{index}')} AS min_{index}"),
            Sql(f"{total('MAX', f'hi_{index}')} AS max_{index}"),
        ]
    outer += [
        Sql("COUNT(*) OVER () AS group_total"),
        Sql(f"SUM({total('SUM', 'cnt')}) OVER () AS matched"),
    ]
    order = "ORDER BY n DESC, group_key IS NULL, group_key"
    regroup = " GROUP BY group_key, group_label, group_kind" if merge else ""
    grouped = Sql(
        # Ordered outside: PostgreSQL orders by an output column only by its bare name.
        f"SELECT * FROM (SELECT {', '.join(c.text for c in outer)} FROM ({per_key.text}) g "
        f"{join.text}{regroup}) groups {order} LIMIT %s",
        tuple(p for c in outer for p in c.params) + per_key.params + join.params + (limit + 1,),
    )
    if grouping is None or grouping["kind"] != "linked":
        return grouped
    # A linked record's title is looked up for the groups returned only, not joined to every
    # matched record's links (which read the whole records table to hash it).
    names = [c.text.rsplit(" AS ", 1)[-1] for c in outer]
    names[1] = "(SELECT t.title FROM records_record t WHERE t.id = g.group_key) AS group_label"
    return grouped.wrap(f"SELECT {', '.join(names)} FROM ({{}}) g {order}")


def _group_columns(grouping: dict[str, Any] | None) -> tuple[Sql, Sql, Sql, Sql]:
    """(key, label, kind, join) over one per-key row g: evaluated once per distinct raw key."""
    if grouping is None:
        return Sql("NULL"), Sql("NULL"), Sql("'all'"), Sql("")
    if grouping["kind"] == "collection":
        return (
            Sql("g.k"),
            Sql("c.name"),
            Sql("'collection'"),
            Sql("JOIN records_collection c ON c.id = g.k"),
        )
    if grouping["kind"] == "linked":
        return (
            Sql("g.k"),
            Sql("NULL"),  # the title is looked up for the groups returned (_grouped_sql)
            Sql("CASE WHEN g.k IS NULL THEN 'not_linked' ELSE 'linked' END"),
            Sql(""),
        )
    data = _raw_column("g.k")
    if grouping["bucket"] is None:
        return (
            data.json_text(),
            Sql("NULL"),
            Sql("CASE WHEN g.k IS NULL THEN 'missing' ELSE 'value' END"),
            Sql(""),
        )
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
    kind = key.wrap(
        "CASE WHEN g.k IS NULL THEN 'missing' WHEN {} IS NULL THEN 'not_a_date' ELSE 'value' END"
    )
    return key, Sql("NULL"), kind, Sql("")


def _types(grouping: dict[str, Any]) -> Sql:
    if not grouping["relationship_types"]:
        return Sql("")
    return placeholders(grouping["relationship_types"]).wrap(" AND rel.relationship_type IN ({})")


def _linked_per_key(
    condition: Sql,
    grouping: dict[str, Any],
    fields: list[list[str]],
    extremes: list[bool],
    *,
    by_workspace: bool,
) -> Sql:
    """The per-key rows of a linked grouping: one per linked record (k) over the matched
    records linked to it, one with k NULL over those with none. UNION over (own, other) pairs
    counts a record linked to the same record twice (both ways, several types) once.

    by_workspace (few links beside the matched records): the workspace's links are read once,
    each joined to its record by primary key. Otherwise each matched record looks its links
    up by index, so the cost follows the matched records, never the workspace's links.
    """
    inputs = _inputs(fields)
    types = _types(grouping)
    branches = link_sides(grouping["direction"])
    if by_workspace:
        links = [
            Sql(
                f"SELECT rel.{own} AS own, rel.{other} AS other FROM records_relationship rel "
                f"WHERE rel.workspace_id = %s{types.text}",
                (grouping["workspace_id"], *types.params),
            )
            for own, other in branches
        ]
        pairs = Sql(
            " UNION ".join(link.text for link in links),
            tuple(p for link in links for p in link.params),
        )
        owners = Sql(
            " UNION ALL ".join(
                f"SELECT rel.{own} FROM records_relationship rel "
                f"WHERE rel.workspace_id = %s{types.text}"
                for own, _ in branches
            ),
            pairs.params,
        )
        linked = _with_records(pairs, inputs, condition)
        unlinked = Sql(
            f"SELECT NULL AS k{inputs.text} FROM records_record r "
            f"WHERE {condition.text} AND r.id NOT IN ({owners.text})",
            inputs.params + condition.params + owners.params,
        )
    else:
        # Forced to probe the relationship index per record (a fenced LATERAL on PostgreSQL,
        # CROSS JOIN order on SQLite): without statistics PostgreSQL scanned every link for
        # every record.
        per_record = [
            Sql(
                f"SELECT r.id AS own, rel.other FROM records_record r CROSS JOIN LATERAL "
                f"(SELECT rel.{other} AS other FROM records_relationship rel "
                f"WHERE rel.{own} = r.id{types.text} OFFSET 0) rel WHERE {condition.text}"
                if vendor() != "sqlite"
                else f"SELECT r.id AS own, rel.{other} AS other FROM records_record r "
                f"CROSS JOIN records_relationship rel ON rel.{own} = r.id{types.text} "
                f"WHERE {condition.text}",
                types.params + condition.params,
            )
            for own, other in branches
        ]
        pairs = Sql(
            " UNION ".join(p.text for p in per_record),
            tuple(x for p in per_record for x in p.params),
        )
        linked = _with_records(pairs, inputs, condition)
        none = " AND ".join(
            f"NOT EXISTS (SELECT 1 FROM records_relationship rel WHERE rel.{own} = r.id"
            f"{types.text})"
            for own, _ in branches
        )
        unlinked = Sql(
            f"SELECT NULL AS k{inputs.text} FROM records_record r "
            f"WHERE {condition.text} AND {none}",
            inputs.params + condition.params + types.params * len(branches),
        )
    # Per part, not over their union: the records with no link are one group, summed
    # without sorting them by a key they all share.
    fence = FENCE[vendor()]
    by_linked = _per_key(linked.wrap(f"{{}} {fence}"), extremes, grouped=True)
    not_linked = _per_key(unlinked.wrap(f"{{}} {fence}"), extremes, grouped=False)
    return Sql(
        f"{by_linked.text} UNION ALL SELECT * FROM ({not_linked.text}) not_linked WHERE cnt > 0",
        by_linked.params + not_linked.params,
    )


def _with_records(pairs: Sql, inputs: Sql, condition: Sql) -> Sql:
    """Each (own, other) pair with its matched record's inputs, the pairs driving, each record
    looked up by primary key (CROSS JOIN order on SQLite, a fenced LATERAL on PostgreSQL).
    Left to choose without statistics (a store just restored), PostgreSQL scanned every pair
    for every record: 50,000 records ran past the query timeout."""
    if vendor() == "sqlite":
        join = Sql(f"CROSS JOIN records_record r ON r.id = l.own WHERE {condition.text}")
    else:
        join = Sql(
            "CROSS JOIN LATERAL (SELECT r.data FROM records_record r "
            f"WHERE r.id = l.own AND {condition.text} OFFSET 0) r"
        )
    return Sql(
        f"SELECT l.other AS k{inputs.text} FROM ({pairs.text}) l {join.text}",
        inputs.params + pairs.params + condition.params,
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
