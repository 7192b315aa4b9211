"""Reviewed import: many new records into one collection, duplicate-checked on the server.

prepare_import scores every row title against every title and alias in the collection (archives
included) and against the other rows, with the same rule and threshold as resolve_record, and
stores the exact import. commit_import applies it with one decision for each flagged row, all or
nothing, and goes stale if any name in the collection changed since prepare.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from typing import Any

from records import services
from records import validation as v
from records.errors import NEEDS_CLARIFICATION, AnchorError, invalid
from records.models import Collection, Record
from records.names import normalize_name
from records.selectors import in_workspace
from records.selectors.serialize import relationship_dict
from records.services import WriteContext
from workflow.names.cache import scope_names
from workflow.names.match import MIN_FUZZY_LENGTH, NameMatch, match_names_many
from workflow.names.rule import is_similar
from workflow.scope import Scope

MAX_ROWS = 100
MAX_LINKS = 200
MAX_ROW_BYTES = 1_000_000
MAX_KEY = 100
MAX_CANDIDATES = 5
# The review budget, in comparisons of one row title with one existing name. rapidfuzz's time
# for a pair grows with (64-character blocks of the title) x (characters of the name), so a
# pair counts as max(1, blocks x name length / CHARS_PER_COMPARISON) comparisons: short names
# count one each, two 300-character titles about 62. Measured with `python manage.py
# benchmark --only imports` on the shared 2-core machine under load (load average ~5): the
# costliest case per count, 40-character names, took 0.77 s for 3,000,000 counted comparisons
# (about 0.26 us each; 300-character titles 0.38 s), so the cap of 2,000,000 keeps the worst
# case near half a second. 100 rows against 10,000 person names (1,000,000) took 0.2 s.
MAX_COMPARISONS = 2_000_000
CHARS_PER_COMPARISON = 24

CLEAN = "clean"
POSSIBLE_DUPLICATE = "possible_duplicate"
BATCH_DUPLICATE = "batch_duplicate"
SKIP, USE_EXISTING, CREATE_ANYWAY = ("skip", "use_existing", "create_anyway")


# The shapes of rows, links and decisions (objects of known keys, a row end or a record end) are
# the tool schema's (workflow.mcp.shapes), checked before these run; the bounds are kept here too.


def _rows(value: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not 1 <= len(value) <= MAX_ROWS:
        raise invalid("rows", f"must be a list of 1-{MAX_ROWS} rows; split larger imports.")
    rows: list[dict[str, Any]] = []
    keys: set[str] = set()
    total = 0
    for index, row in enumerate(value):
        field = f"rows[{index}]"
        key = v.text(f"{field}.key", row.get("key", str(index)), max_length=MAX_KEY)
        if key in keys:
            raise invalid(f"{field}.key", f"{key!r} is used by another row; keys are unique.")
        keys.add(key)
        data = v.json_object(f"{field}.data", row.get("data", {}))
        total += len(v.canonical_json(data).encode())
        rows.append({"key": key, "title": v.title(row["title"], f"{field}.title"), "data": data})
    if total > MAX_ROW_BYTES:
        raise invalid("rows", f"hold {total} bytes of data; the limit is {MAX_ROW_BYTES}.")
    return rows


def _endpoint(value: dict[str, str], field: str, keys: set[str]) -> dict[str, str]:
    if "record_id" in value:
        return {"record_id": v.record_id(value["record_id"], f"{field}.record_id")}
    if value["row"] not in keys:
        raise invalid(field, f"row {value['row']!r} is not a key of rows.")
    return {"row": value["row"]}


def _links(value: list[dict[str, Any]] | None, keys: set[str]) -> list[dict[str, Any]]:
    if value is None:
        return []
    if len(value) > MAX_LINKS:
        raise invalid("links", f"must be a list of at most {MAX_LINKS} links.")
    links: list[dict[str, Any]] = []
    for index, link in enumerate(value):
        field = f"links[{index}]"
        source = _endpoint(link["source"], f"{field}.source", keys)
        target = _endpoint(link["target"], f"{field}.target", keys)
        if "row" not in source and "row" not in target:
            raise invalid(field, "links between existing records go through prepare_write.")
        rel_type = v.relationship_type(link["relationship_type"], f"{field}.relationship_type")
        links.append({"source": source, "relationship_type": rel_type, "target": target})
    return links


def review_cost(titles: list[str], names: list[str]) -> int:
    """Comparisons the review of `titles` against `names` counts, weighted by length."""
    lengths = Counter(map(len, names))
    total = 0.0
    for blocks, count in Counter(-(-len(title) // 64) for title in titles).items():
        per_row = sum(
            times * max(1.0, blocks * length / CHARS_PER_COMPARISON)
            for length, times in lengths.items()
        )
        total += count * per_row
    return math.ceil(total)


def review_rows(
    workspace_id: str, collection_id: str, rows: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], int]:
    """Each row's status and candidates; the same rule as resolve_record."""
    names = scope_names(workspace_id, collection_id)
    live = names.live_names()
    normalized_titles = [normalize_name(row["title"]) for row in rows]
    comparisons = review_cost(normalized_titles, live)
    if comparisons > MAX_COMPARISONS:
        fit = max(1, MAX_COMPARISONS * len(rows) // comparisons)
        raise invalid(
            "rows",
            f"{len(rows)} rows against {len(live)} existing names is {comparisons} "
            f"comparisons (long titles count more); the limit is {MAX_COMPARISONS}. Send at "
            f"most {fit} rows per call.",
            rows_that_fit=fit,
        )
    every_match = match_names_many(
        names, [(n, row["title"]) for n, row in zip(normalized_titles, rows, strict=True)]
    )
    reviewed: list[dict[str, Any]] = [
        {"key": row["key"], "title": row["title"], "candidates": _candidates(found)}
        for row, found in zip(rows, every_match, strict=True)
    ]
    candidates = [c for item in reviewed for c in item["candidates"]]
    records = Record.objects.filter(pk__in={c["record_id"] for c in candidates})
    details = {r.pk: r for r in records.only("id", "title", "archived_at", "created_at")}
    for candidate in candidates:
        record = details[candidate["record_id"]]
        candidate.update(
            title=record.title,
            status="archived" if record.archived_at else "active",
            created_at=record.created_at.isoformat(),
        )
    import numpy as np  # here: only an import needs it, not the server's start
    from rapidfuzz import process
    from rapidfuzz.distance import Indel

    # Every pair of rows' ratio in one vectorised call; the word-run rule runs only on pairs
    # that reach the threshold (is_similar with the score already known).
    pair_scores = process.cdist(
        normalized_titles,
        normalized_titles,
        scorer=Indel.normalized_similarity,
        processor=None,
        dtype=np.float64,
    )
    for index, (item, title) in enumerate(zip(reviewed, normalized_titles, strict=True)):
        earlier = next(
            (
                reviewed[other]
                for other, other_title in enumerate(normalized_titles[:index])
                if other_title == title
                or (
                    min(len(title), len(other_title)) >= MIN_FUZZY_LENGTH
                    and is_similar(other_title, title, float(pair_scores[other, index]))
                )
            ),
            None,
        )
        item["status"] = (
            POSSIBLE_DUPLICATE if item["candidates"] else BATCH_DUPLICATE if earlier else CLEAN
        )
        item["duplicate_of"] = earlier["key"] if earlier else None
    return reviewed, names.revision


def _candidates(found: list[NameMatch]) -> list[dict[str, Any]]:
    """A row's best stored look-alikes, each record once with every name it matched by."""
    matches: dict[str, dict[str, Any]] = {}
    for match in found:
        entry = matches.setdefault(
            match.record_id, {"record_id": match.record_id, "score": 0.0, "reasons": []}
        )
        entry["score"] = max(entry["score"], round(match.score, 3))
        kind = "alias" if match.is_alias else "title"
        differs = f"; {match.differs}" if match.differs else ""
        entry["reasons"].append(
            f"{'exact' if match.exact else 'similar'} {kind} {match.display!r}{differs}"
        )
    return sorted(matches.values(), key=lambda c: -c["score"])[:MAX_CANDIDATES]


def _standing(row: dict[str, Any]) -> tuple[Any, ...]:
    """What a row's review decided on: its status and each candidate's title and standing."""
    return (
        row["status"],
        row["duplicate_of"],
        sorted((c["record_id"], c["title"], c["status"]) for c in row["candidates"]),
    )


def review_changes(workspace_id: str, arguments: dict[str, Any]) -> list[str]:
    """Review the rows again and say which rows' answers differ from the stored review.

    Used at commit when a name in the collection changed: the import stays valid when every
    row would be flagged (or not) exactly as it was, against the same candidates.
    """
    try:
        now, _ = review_rows(workspace_id, arguments["collection_id"], arguments["rows"])
    except AnchorError as exc:
        return [exc.message]
    before = {row["key"]: row for row in arguments["reviewed"]}
    changes = []
    for row in now:
        was = before[row["key"]]
        if _standing(row) == _standing(was):
            continue
        known = {c["record_id"] for c in was["candidates"]}
        new = [
            f"{c['title']!r} ({c['record_id']})"
            for c in row["candidates"]
            if c["record_id"] not in known
        ]
        if new:
            changes.append(f"row {row['key']!r} has new candidate(s) {', '.join(new)}")
        else:
            changes.append(f"row {row['key']!r} is now {row['status']} (was {was['status']})")
    return changes


def parse_import(
    scope: Scope, arguments: dict[str, Any]
) -> tuple[Collection, list[dict[str, Any]], list[dict[str, Any]]]:
    collection = in_workspace(
        Collection.objects,
        workspace_id=scope.workspace_id,
        pk=v.entity_id(arguments["collection_id"], "collection_id"),
        kind="collection",
    )
    rows = _rows(arguments["rows"])
    links = _links(arguments.get("links"), {r["key"] for r in rows})
    return collection, rows, links


def parse_decisions(
    value: Any,
    reviewed: list[dict[str, Any]],
    confirmed: dict[str, dict[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """One checked decision per flagged row: the agent's (`value`), and those the user gave in
    the client (`confirmed`, each carrying its `user_confirmed_in_client` record), which need
    no agent-reported clarification."""
    flagged = {r["key"]: r for r in reviewed if r["status"] != CLEAN}
    value = {} if value is None else value
    confirmed = confirmed or {}
    value = {
        **value,
        **{
            key: {k: d[k] for k in ("decision", "record_id") if k in d}
            for key, d in confirmed.items()
        },
    }
    if set(value) != set(flagged):
        missing, extra = sorted(set(flagged) - set(value)), sorted(set(value) - set(flagged))
        raise invalid(
            "decisions",
            f"need exactly one decision per flagged row {sorted(flagged)}"
            + (f"; missing {missing}" if missing else "")
            + (f"; not flagged {extra}" if extra else "")
            + ".",
            needs_decision=sorted(flagged),
        )
    decisions: dict[str, dict[str, Any]] = {}
    for key, raw in value.items():
        field = f"decisions.{key}"
        decision = {"decision": raw["decision"]}
        if raw["decision"] == USE_EXISTING:
            candidates = [c["record_id"] for c in flagged[key]["candidates"]]
            record_id = raw.get("record_id")
            if record_id not in candidates:
                raise invalid(
                    f"{field}.record_id",
                    f"use_existing needs one of this row's candidates {candidates}.",
                )
            decision["record_id"] = record_id
        if raw["decision"] == CREATE_ANYWAY:
            decision["clarification"] = v.description(
                raw.get("clarification") or "", f"{field}.clarification", allow_blank=True
            )
        if key in confirmed:
            decision["user_confirmed_in_client"] = confirmed[key]["user_confirmed_in_client"]
        decisions[key] = decision
    for key, decision in decisions.items():
        if decision["decision"] != CREATE_ANYWAY or decision["clarification"] or key in confirmed:
            continue
        row = flagged[key]
        resolved_elsewhere = row["status"] == BATCH_DUPLICATE and decisions.get(
            row["duplicate_of"], {}
        ).get("decision") in (SKIP, USE_EXISTING)
        if not resolved_elsewhere:
            raise AnchorError(
                NEEDS_CLARIFICATION,
                f"decisions.{key}: create_anyway on a possible duplicate needs a clarification "
                "summarising what the user said about how it differs.",
                field=f"decisions.{key}",
            )
    return decisions


def apply_import(ctx: WriteContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Create the rows as decided, then the links; inside the caller's transaction.

    The new records are written together (services.record_create_many), and so are the links
    when every one joins two of them; a link to a stored record goes through
    relationship_create, which locks and checks that record."""
    reviewed = {r["key"]: r for r in arguments["reviewed"]}
    decisions = arguments.get("decisions") or {}
    outcome: dict[str, dict[str, Any]] = {}
    new_rows: list[tuple[str, services.NewRecord]] = []
    for index, row in enumerate(arguments["rows"]):
        decision = decisions.get(row["key"], {"decision": "create"})
        if decision["decision"] == SKIP:
            outcome[row["key"]] = {"outcome": "skipped"}
            continue
        if decision["decision"] == USE_EXISTING:
            outcome[row["key"]] = {"outcome": "used_existing", "record_id": decision["record_id"]}
            continue
        said = decision.get("user_confirmed_in_client")  # the user's answer in the client
        row_ctx = replace(
            ctx,
            clarification=decision.get("clarification") or ctx.clarification,
            review_evidence=[
                *ctx.review_evidence,
                {"import_row": row["key"], "status": reviewed[row["key"]]["status"]}
                | ({"user_confirmed_in_client": said} if said else {}),
            ],
            item_index=index,
        )
        outcome[row["key"]] = {}  # keeps the rows' order; filled in below
        new_rows.append((row["key"], services.NewRecord(row_ctx, row["title"], row["data"])))
    created = services.record_create_many(
        collection_id=arguments["collection_id"], rows=[new for _, new in new_rows]
    )
    new_records = {key: record for (key, _), record in zip(new_rows, created, strict=True)}
    for key, record in new_records.items():
        outcome[key] = {"outcome": "created", "record_id": record.pk}
    created_links, dropped_links = _apply_links(ctx, arguments, outcome, new_records)
    return {
        "rows": outcome,
        "links": created_links,
        "dropped_links": dropped_links,
        "created_count": len(created),
    }


def _apply_links(
    ctx: WriteContext,
    arguments: dict[str, Any],
    outcome: dict[str, dict[str, Any]],
    new_records: dict[str, Record],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    kept: list[tuple[int, dict[str, Any], list[Any]]] = []
    dropped_links = []
    for index, link in enumerate(arguments.get("links") or []):
        ends = [
            end.get("record_id") or outcome[end["row"]].get("record_id")
            for end in (link["source"], link["target"])
        ]
        if None in ends:
            dropped_links.append(
                {"link_index": index, **link, "reason": "an endpoint row was skipped"}
            )
            continue
        kept.append((index, link, ends))
    # Between records created just now, all at once when nothing needs the single service's
    # checks (a stored record to lock, a link to itself, the same pair twice).
    between_new = [
        services.NewLink(
            replace(ctx, item_index=index),
            new_records[link["source"]["row"]],
            link["relationship_type"],
            new_records[link["target"]["row"]],
        )
        for index, link, _ in kept
        if all(end.get("row") in new_records for end in (link["source"], link["target"]))
    ]
    if len(between_new) == len(kept) and services.can_link_many(between_new):
        made = services.relationship_create_many(between_new)
        created_links = [
            {"link_index": index, **relationship_dict(rel), "created": True}
            for (index, _, _), rel in zip(kept, made, strict=True)
        ]
        return created_links, dropped_links
    created_links = []
    services.lock_records(ctx, [end for _, _, ends in kept for end in ends])
    for index, link, (source_id, target_id) in kept:
        rel, was_created = services.relationship_create(
            ctx=replace(ctx, item_index=index),
            source_id=source_id,
            relationship_type=link["relationship_type"],
            target_id=target_id,
        )
        created_links.append(
            {"link_index": index, **relationship_dict(rel), "created": was_created}
        )
    return created_links, dropped_links
