"""resolve_record: which stored record does a name mean? Never a silent guess.

Statuses: resolved (one active exact title/alias/ID match, selected), needs_clarification
(several exact matches, an archived exact match, only similar names, or "me" with no mapping),
no_match, incomplete (too many matches or too large a scope to scan). Similar names are
suggestions and are never selected.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, TypedDict

from django.db.models import Q

from records import validation as v
from records.counters import links_key, names_key
from records.errors import AnchorError, invalid, not_found
from records.ids import is_valid_id
from records.models import Collection, Record, Relationship, SelfMapping
from records.names import normalize_name
from records.validation import canonical_json
from workflow.models import ReviewTicket
from workflow.name_index import NameMatch, match_names, scope_names
from workflow.scope import Scope
from workflow.tickets import issue_ticket

RESOLVED = "resolved"
NEEDS_CLARIFICATION = "needs_clarification"
NO_MATCH = "no_match"
INCOMPLETE = "incomplete"

MAX_CANDIDATES = 20
MAX_CONTEXT_RECORDS = 10
LINKS_PER_CANDIDATE = 5
PREVIEW_CHARS = 200
SELF_WORDS = {"me", "myself", "i"}


def _parse(
    scope: Scope, query: Any, collection_id: Any, context_record_ids: Any
) -> tuple[str, str | None, list[str]]:
    query_text = v.text("query", query, max_length=v.MAX_TITLE)
    if collection_id is not None:
        collection_id = v.entity_id(collection_id, "collection_id")
        if not Collection.objects.filter(
            workspace_id=scope.workspace_id, pk=collection_id
        ).exists():
            raise not_found("collection", collection_id)
    context: list[str] = []
    if context_record_ids is not None:
        if (
            not isinstance(context_record_ids, list)
            or len(context_record_ids) > MAX_CONTEXT_RECORDS
        ):
            raise invalid(
                "context_record_ids",
                f"must be a list of at most {MAX_CONTEXT_RECORDS} record IDs taken from earlier "
                "results (omit it to search without relationship filters).",
            )
        for index, item in enumerate(context_record_ids):
            record_id = v.record_id(item, f"context_record_ids[{index}]")
            if record_id not in context:
                context.append(record_id)
        found = set(
            Record.objects.filter(workspace_id=scope.workspace_id, pk__in=context).values_list(
                "pk", flat=True
            )
        )
        for record_id in context:
            if record_id not in found:
                raise not_found("record", record_id)
    return query_text, collection_id, context


def _neighbours(record_ids: list[str]) -> set[str] | None:
    """Records linked (either direction, one hop) to every one of record_ids."""
    if not record_ids:
        return None
    common: set[str] | None = None
    for record_id in record_ids:
        linked: set[str] = set()
        for source, target in Relationship.objects.filter(
            Q(source_id=record_id) | Q(target_id=record_id)
        ).values_list("source_id", "target_id"):
            linked.add(target if source == record_id else source)
        common = linked if common is None else common & linked
    return common


def _link_summaries(record_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    summaries: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if not record_ids:
        return summaries
    rels = (
        Relationship.objects.filter(Q(source_id__in=record_ids) | Q(target_id__in=record_ids))
        .select_related("source__collection", "target__collection")
        .order_by("created_at", "id")
    )
    wanted = set(record_ids)
    for rel in rels:
        for this, other, direction in (
            (rel.source, rel.target, "outgoing"),
            (rel.target, rel.source, "incoming"),
        ):
            if this.pk in wanted:
                summaries[this.pk].append(
                    {
                        "relationship_type": rel.relationship_type,
                        "direction": direction,
                        "record_id": other.pk,
                        "title": other.title,
                        "collection": other.collection.name,
                        "archived": other.archived_at is not None,
                    }
                )
    return summaries


def _preview(data: dict[str, Any]) -> str:
    text = canonical_json(data)
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


class _Found(TypedDict):
    """One candidate while resolving: its best score, whether any match was exact, and why."""

    score: float
    exact: bool
    reasons: list[str]


def _reason(match: NameMatch) -> str:
    kind = "alias" if match.is_alias else "title"
    if match.exact:
        return f"exact {kind} match: {match.display!r}"
    if match.word_match:
        return f"every query word appears in {kind} {match.display!r} (score {match.score:.2f})"
    differs = f"; {match.differs}" if match.differs else ""
    return f"similar spelling to {kind} {match.display!r} (score {match.score:.2f}){differs}"


@dataclass(frozen=True)
class Resolution:
    """One evaluation of a resolution request: the answer, and the counters it depends on."""

    status: str
    selected_record_id: str | None
    message: str
    candidates: list[dict[str, Any]]
    counter_keys: list[str]

    @property
    def answer(self) -> dict[str, Any]:
        """What a ticket keeps, and what a re-evaluation is compared on."""
        return {
            "status": self.status,
            "selected_record_id": self.selected_record_id,
            "candidates": [{k: c[k] for k in ANSWER_KEYS} for c in self.candidates],
        }


# What a ticket keeps of each candidate: enough to say later whether its standing changed.
ANSWER_KEYS = ("record_id", "title", "match", "score", "status", "collection_id")


def evaluate_resolution(
    scope: Scope, *, query_text: str, collection_id: str | None, context: list[str]
) -> Resolution:
    """The answer to a parsed request as of now, without issuing a ticket.

    resolve_record and the commit-time re-evaluation of a review both call this, so a review is
    re-checked with exactly the query and rules that produced it.
    """
    normalized = normalize_name(query_text)
    allowed = _neighbours(context)
    # The names counter this answer depends on. A lookup by ID or through the self mapping
    # depends only on that record's collection, not on every name in the workspace.
    names_scope = collection_id
    found: dict[str, _Found] = {}

    def consider(record_id: str, score: float, exact: bool, reason: str) -> None:
        if allowed is not None and record_id not in allowed:
            return
        entry = found.setdefault(record_id, {"score": 0.0, "exact": False, "reasons": []})
        entry["score"] = max(entry["score"], score)
        entry["exact"] = entry["exact"] or exact
        entry["reasons"].append(reason)

    self_lookup = normalized in SELF_WORDS
    self_message = ""
    if self_lookup:
        mapping = (
            SelfMapping.objects.filter(workspace_id=scope.workspace_id, actor_id=scope.actor_id)
            .select_related("record")
            .first()
        )
        if mapping is None:
            self_message = (
                f"{query_text!r} refers to the user, and no self mapping exists for this actor. "
                "Ask the user who they are, resolve that name, and record it with set_self "
                "only after they state it explicitly."
            )
        else:
            consider(mapping.record_id, 1.0, True, "self mapping of this actor")
            names_scope = mapping.record.collection_id
    by_id = not self_lookup and is_valid_id(query_text)
    if by_id:
        with_id = Record.objects.filter(workspace_id=scope.workspace_id, pk=query_text)
        if collection_id:
            with_id = with_id.filter(collection_id=collection_id)
        found_collection = with_id.values_list("collection_id", flat=True).first()
        if found_collection is not None:
            consider(query_text, 1.0, True, "record ID")
            names_scope = found_collection

    incomplete_reason = ""
    if not self_lookup and not by_id:
        names = scope_names(scope.workspace_id, collection_id)
        if names.too_large:
            incomplete_reason = (
                "The scope holds more records than one resolution scans; pass collection_id "
                "to narrow it."
            )
        else:
            for match in match_names(names, normalized, query_text):
                consider(match.record_id, match.score, match.exact, _reason(match))

    ranked = sorted(found.items(), key=lambda item: (not item[1]["exact"], -item[1]["score"]))
    if len(ranked) > MAX_CANDIDATES and not incomplete_reason:
        incomplete_reason = (
            f"More than {MAX_CANDIDATES} records match; add words to the query, pass "
            "collection_id, or pass context_record_ids to narrow it."
        )
    ranked = ranked[:MAX_CANDIDATES]
    records = {
        r.pk: r
        for r in Record.objects.filter(pk__in=[rid for rid, _ in ranked]).select_related(
            "collection"
        )
    }
    if collection_id:  # an ID or self mapping outside the requested collection does not count
        ranked = [(rid, e) for rid, e in ranked if records[rid].collection_id == collection_id]
    links = _link_summaries([rid for rid, _ in ranked])

    candidates: list[dict[str, Any]] = []
    for record_id, entry in ranked:
        record = records[record_id]
        record_links = links.get(record_id, [])
        candidates.append(
            {
                "record_id": record_id,
                "title": record.title,
                "collection_id": record.collection_id,
                "collection": record.collection.name,
                "match": "exact" if entry["exact"] else "similar",
                "score": round(entry["score"], 3),
                "reasons": entry["reasons"],
                "status": "archived" if record.archived_at else "active",
                "archived_at": record.archived_at.isoformat() if record.archived_at else None,
                "created_at": record.created_at.isoformat(),
                "version": record.version,
                "data_preview": _preview(record.data),
                "links": record_links[:LINKS_PER_CANDIDATE],
                "links_truncated": len(record_links) > LINKS_PER_CANDIDATE,
            }
        )

    exact = [c for c in candidates if c["match"] == "exact"]
    selected = None
    if incomplete_reason:
        status, message = (
            INCOMPLETE,
            incomplete_reason + " An incomplete review cannot authorize a write.",
        )
    elif len(exact) == 1 and exact[0]["status"] == "active":
        status = RESOLVED
        selected = exact[0]["record_id"]
        message = (
            "One active record matches exactly. A name match is not proof of identity: check it "
            "against what the user means. Other candidates are suggestions only."
        )
    elif exact:
        status = NEEDS_CLARIFICATION
        message = (
            "Several records match exactly, or the exact match is archived. Ask the user which "
            "one they mean, using the distinguishing details (collection, data, links)."
        )
    elif candidates:
        status = NEEDS_CLARIFICATION
        message = (
            "No exact match; similar names are listed. Ask the user whether they meant one of "
            "them. Similar spelling is not identity; never pick one on your own."
        )
    elif self_message:
        status, message = NEEDS_CLARIFICATION, self_message
    else:
        status = NO_MATCH
        message = (
            "No record in this scope has this name. That is not proof the thing is unknown "
            "(it may be stored under another name): ask before creating it."
        )

    counter_keys = [names_key(names_scope), *(links_key(c["record_id"]) for c in candidates)]
    counter_keys += [links_key(record_id) for record_id in context]
    return Resolution(status, selected, message, candidates, counter_keys)


def resolve_record(
    scope: Scope,
    *,
    query: Any,
    collection_id: Any = None,
    context_record_ids: Any = None,
) -> dict[str, Any]:
    query_text, collection_id, context = _parse(scope, query, collection_id, context_record_ids)
    resolution = evaluate_resolution(
        scope, query_text=query_text, collection_id=collection_id, context=context
    )
    ticket = issue_ticket(
        scope,
        kind=ReviewTicket.RESOLUTION,
        request={
            "query": query_text,
            "normalized_query": normalize_name(query_text),
            "collection_id": collection_id,
            "context_record_ids": context,
        },
        answer=resolution.answer,
        counter_keys=resolution.counter_keys,
    )
    return {
        "resolution_id": ticket.pk,
        "status": resolution.status,
        "selected_record_id": resolution.selected_record_id,
        "message": resolution.message,
        "query": query_text,
        "collection_id": collection_id,
        "context_record_ids": context,
        "candidates": resolution.candidates,
        "expires_at": ticket.expires_at.isoformat(),
    }


MAX_BATCH = 10


def batch_resolve(scope: Scope, *, requests: Any) -> dict[str, Any]:
    """Several resolutions; one item's bad input is reported in place, the others still run."""
    if not isinstance(requests, list) or not 1 <= len(requests) <= MAX_BATCH:
        raise invalid("requests", f"must be a list of 1-{MAX_BATCH} resolution requests.")
    items = []
    for index, request in enumerate(requests):
        allowed = {"query", "collection_id", "context_record_ids"}
        try:
            if not isinstance(request, dict) or "query" not in request or set(request) - allowed:
                raise invalid(
                    f"requests[{index}]",
                    f"must be an object with keys {sorted(allowed)} (query required).",
                )
            result = resolve_record(scope, **request)
            items.append({"item_index": index, "ok": True, "result": result})
        except AnchorError as exc:
            items.append({"item_index": index, "ok": False, "error": exc.as_dict()})
    return {"items": items}
