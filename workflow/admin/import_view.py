"""An import's own part of its review page: each row with its duplicate review, the decision
taken on it and, once applied, what it became; and its links (workflow.action_kinds.imports)."""

from __future__ import annotations

from typing import Any

from records.admin.timeline import clarifications, show
from workflow import imports
from workflow.action_kinds import kind_of
from workflow.admin.changes import Lookup, Ref
from workflow.models import PreparedAction

FLAG_LABELS = {
    imports.CLEAN: "new",
    imports.POSSIBLE_DUPLICATE: "possible duplicate of an existing record",
    imports.BATCH_DUPLICATE: "same name as an earlier row",
}
DECISION_LABELS = {
    imports.SKIP: "skip (not imported)",
    imports.USE_EXISTING: "use the existing record",
    imports.CREATE_ANYWAY: "create anyway",
}
OUTCOME_LABELS = {
    "created": "created",
    "used_existing": "used the existing record",
    "skipped": "skipped",
}
ROW_DATA_LIMIT = 160


def _row_end(
    end: dict[str, Any], titles: dict[str, str], made: dict[str, str], lookup: Lookup
) -> Ref:
    """A link end as the reviewer reads it: an existing record, or a row by its title (linked
    to the record it became once applied)."""
    if "row" not in end:
        return lookup.record_ref(end.get("record_id"))
    key = str(end["row"])
    if key in made:
        ref = lookup.record_ref(made[key])
        return Ref(ref.id, ref.title, ref.url, f"row {key}")
    return Ref("", titles.get(key, key), "", f"row {key}")


def _row(
    row: dict[str, Any],
    decision: dict[str, Any],
    outcome: dict[str, Any],
    data: Any,
    lookup: Lookup,
) -> dict[str, Any]:
    """One reviewed row: its duplicate review, the decision taken on it, what it became."""
    label = DECISION_LABELS.get(decision.get("decision", ""), "")
    if decision.get("record_id"):
        label = f"{label}: {lookup.title(decision['record_id'])}"
    flagged = row.get("status") != imports.CLEAN
    return {
        "key": str(row["key"]),
        "title": str(row["title"]),
        "flag": FLAG_LABELS.get(row.get("status", ""), str(row.get("status", ""))),
        "flagged": flagged,
        "data": show(data or {}, ROW_DATA_LIMIT),
        "candidates": [
            (lookup.record_ref(c["record_id"]), c.get("score"), "; ".join(c.get("reasons", [])))
            for c in row.get("candidates", [])
        ],
        "decision": label or ("decided when the agent commits" if flagged else "create"),
        "duplicate_of": str(row.get("duplicate_of") or ""),
        "made": lookup.record_ref(outcome["record_id"]) if outcome.get("record_id") else None,
        "outcome": OUTCOME_LABELS.get(str(outcome.get("outcome", "")), ""),
        # The user's answer in the client for this row, and the agent's account of why a
        # flagged row is created anyway.
        "clarifications": clarifications([decision], str(decision.get("clarification") or "")),
    }


def import_view(action: PreparedAction, lookup: Lookup) -> dict[str, Any]:
    arguments = action.arguments
    decisions = arguments.get("decisions") or {}
    data_by_key = {row["key"]: row.get("data") for row in arguments.get("rows") or []}
    titles = {str(row["key"]): str(row.get("title", "")) for row in arguments.get("rows") or []}
    result = action.result if isinstance(action.result, dict) else {}
    # Each row's outcome by key, once the import was applied (else empty).
    outcomes = result["rows"] if isinstance(result.get("rows"), dict) else {}
    made = {k: str(o["record_id"]) for k, o in outcomes.items() if o.get("record_id")}
    rows = [
        _row(
            row,
            decisions.get(row["key"]) or {},
            outcomes.get(row["key"]) or {},
            data_by_key.get(row["key"]),
            lookup,
        )
        for row in arguments.get("reviewed") or []
    ]
    dropped = {d.get("link_index"): d.get("reason", "") for d in result.get("dropped_links") or []}
    links = [
        {
            "source": _row_end(link.get("source", {}), titles, made, lookup),
            "relationship_type": str(link.get("relationship_type", "")),
            "target": _row_end(link.get("target", {}), titles, made, lookup),
            "note": f"not made: {dropped[index]}" if index in dropped else "",
        }
        for index, link in enumerate(arguments.get("links") or [])
    ]
    collection = lookup.collection_ref(arguments.get("collection_id"))
    flagged = sum(r["flagged"] for r in rows)
    summary = kind_of(action.operation).summary(len(arguments.get("rows") or []), collection.title)
    return {
        "collection": collection,
        "rows": rows,
        "links": links,
        "flagged": flagged,
        "decided": arguments.get("decisions") is not None,
        "applied": bool(outcomes),
        "summary": summary + (f", {flagged} flagged" if flagged else ""),
    }
