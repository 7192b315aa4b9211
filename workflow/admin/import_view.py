"""An import's own part of its review page: each row with its duplicate review, the decision
taken on it and, once applied, what it became; and its links (workflow.action_kinds.imports)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from records.admin.clarifications import Clarification, clarifications
from workflow import imports
from workflow.action_kinds import kind_of
from workflow.admin.changes import show
from workflow.admin.lookup import Lookup, Ref
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


@dataclass
class Candidate:
    ref: Ref
    score: Any
    reasons: str


@dataclass
class ImportRowView:
    key: str
    title: str
    flag: str
    flagged: bool
    data: str
    candidates: list[Candidate]
    decision: str
    duplicate_of: str
    made: Ref | None = None  # the record the row became, once applied
    outcome: str = ""  # "created", "used the existing record", "skipped"
    # The user's answer in the client for this row, and the agent's account of why a flagged
    # row is created anyway.
    clarifications: list[Clarification] = field(default_factory=list)


@dataclass
class ImportLinkView:
    source: Ref
    relationship_type: str
    target: Ref
    note: str = ""  # "not made: an endpoint row was skipped"


@dataclass
class ImportView:
    collection: Ref
    rows: list[ImportRowView]
    links: list[ImportLinkView]
    flagged: int
    decided: bool
    applied: bool = False
    summary: str = ""


def _outcomes(action: PreparedAction) -> dict[str, dict[str, Any]]:
    """Each import row's outcome by key, once the import was applied (else empty)."""
    result = action.result if isinstance(action.result, dict) else {}
    rows = result.get("rows")
    return rows if isinstance(rows, dict) else {}


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


def import_view(action: PreparedAction, lookup: Lookup) -> ImportView:
    arguments = action.arguments
    decisions = arguments.get("decisions") or {}
    data_by_key = {row["key"]: row.get("data") for row in arguments.get("rows") or []}
    titles = {str(row["key"]): str(row.get("title", "")) for row in arguments.get("rows") or []}
    outcomes = _outcomes(action)
    made = {k: str(o["record_id"]) for k, o in outcomes.items() if o.get("record_id")}
    rows = []
    for row in arguments.get("reviewed") or []:
        decision = decisions.get(row["key"]) or {}
        outcome = outcomes.get(row["key"]) or {}
        label = DECISION_LABELS.get(decision.get("decision", ""), "")
        if decision.get("record_id"):
            label = f"{label}: {lookup.title(decision['record_id'])}"
        flagged = row.get("status") != imports.CLEAN
        rows.append(
            ImportRowView(
                key=str(row["key"]),
                title=str(row["title"]),
                flag=FLAG_LABELS.get(row.get("status", ""), str(row.get("status", ""))),
                flagged=flagged,
                data=show(data_by_key.get(row["key"]) or {}, ROW_DATA_LIMIT),
                candidates=[
                    Candidate(
                        lookup.record_ref(c["record_id"]),
                        c.get("score"),
                        "; ".join(c.get("reasons", [])),
                    )
                    for c in row.get("candidates", [])
                ],
                decision=label or ("decided when the agent commits" if flagged else "create"),
                duplicate_of=str(row.get("duplicate_of") or ""),
                made=lookup.record_ref(outcome["record_id"]) if outcome.get("record_id") else None,
                outcome=OUTCOME_LABELS.get(str(outcome.get("outcome", "")), ""),
                clarifications=clarifications([decision], str(decision.get("clarification") or "")),
            )
        )
    result = action.result if isinstance(action.result, dict) else {}
    dropped = {d.get("link_index"): d.get("reason", "") for d in result.get("dropped_links") or []}
    links = [
        ImportLinkView(
            _row_end(link.get("source", {}), titles, made, lookup),
            str(link.get("relationship_type", "")),
            _row_end(link.get("target", {}), titles, made, lookup),
            f"not made: {dropped[index]}" if index in dropped else "",
        )
        for index, link in enumerate(arguments.get("links") or [])
    ]
    collection = lookup.collection_ref(arguments.get("collection_id"))
    flagged = sum(r.flagged for r in rows)
    summary = kind_of(action.operation).summary(len(arguments.get("rows") or []), collection.title)
    return ImportView(
        collection=collection,
        rows=rows,
        links=links,
        flagged=flagged,
        decided=arguments.get("decisions") is not None,
        applied=bool(outcomes),
        summary=summary + (f", {flagged} flagged" if flagged else ""),
    )
