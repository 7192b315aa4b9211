"""resolve_record: which stored record does a name mean? Never a silent guess.

Statuses: resolved (one active exact title/alias/ID match, selected), needs_clarification
(several exact matches, an archived exact match, only similar names, or "me" with no mapping),
no_match, incomplete (too many matches or too large a scope to scan). Similar names are
suggestions and are never selected.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db.models import Q

from records import validation as v
from records.counters import counter_values, links_key, names_key
from records.errors import AnchorError, invalid, not_found
from records.ids import is_valid_id
from records.models import Record, Relationship, SelfMapping
from records.names import normalize_name
from records.selectors import values_by_id
from records.selectors.scoped import collection_checked
from records.validation import canonical_json
from workflow.models import ReviewTicket
from workflow.names.cache import scope_names
from workflow.names.match import NameMatch, match_names
from workflow.scope import Scope
from workflow.tickets import issue_tickets

RESOLVED = "resolved"
NEEDS_CLARIFICATION = "needs_clarification"
NO_MATCH = "no_match"
INCOMPLETE = "incomplete"

MAX_CANDIDATES = 20
MAX_CONTEXT_RECORDS = 10
LINKS_PER_CANDIDATE = 5
PREVIEW_CHARS = 200
SELF_WORDS = {"me", "myself", "i"}


def _request(query_text: str, collection_id: str | None, context: list[str]) -> dict[str, Any]:
    """A checked request, as its ticket keeps it: enough to ask it again at commit."""
    return {
        "query": query_text,
        "normalized_query": normalize_name(query_text),
        "collection_id": collection_id,
        "context_record_ids": context,
    }


def _parse(
    scope: Scope, query: Any, collection_id: Any = None, context_record_ids: Any = None
) -> dict[str, Any]:
    query_text = v.text("query", query, max_length=v.MAX_TITLE)
    collection_id = collection_checked(scope.workspace_id, collection_id)
    if context_record_ids is None:
        return _request(query_text, collection_id, [])
    if not isinstance(context_record_ids, list) or len(context_record_ids) > MAX_CONTEXT_RECORDS:
        raise invalid(
            "context_record_ids",
            f"must be a list of at most {MAX_CONTEXT_RECORDS} record IDs taken from earlier "
            "results (omit it to search without relationship filters).",
        )
    context = list(
        dict.fromkeys(
            v.record_id(item, f"context_record_ids[{index}]")
            for index, item in enumerate(context_record_ids)
        )
    )
    rows = values_by_id(Record.objects, workspace_id=scope.workspace_id, ids=context, fields=["id"])
    missing = [rid for rid in context if rid not in {row["id"] for row in rows}]
    if missing:
        raise not_found("record", missing[0], f"context_record_ids[{context.index(missing[0])}]")
    return _request(query_text, collection_id, context)


def _neighbours(record_ids: list[str]) -> set[str] | None:
    """Records linked (either direction, one hop) to every one of record_ids."""
    if not record_ids:
        return None
    links = link_summaries(record_ids)
    return set.intersection(*({link["record_id"] for link in links[r]} for r in record_ids))


def link_summaries(record_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    summaries: dict[str, list[dict[str, Any]]] = defaultdict(list)
    # Plain columns rather than model instances: a hub's links are many rows, and building
    # two records and two collections per row cost more than the query.
    shown = ("id", "title", "collection__name", "archived_at")  # of each end
    rows = (
        Relationship.objects.filter(Q(source_id__in=record_ids) | Q(target_id__in=record_ids))
        .order_by("created_at", "id")
        .values_list(
            "relationship_type", *(f"{end}__{c}" for end in ("source", "target") for c in shown)
        )
    )
    wanted = set(record_ids)
    for relationship_type, *ends in rows:
        source, target = ends[: len(shown)], ends[len(shown) :]
        for this, other, direction in ((source, target, "outgoing"), (target, source, "incoming")):
            if this[0] in wanted:
                record_id, title, collection, archived_at = other
                summaries[this[0]].append(
                    {
                        "relationship_type": relationship_type,
                        "direction": direction,
                        "record_id": record_id,
                        "title": title,
                        "collection": collection,
                        "archived": archived_at is not None,
                    }
                )
    return summaries


def _preview(data: dict[str, Any]) -> str:
    text = canonical_json(data)
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _reason(match: NameMatch) -> str:
    kind = "alias" if match.is_alias else "title"
    if match.exact:
        return f"exact {kind} match: {match.display!r}"
    if match.word_match:
        return f"every query word appears in {kind} {match.display!r} (score {match.score:.2f})"
    differs = f"; {match.differs}" if match.differs else ""
    return f"similar spelling to {kind} {match.display!r} (score {match.score:.2f}){differs}"


# What a ticket keeps of each candidate: enough to say later whether its standing changed.
ANSWER_KEYS = ("record_id", "title", "match", "score", "status", "collection_id")


def _kept(answer: dict[str, Any]) -> dict[str, Any]:
    """What a ticket keeps of an answer, and what a re-evaluation is compared on."""
    return {
        "status": answer["status"],
        "selected_record_id": answer["selected_record_id"],
        "candidates": [{k: c[k] for k in ANSWER_KEYS} for c in answer["candidates"]],
    }


def _search(
    scope: Scope, request: dict[str, Any], id_collections: dict[str, str]
) -> dict[str, Any]:
    """What matching finds for one request, before its candidates' records are loaded.
    `id_collections`: the collection of each ID-shaped query's record in this workspace, read
    once for all the requests."""
    query_text, normalized = request["query"], request["normalized_query"]
    collection_id = request["collection_id"]
    allowed = _neighbours(request["context_record_ids"])
    # The names counter this answer depends on. A lookup by ID or through the self mapping
    # depends only on that record's collection, not on every name in the workspace.
    names_scope = collection_id
    found: dict[str, dict[str, Any]] = {}

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
            names_scope = mapping.record.collection_id
            if collection_id in (None, names_scope):  # outside the collection it does not count
                consider(mapping.record_id, 1.0, True, "self mapping of this actor")
    by_id = not self_lookup and is_valid_id(query_text)
    found_collection = id_collections.get(query_text) if by_id else None
    if found_collection is not None and collection_id in (None, found_collection):
        consider(query_text, 1.0, True, "record ID")
        names_scope = found_collection

    incomplete_reason = ""
    names_revision = None
    if not self_lookup and not by_id:
        names = scope_names(scope.workspace_id, collection_id)
        names_revision = names.revision
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
    return {
        "ranked": ranked[:MAX_CANDIDATES],  # candidate -> best score, any exact match, why
        "names_scope": names_scope,
        "names_revision": names_revision,  # the revision of the names list matched, if one was
        "incomplete_reason": incomplete_reason,
        "self_message": self_message,
    }


def _records(scope: Scope, record_ids: list[str]) -> dict[str, Record]:
    """These records of the workspace (by primary key alone: see values_by_id)."""
    rows = Record.objects.filter(pk__in=record_ids).select_related("collection")
    return {r.pk: r for r in rows if r.workspace_id == scope.workspace_id}


Answer = tuple[dict[str, Any], dict[str, int | None]]  # the reply's answer, its counters


def _evaluate(scope: Scope, requests: list[dict[str, Any]]) -> list[Answer]:
    """Each request answered as of now, reading what they share once: the records behind ID
    queries, the candidates' records and links."""
    id_queries = [r["query"] for r in requests if is_valid_id(r["query"])]
    records = _records(scope, id_queries)
    id_collections = {pk: record.collection_id for pk, record in records.items()}
    searches = [_search(scope, request, id_collections) for request in requests]
    candidate_ids = list(dict.fromkeys(rid for s in searches for rid, _ in s["ranked"]))
    records |= _records(scope, [rid for rid in candidate_ids if rid not in records])
    links = link_summaries(candidate_ids)
    return [_answer(s, r, records, links) for s, r in zip(searches, requests, strict=True)]


def evaluate_resolution(
    scope: Scope, *, query_text: str, collection_id: str | None, context: list[str]
) -> dict[str, Any]:
    """What a ticket of this request would keep, answered as of now.

    resolve_record and the commit-time re-evaluation of a review both come here, so a review
    is re-checked with exactly the query and rules that produced it.
    """
    answer, _ = _evaluate(scope, [_request(query_text, collection_id, context)])[0]
    return _kept(answer)


# What an answer tells the agent (an incomplete one, and "me" unmapped, say their own reason).
MESSAGES = {
    "one_exact": "One active record matches exactly. A name match is not proof of identity: check "
    "it against what the user means. Other candidates are suggestions only.",
    "several_exact": "Several records match exactly, or the exact match is archived.",
    "similar": "No exact match, only similar names: similar spelling is not identity; never "
    "pick one on your own.",
    "none": "No record in this scope has this name. When the user is telling you about "
    "something new, create it. Ask first only when they refer to something they expect to "
    "exist (it may be stored under another name or in another collection).",
}


def _answer(
    search: dict[str, Any],
    request: dict[str, Any],
    records: dict[str, Record],
    links: dict[str, list[dict[str, Any]]],
) -> Answer:
    candidates: list[dict[str, Any]] = []
    for record_id, entry in search["ranked"]:
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
    if search["incomplete_reason"]:
        status = INCOMPLETE
        message = search["incomplete_reason"] + " An incomplete review cannot authorize a write."
    elif len(exact) == 1 and exact[0]["status"] == "active":
        status, message = RESOLVED, MESSAGES["one_exact"]
    elif exact:
        status, message = NEEDS_CLARIFICATION, MESSAGES["several_exact"]
    elif candidates:
        status, message = NEEDS_CLARIFICATION, MESSAGES["similar"]
    elif search["self_message"]:
        status, message = NEEDS_CLARIFICATION, search["self_message"]
    else:
        status, message = NO_MATCH, MESSAGES["none"]

    # The names counter holds the names list's revision when one was matched (a ticket records
    # that value, so a name written since the list was read moves it); None is read later.
    counters: dict[str, int | None] = {names_key(search["names_scope"]): search["names_revision"]}
    for record_id in [c["record_id"] for c in candidates] + request["context_record_ids"]:
        counters[links_key(record_id)] = None
    answer = {
        "status": status,
        "selected_record_id": exact[0]["record_id"] if status == RESOLVED else None,
        "message": message,
        **{key: request[key] for key in ("query", "collection_id", "context_record_ids")},
        "candidates": candidates,
    }
    return answer, counters


def resolve_record(
    scope: Scope,
    *,
    query: Any,
    collection_id: Any = None,
    context_record_ids: Any = None,
) -> dict[str, Any]:
    return _resolve_many(scope, [_parse(scope, query, collection_id, context_record_ids)])[0]


def batch_resolve(scope: Scope, *, requests: list[dict[str, Any]]) -> dict[str, Any]:
    """Several resolutions (1-10 objects of resolve_record's arguments, as the tool's schema
    has them); one item's bad input is reported in place, the others still run, each answered
    exactly as resolve_record would answer it (_resolve_many)."""
    parsed: dict[int, dict[str, Any]] = {}
    answered: dict[int, dict[str, Any]] = {}
    for index, request in enumerate(requests):
        try:
            parsed[index] = _parse(scope, **request)
        except AnchorError as exc:
            answered[index] = {"error": exc.as_dict()}
    replies = _resolve_many(scope, list(parsed.values()))
    answered |= {i: {"result": r} for i, r in zip(parsed, replies, strict=True)}
    return {"items": [answered[i] for i in range(len(requests))]}


def _resolve_many(scope: Scope, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each request answered and ticketed: what they share is read once (_evaluate), the
    counters not known from a names list in one query, and the tickets written in one INSERT."""
    answers = _evaluate(scope, requests)
    unread = {k for _, counters in answers for k, value in counters.items() if value is None}
    read = counter_values(scope.workspace_id, unread)
    reviews = [
        (request, _kept(answer), {k: read[k] if v is None else v for k, v in sorted(c.items())})
        for request, (answer, c) in zip(requests, answers, strict=True)
    ]
    # A collection, a context record or a candidate was just read: the workspace exists.
    read_a_row = any(r["collection_id"] or r["context_record_ids"] for r in requests) or any(
        answer["candidates"] for answer, _ in answers
    )
    tickets = issue_tickets(scope, ReviewTicket.RESOLUTION, reviews, workspace_exists=read_a_row)
    return [
        {"resolution_id": ticket.pk, **answer, "expires_at": ticket.expires_at.isoformat()}
        for ticket, (answer, _) in zip(tickets, answers, strict=True)
    ]


def resolve_written(scope: Scope, record_id: str, collection_id: str) -> dict[str, Any]:
    """resolve_record by ID of a record just written, in its collection, without checking the
    collection again (the record's own row vouches for it)."""
    return _resolve_many(scope, [_request(record_id, collection_id, [])])[0]


def resolve_by_ids(scope: Scope, record_ids: list[str]) -> dict[str, str]:
    """A resolution by ID of each record (just written): record ID -> resolution_id, so the
    next write (a link) cites it without resolving again. One INSERT for all of them."""
    replies = _resolve_many(scope, [_request(record_id, None, []) for record_id in record_ids])
    return {record_id: r["resolution_id"] for record_id, r in zip(record_ids, replies, strict=True)}
