"""aggregate: counts, sums, averages, minima and maxima on the server, honest about skips.

Every non-count metric reports the records it used and those it skipped (field missing or not a
number). One statement per call, except that a linked grouping counts the matched records
first (a record can be in several groups). Each record's data is read once; what a key means
(its canonical JSON, its month) is worked out once per distinct raw value, not per record.
"""

from __future__ import annotations

import json
from typing import Any

from records.errors import invalid
from records.selectors import arguments as args
from records.selectors.active_counts import active_counts
from records.selectors.conditions import Criteria, criteria_sql, parse_criteria
from records.selectors.jsonpath import DataField
from records.selectors.search_pages import plain_number
from records.selectors.sql import Sql, compose, fetch_all, joined, link_sides, of_types, vendor

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
    # Each field is read once, however many metrics take it.
    keyed = dict.fromkeys(tuple(m["field"]) for m in metric_list if "field" in m)
    fields = [list(keys) for keys in keyed]
    extremes = [
        any(m["op"] in ("min", "max") and m["field"] == keys for m in metric_list)
        for keys in fields
    ]
    per_key, matched = None, 0
    if grouping["kind"] == "linked":
        # A record linked to several records is in several groups: the matched total is
        # counted on its own, and says which way round the links are cheaper to read.
        matched = _matched(workspace_id, criteria, condition)
        few = _links_are_few(workspace_id, matched)
        per_key = _linked_per_key(condition, grouping, fields, extremes, by_workspace=few)
    rows = fetch_all(_grouped_sql(condition, grouping, fields, extremes, limit, per_key))
    if per_key is None and rows:
        matched = int(rows[0][-1] or 0)
    groups = [_group(row, grouping, metric_list, fields) for row in rows[:limit]]
    result: dict[str, Any] = {"matched": matched, "notes": [SKIP_NOTE]}
    if grouping["kind"] == "all":
        result["totals"] = groups[0]  # there even when nothing matched (see _per_key)
        return result
    result["groups"] = groups
    result["group_count"] = rows[0][-2] if rows else 0
    result["groups_truncated"] = len(rows) > limit
    if grouping["kind"] == "linked":
        result["notes"].append(LINKED_NOTE)
    return result


def _parse_metrics(value: Any) -> list[dict[str, Any]]:
    """Each metric: {"op": "count"}, or an op over the numeric values of one field."""
    if value is None:
        return [{"op": "count"}]
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_METRICS:
        raise invalid(
            "metrics",
            f'must be a list of 1-{MAX_METRICS} metrics such as [{{"op": "sum", "field": '
            '["amount"]}, {"op": "count"}].',
        )
    parsed: list[dict[str, Any]] = []
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
        elif "field" not in item:
            raise invalid(f"{name}.field", f'{op} needs a field, e.g. ["amount"].')
        else:
            parsed.append({"op": op, "field": args.field_path(item["field"], f"{name}.field")})
    return parsed


def _parse_group_by(workspace_id: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {"kind": "all"}
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
    types, direction = args.link_filter(linked, "group_by.linked")
    return {
        "kind": "linked",
        "workspace_id": workspace_id,
        "relationship_types": types,
        "direction": direction,
    }


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
    return int(fetch_all(condition.wrap("SELECT COUNT(*) FROM records_record r WHERE {}"))[0][0])


def _links_are_few(workspace_id: str, matched: int) -> bool:
    """Whether the workspace has at most LINKS_PER_RECORD links per matched record (counted
    only up to that bound)."""
    bound = LINKS_PER_RECORD * matched
    bounded = Sql(
        "SELECT COUNT(*) FROM (SELECT 1 FROM records_relationship rel "
        "WHERE rel.workspace_id = %s LIMIT %s) bounded",
        (workspace_id, bound + 1),
    )
    return int(fetch_all(bounded)[0][0]) <= bound


def _raw_key(keys: list[str]) -> Sql:
    """The grouping field as a small value per record, NULL when missing: SQLite's minified
    JSON text, PostgreSQL's jsonb as text (which keeps 1 and 1.0 apart, as the key must)."""
    data = DataField(keys)
    if data.sqlite:
        return Sql(f"({data.column} -> %s)", (data.sqlite_path(),))
    return data.value().wrap("({})::text")


def _inputs(fields: list[list[str]]) -> Sql:
    """Per record and metric field: v_i, the value when it is a number (else NULL), and a_i,
    1 when the field is missing (on SQLite both from one cached parse of the record)."""
    parts = []
    for index, keys in enumerate(fields):
        data = DataField(keys)
        number = data.number()
        if data.sqlite:  # PostgreSQL's number() is NULL for any other value already
            number = compose("CASE WHEN {} THEN {} END", data.type_is("number"), number)
        parts.append(
            compose(
                f", {{}} AS v_{index}, CASE WHEN {{}} THEN 1 ELSE 0 END AS a_{index}",
                number,
                data.absent(),
            )
        )
    return joined(parts, "")


def _per_key(rows: Sql, extremes: list[bool], *, grouped: bool) -> Sql:
    """One row per distinct raw key k: its count and each field's used, missing, sum, and min
    and max where a metric asks for them (extremes: numeric MIN and MAX are dear on
    PostgreSQL)."""
    # Not grouped: one row even when nothing matched, the totals of nothing.
    columns = ["k" if grouped else "NULL AS k", "COUNT(*) AS cnt"]
    for index, wanted in enumerate(extremes):
        columns += [
            f"COUNT(v_{index}) AS u_{index}",
            f"SUM(a_{index}) AS m_{index}",
            f"SUM(v_{index}) AS s_{index}",
            f"MIN(v_{index}) AS lo_{index}" if wanted else f"NULL AS lo_{index}",
            f"MAX(v_{index}) AS hi_{index}" if wanted else f"NULL AS hi_{index}",
        ]
    group = " GROUP BY k" if grouped else ""
    return rows.wrap(f"SELECT {', '.join(columns)} FROM ({{}}) per_record{group}")


def _grouped_sql(
    condition: Sql,
    grouping: dict[str, Any],
    fields: list[list[str]],
    extremes: list[bool],
    limit: int,
    per_key: Sql | None = None,
) -> Sql:
    """Three layers: per record, the raw key and the metric inputs; per raw key, counts and
    sums; per group, the key's meaning, the groups merged, ordered and cut to the limit. Every
    row carries the matched total, which a linked grouping (per_key given) ignores."""
    kind = grouping["kind"]
    if per_key is None:
        if kind == "field":
            key = _raw_key(grouping["field"])
        else:
            key = Sql("NULL" if kind == "all" else "r.collection_id")
        fence = (SUMS_FENCE if fields and kind == "field" else FENCE)[vendor()]
        source = compose(
            f"SELECT {{}} AS k{{}} FROM records_record r WHERE {{}} {fence}",
            key,
            _inputs(fields),
            condition,
        )
        per_key = _per_key(source, extremes, grouped=kind != "all")
    group_key, label, group_kind, join = _group_columns(grouping)
    # Only a field's raw keys can mean the same key (an escaped and a plain string, say):
    # every other kind of raw key is its group already, and needs no second grouping.
    merge = kind == "field"

    def total(function: str, column: str) -> str:
        return f"{function}(g.{column})" if merge else f"g.{column}"

    count = total("SUM", "cnt")
    columns = [f"CAST({count} AS BIGINT) AS n"]
    for index in range(len(fields)):
        used, summed = total("SUM", f"u_{index}"), total("SUM", f"s_{index}")
        columns += [
            f"CAST({used} AS BIGINT) AS used_{index}",
            f"CAST({total('SUM', f'm_{index}')} AS BIGINT) AS missing_{index}",
            f"{summed} AS sum_{index}",
            f"{summed} * 1.0 / NULLIF({used}, 0) AS avg_{index}",
            f"{total('MIN', f'lo_{index}')} AS min_{index}",
            f"{total('MAX', f'hi_{index}')} AS max_{index}",
        ]
    columns += ["COUNT(*) OVER () AS group_total", f"SUM({count}) OVER () AS matched"]
    order = "ORDER BY n DESC, group_key IS NULL, group_key"
    regroup = " GROUP BY group_key, group_label, group_kind" if merge else ""
    grouped = compose(
        # Ordered outside: PostgreSQL orders by an output column only by its bare name.
        f"SELECT * FROM (SELECT {{}} AS group_key, {label} AS group_label, {{}} AS group_kind, "
        f"{', '.join(columns)} FROM ({{}}) g {join}{regroup}) groups {order}",
        group_key,
        group_kind,
        per_key,
    ).wrap("{} LIMIT %s", limit + 1)
    if kind != "linked":
        return grouped
    # A linked record's title is looked up for the groups returned only, not joined to every
    # matched record's links (which read the whole records table to hash it).
    title = "(SELECT t.title FROM records_record t WHERE t.id = g.group_key) AS group_label"
    names = ["group_key", title, "group_kind", *(c.rsplit(" AS ", 1)[-1] for c in columns)]
    return grouped.wrap(f"SELECT {', '.join(names)} FROM ({{}}) g {order}")


def _group_columns(grouping: dict[str, Any]) -> tuple[Sql, str, Sql, str]:
    """(key, label, kind, join) over one per-key row g: evaluated once per distinct raw key."""
    kind = grouping["kind"]
    if kind == "all":
        return Sql("NULL"), "NULL", Sql("'all'"), ""
    if kind == "collection":
        return Sql("g.k"), "c.name", Sql("'collection'"), "JOIN records_collection c ON c.id = g.k"
    if kind == "linked":  # the title is looked up for the groups returned (_grouped_sql)
        linked = Sql("CASE WHEN g.k IS NULL THEN 'not_linked' ELSE 'linked' END")
        return Sql("g.k"), "NULL", linked, ""
    if grouping["bucket"] is None:
        # On PostgreSQL g.k is already jsonb's one text rendering of the value.
        key = DataField([], "g.k").json_text() if vendor() == "sqlite" else Sql("g.k")
        return key, "NULL", Sql("CASE WHEN g.k IS NULL THEN 'missing' ELSE 'value' END"), ""
    key = _bucket(grouping["bucket"])
    dated = key.wrap(
        "CASE WHEN g.k IS NULL THEN 'missing' WHEN {} IS NULL THEN 'not_a_date' ELSE 'value' END"
    )
    return key, "NULL", dated, ""


def _bucket(bucket: str) -> Sql:
    """The month or year of a date string in the raw key g.k; NULL for any other value."""
    glob, regex, length = BUCKET_PATTERNS[bucket]
    if vendor() == "sqlite":
        # g.k is minified JSON text: a string is the one starting with a quote, and unless
        # escaped (json_extract decodes those) its text stands between its quotes.
        string = (
            "(CASE WHEN instr(g.k, '\\') = 0 THEN substr(g.k, 2, length(g.k) - 2) "
            "ELSE json_extract(g.k, '$') END)"
        )
        test, pattern = f"(g.k GLOB '\"*') AND {string} GLOB %s", glob
    else:
        string = "(((g.k)::jsonb #>> '{}') COLLATE \"C\")"
        test, pattern = f"jsonb_typeof((g.k)::jsonb) = 'string' AND {string} ~ %s", regex
    return Sql(f"CASE WHEN {test} THEN substr({string}, 1, {length}) END", (pattern,))


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
    types = of_types(grouping["relationship_types"])
    sides = link_sides(grouping["direction"])
    if by_workspace:
        workspace = Sql("%s", (grouping["workspace_id"],))
        links = compose(
            "FROM records_relationship rel WHERE rel.workspace_id = {}{}", workspace, types
        )
        pairs = joined(
            (
                links.wrap(f"SELECT rel.{own} AS own, rel.{other} AS other {{}}")
                for _, own, other in sides
            ),
            " UNION ",
        )
        owners = joined(
            (links.wrap(f"SELECT rel.{own} {{}}") for _, own, _ in sides), " UNION ALL "
        )
        unlinked = owners.wrap("r.id NOT IN ({})")
    else:
        # Forced to probe the relationship index per record (a fenced LATERAL on PostgreSQL,
        # CROSS JOIN order on SQLite): without statistics PostgreSQL scanned every link for
        # every record.
        probe = (
            "SELECT r.id AS own, rel.{other} AS other FROM records_record r "
            "CROSS JOIN records_relationship rel ON rel.{own} = r.id{{}} WHERE {{}}"
            if vendor() == "sqlite"
            else "SELECT r.id AS own, rel.other FROM records_record r CROSS JOIN LATERAL "
            "(SELECT rel.{other} AS other FROM records_relationship rel "
            "WHERE rel.{own} = r.id{{}} OFFSET 0) rel WHERE {{}}"
        )
        pairs = joined(
            (
                compose(probe.format(own=own, other=other), types, condition)
                for _, own, other in sides
            ),
            " UNION ",
        )
        none = "NOT EXISTS (SELECT 1 FROM records_relationship rel WHERE rel.{own} = r.id{{}})"
        unlinked = joined((types.wrap(none.format(own=own)) for _, own, _ in sides), " AND ")
    # Per part, not over their union: the records with no link are one group, summed
    # without sorting them by a key they all share.
    fence = FENCE[vendor()]
    linked = _with_records(pairs, inputs, condition).wrap(f"{{}} {fence}")
    alone = compose(
        f"SELECT NULL AS k{{}} FROM records_record r WHERE {{}} AND {{}} {fence}",
        inputs,
        condition,
        unlinked,
    )
    return compose(
        "{} UNION ALL SELECT * FROM ({}) not_linked WHERE cnt > 0",
        _per_key(linked, extremes, grouped=True),
        _per_key(alone, extremes, grouped=False),
    )


def _with_records(pairs: Sql, inputs: Sql, condition: Sql) -> Sql:
    """Each (own, other) pair with its matched record's inputs, the pairs driving, each record
    looked up by primary key (CROSS JOIN order on SQLite, a fenced LATERAL on PostgreSQL).
    Left to choose without statistics (a store just restored), PostgreSQL scanned every pair
    for every record: 50,000 records ran past the query timeout."""
    if vendor() == "sqlite":
        join = "CROSS JOIN records_record r ON r.id = l.own WHERE {}"
    else:
        join = (
            "CROSS JOIN LATERAL (SELECT r.data FROM records_record r "
            "WHERE r.id = l.own AND {} OFFSET 0) r"
        )
    return compose("SELECT l.other AS k{} FROM ({}) l " + join, inputs, pairs, condition)


def _group(
    row: tuple[Any, ...],
    grouping: dict[str, Any],
    metric_list: list[dict[str, Any]],
    fields: list[list[str]],
) -> dict[str, Any]:
    key, label, kind, count = row[:4]
    group = {} if grouping["kind"] == "all" else _describe_key(key, label, kind, grouping)
    group["count"] = count
    group["metrics"] = []
    for metric in metric_list:
        op = metric["op"]
        if op == "count":
            group["metrics"].append({"op": "count", "value": count})
            continue
        # Per field: used, missing, then sum, avg, min and max (METRIC_OPS after count).
        at = 4 + 6 * fields.index(metric["field"])
        used, missing = int(row[at] or 0), int(row[at + 1] or 0)
        value = row[at + 1 + METRIC_OPS.index(op)]
        if value is not None:
            value = float(value) if op == "avg" else plain_number(value)
        group["metrics"].append(
            {
                "op": op,
                "field": metric["field"],
                "value": value,
                "used": used,
                "skipped_missing": missing,
                "skipped_non_numeric": count - used - missing,
            }
        )
    return group


def _describe_key(key: Any, label: Any, kind: str, grouping: dict[str, Any]) -> dict[str, Any]:
    if grouping["kind"] == "collection":
        return {"key": key, "collection_name": label}
    if grouping["kind"] == "linked":
        return {"key": None, "not_linked": True} if key is None else {"key": key, "title": label}
    if kind in ("missing", "not_a_date"):
        return {"key": None, kind: True}
    return {"key": key if grouping["bucket"] else json.loads(key)}
