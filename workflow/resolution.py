"""resolve_record: which stored record does a name mean? Never a silent guess.

Statuses: resolved (one active exact title/alias/ID match, selected), needs_clarification
(several exact matches, an archived exact match, only similar names, or "me" with no mapping),
no_match, incomplete (too many matches or too large a scope to scan). Similar names are
suggestions and are never selected.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, TypedDict

from django.db.models import Q

from records import validation as v
from records.counters import counter_values, links_key, names_key
from records.errors import AnchorError, invalid, not_found
from records.ids import is_valid_id
from records.models import Collection, Record, Relationship, SelfMapping
from records.names import normalize_name
from records.selectors import in_workspace, values_by_id
from records.validation import canonical_json
from workflow.models import ReviewTicket
from workflow.names.cache import scope_names
from workflow.names.match import NameMatch, match_names
from workflow.scope import Scope
from workflow.tickets import issue_ticket, issue_tickets, new_ticket

RESOLVED = "resolved"
NEEDS_CLARIFICATION = "needs_clarification"
NO_MATCH = "no_match"
INCOMPLETE = "incomplete"

MAX_CANDIDATES = 20
MAX_CONTEXT_RECORDS = 10
LINKS_PER_CANDIDATE = 5
PREVIEW_CHARS = 200
SELF_WORDS = {"me", "myself", "i"}


@dataclass(frozen=True)
class _Request:
    """A resolution request, checked."""

    query_text: str
    collection_id: str | None
    context: list[str]


def _parse(scope: Scope, query: Any, collection_id: Any, context_record_ids: Any) -> _Request:
    query_text = v.text("query", query, max_length=v.MAX_TITLE)
    if collection_id is not None:
        collection_id = v.entity_id(collection_id, "collection_id")
        in_workspace(
            Collection.objects.only("pk"),
            workspace_id=scope.workspace_id,
            pk=collection_id,
            kind="collection",
        )
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
        found = {
            row["id"]
            for row in values_by_id(
                Record.objects, workspace_id=scope.workspace_id, ids=context, fields=["id"]
            )
        }
        for record_id in context:
            if record_id not in found:
                raise not_found(
                    "record", record_id, f"context_record_ids[{context.index(record_id)}]"
                )
    return _Request(query_text, collection_id, context)


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
    # Plain columns rather than model instances: a hub's links are many rows, and building
    # two records and two collections per row cost more than the query.
    rows = (
        Relationship.objects.filter(Q(source_id__in=record_ids) | Q(target_id__in=record_ids))
        .order_by("created_at", "id")
        .values_list("relationship_type", *END_COLUMNS["source"], *END_COLUMNS["target"])
    )
    wanted = set(record_ids)
    width = len(END_COLUMNS["source"])
    for relationship_type, *ends in rows:
        source, target = ends[:width], ends[width:]
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


# What a link summary shows of each end: (id, title, collection name, archived_at).
END_COLUMNS = {
    end: (f"{end}_id", f"{end}__title", f"{end}__collection__name", f"{end}__archived_at")
    for end in ("source", "target")
}


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
    # Counters whose value the answer was computed at (the names list's revision): a ticket
    # records that value, so a name written since the list was read moves it.
    known_counters: dict[str, int] = field(default_factory=dict)

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


@dataclass(frozen=True)
class _Search:
    """What matching found for one request, before its candidates' records are loaded."""

    ranked: list[tuple[str, _Found]]
    names_scope: str | None  # the collection whose names counter the answer depends on
    incomplete_reason: str
    self_message: str
    names_revision: int | None = None  # the revision of the names list matched, if one was

    @property
    def record_ids(self) -> list[str]:
        return [record_id for record_id, _ in self.ranked]


def _search(
    scope: Scope,
    *,
    query_text: str,
    collection_id: str | None,
    context: list[str],
    id_collections: dict[str, str] | None = None,
) -> _Search:
    """`id_collections` (record ID -> collection ID, for this workspace) lets a batch look up
    every ID-shaped query in one query; without it the ID is looked up here."""
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
        if id_collections is None:
            id_collections = _collections_of(scope, [query_text])
        found_collection = id_collections.get(query_text)
        if collection_id and found_collection != collection_id:
            found_collection = None
        if found_collection is not None:
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
    return _Search(
        ranked[:MAX_CANDIDATES], names_scope, incomplete_reason, self_message, names_revision
    )


def _collections_of(scope: Scope, record_ids: list[str]) -> dict[str, str]:
    """The collection of each of these records that exists in the workspace."""
    return {
        row["id"]: row["collection_id"]
        for row in values_by_id(
            Record.objects,
            workspace_id=scope.workspace_id,
            ids=record_ids,
            fields=["id", "collection_id"],
        )
    }


def _records(record_ids: list[str]) -> dict[str, Record]:
    if not record_ids:
        return {}
    return {r.pk: r for r in Record.objects.filter(pk__in=record_ids).select_related("collection")}


def evaluate_resolution(
    scope: Scope, *, query_text: str, collection_id: str | None, context: list[str]
) -> Resolution:
    """The answer to a parsed request as of now, without issuing a ticket.

    resolve_record and the commit-time re-evaluation of a review both call this, so a review is
    re-checked with exactly the query and rules that produced it.
    """
    search = _search(scope, query_text=query_text, collection_id=collection_id, context=context)
    ids = search.record_ids
    return _answer(search, collection_id, context, _records(ids), _link_summaries(ids))


def _answer(
    search: _Search,
    collection_id: str | None,
    context: list[str],
    records: dict[str, Record],
    links: dict[str, list[dict[str, Any]]],
) -> Resolution:
    """The resolution from a search and its candidates' records and links (loaded by the
    caller, once for a whole batch)."""
    ranked = search.ranked
    incomplete_reason = search.incomplete_reason
    self_message = search.self_message
    if collection_id:  # an ID or self mapping outside the requested collection does not count
        ranked = [(rid, e) for rid, e in ranked if records[rid].collection_id == collection_id]

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
            "No record in this scope has this name. When the user is telling you about "
            "something new, create it. Ask first only when they refer to something they expect "
            "to exist (it may be stored under another name or in another collection)."
        )

    counter_keys = [
        names_key(search.names_scope),
        *(links_key(c["record_id"]) for c in candidates),
    ]
    counter_keys += [links_key(record_id) for record_id in context]
    known = (
        {names_key(search.names_scope): search.names_revision}
        if search.names_revision is not None
        else {}
    )
    return Resolution(status, selected, message, candidates, counter_keys, known)


def resolve_record(
    scope: Scope,
    *,
    query: Any,
    collection_id: Any = None,
    context_record_ids: Any = None,
) -> dict[str, Any]:
    request = _parse(scope, query, collection_id, context_record_ids)
    resolution = evaluate_resolution(
        scope,
        query_text=request.query_text,
        collection_id=request.collection_id,
        context=request.context,
    )
    ticket = issue_ticket(
        scope,
        kind=ReviewTicket.RESOLUTION,
        request=_ticket_request(request),
        answer=resolution.answer,
        counter_keys=resolution.counter_keys,
        known=resolution.known_counters,
        # _parse has just read the collection, so its workspace exists.
        workspace_exists=request.collection_id is not None,
    )
    return _reply(ticket, request, resolution)


MAX_BATCH = 10


def batch_resolve(scope: Scope, *, requests: Any) -> dict[str, Any]:
    """Several resolutions; one item's bad input is reported in place, the others still run.

    Each item is answered exactly as resolve_record would answer it; what the items share is
    read once: the records behind ID queries, the candidates' records and links, the counters,
    and the tickets are written in one INSERT.
    """
    if not isinstance(requests, list) or not 1 <= len(requests) <= MAX_BATCH:
        raise invalid("requests", f"must be a list of 1-{MAX_BATCH} resolution requests.")
    parsed: dict[int, _Request] = {}
    errors: dict[int, AnchorError] = {}
    allowed = {"query", "collection_id", "context_record_ids"}
    for index, request in enumerate(requests):
        try:
            if not isinstance(request, dict) or "query" not in request or set(request) - allowed:
                raise invalid(
                    f"requests[{index}]",
                    f"must be an object with keys {sorted(allowed)} (query required).",
                )
            parsed[index] = _parse(
                scope,
                request["query"],
                request.get("collection_id"),
                request.get("context_record_ids"),
            )
        except AnchorError as exc:
            errors[index] = exc
    replies = _resolve_many(scope, parsed)
    answered = {i: {"ok": True, "result": reply} for i, reply in replies.items()}
    answered |= {i: {"ok": False, "error": error.as_dict()} for i, error in errors.items()}
    return {"items": [{"item_index": i, **answered[i]} for i in range(len(requests))]}


def _resolve_many(scope: Scope, parsed: dict[int, _Request]) -> dict[int, dict[str, Any]]:
    """Each parsed request answered as resolve_record would answer it, sharing what they read:
    the records behind ID queries, the candidates' records and links, the counters; the
    tickets are written in one INSERT."""
    # ID queries name their records: load those once, for the lookup and as candidates.
    id_queries = [r.query_text for r in parsed.values() if is_valid_id(r.query_text)]
    records = {
        pk: record
        for pk, record in _records(id_queries).items()
        if record.workspace_id == scope.workspace_id
    }
    id_collections = {pk: record.collection_id for pk, record in records.items()}
    searches = {
        index: _search(
            scope,
            query_text=r.query_text,
            collection_id=r.collection_id,
            context=r.context,
            id_collections=id_collections,
        )
        for index, r in parsed.items()
    }
    candidate_ids = list(dict.fromkeys(rid for s in searches.values() for rid in s.record_ids))
    records |= _records([rid for rid in candidate_ids if rid not in records])
    links = _link_summaries(candidate_ids)
    resolutions = {
        index: _answer(search, parsed[index].collection_id, parsed[index].context, records, links)
        for index, search in searches.items()
    }
    counters = counter_values(
        scope.workspace_id, [key for r in resolutions.values() for key in r.counter_keys]
    )
    tickets = issue_tickets(
        scope,
        [
            new_ticket(
                scope,
                kind=ReviewTicket.RESOLUTION,
                request=_ticket_request(parsed[index]),
                answer=resolution.answer,
                counters={key: counters[key] for key in sorted(set(resolution.counter_keys))},
            )
            for index, resolution in resolutions.items()
        ],
        # A record of the workspace was just read (an ID query's), so the workspace exists.
        workspace_exists=bool(records),
    )
    return {
        index: _reply(ticket, parsed[index], resolutions[index])
        for index, ticket in zip(resolutions, tickets, strict=True)
    }


def resolve_written(scope: Scope, record_id: str, collection_id: str) -> dict[str, Any]:
    """resolve_record by ID of a record just written, in its collection: the same answer,
    reading what a batch item reads (the record once, no separate check of the collection,
    which the record's own row vouches for)."""
    return _resolve_many(scope, {0: _Request(record_id, collection_id, [])})[0]


def resolve_by_ids(scope: Scope, record_ids: list[str]) -> dict[str, str]:
    """A resolution by ID of each record (just written): record ID -> resolution_id, so the
    next write (a link) cites it without resolving again. One INSERT for all of them."""
    parsed = {index: _Request(record_id, None, []) for index, record_id in enumerate(record_ids)}
    replies = _resolve_many(scope, parsed)
    return {parsed[i].query_text: reply["resolution_id"] for i, reply in replies.items()}


def _ticket_request(request: _Request) -> dict[str, Any]:
    """What a resolution ticket keeps of its request: enough to ask it again at commit."""
    return {
        "query": request.query_text,
        "normalized_query": normalize_name(request.query_text),
        "collection_id": request.collection_id,
        "context_record_ids": request.context,
    }


def _reply(ticket: ReviewTicket, request: _Request, resolution: Resolution) -> dict[str, Any]:
    return {
        "resolution_id": ticket.pk,
        "status": resolution.status,
        "selected_record_id": resolution.selected_record_id,
        "message": resolution.message,
        "query": request.query_text,
        "collection_id": request.collection_id,
        "context_record_ids": request.context,
        "candidates": resolution.candidates,
        "expires_at": ticket.expires_at.isoformat(),
    }
