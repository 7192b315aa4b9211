"""discover_collections: the whole catalog plus lexical hints, before organising anything.

The server supplies lexical evidence (similar names, shared purpose words); deciding whether two
collections mean the same thing is the agent's job, so the full catalog is always returned.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from records import validation as v
from records.counters import CATALOG, counter_values
from records.models import Record
from records.names import normalize_name
from records.selectors.catalog import collection_list
from records.validation import canonical_json
from workflow.models import ReviewTicket
from workflow.names.rule import ratio as similarity
from workflow.scope import Scope
from workflow.tickets import issue_tickets

MAX_CATALOG = 200
SAMPLES_PER_COLLECTION = 3
NAME_SIMILARITY = 0.6
MIN_SHARED_PURPOSE_WORDS = 2
# Words too common to say anything about overlap between two purposes.
STOPWORDS = frozenset(
    (  # noqa: SIM905 - read as words, not a column of strings
        "a an and are as at be by for from has have in into is it its of on one or our that the "
        "their them these this to track tracking we what when where which who with record "
        "records store keep list each per about any all"
    ).split()
)
WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    # Crude plural folding so "expenses" meets "expense"; lexical evidence only.
    return {
        word[:-1] if word.endswith("s") and len(word) > 3 else word
        for word in WORD.findall(normalize_name(text))
        if word not in STOPWORDS and len(word) >= 3
    }


def _suggestion(
    collection: dict[str, Any], name: str, purpose_words: set[str]
) -> dict[str, Any] | None:
    """A catalog entry the proposed collection may overlap, and the lexical evidence why."""
    normalized = normalize_name(name)
    reasons: list[str] = []
    score = 0.0
    names = [(collection["name"], "name"), *((a, "alias") for a in collection["aliases"])]
    for candidate, kind in names:
        candidate_normalized = normalize_name(candidate)
        if candidate_normalized == normalized:
            reasons.append(f"exact {kind} match: {candidate!r}")
            score = 1.0
            continue
        ratio = similarity(normalized, candidate_normalized)
        singular = _words(normalized) & _words(candidate_normalized)
        if ratio >= NAME_SIMILARITY:
            reasons.append(f"similar {kind} {candidate!r} (score {ratio:.2f})")
            score = max(score, ratio)
        elif singular:
            reasons.append(f"{kind} {candidate!r} shares the word(s) {sorted(singular)}")
            score = max(score, 0.5)
    described = " ".join(
        [collection["purpose"], collection["record_meaning"], *collection["typical_fields"]]
    )
    shared = purpose_words & _words(described)
    # One shared word ("team", "project") says little about two purposes; two begin to.
    if len(shared) >= MIN_SHARED_PURPOSE_WORDS:
        reasons.append(f"purpose shares the word(s) {sorted(shared)}")
        score = max(score, min(0.9, 0.3 + 0.1 * len(shared)))
    if not reasons:
        return None
    return {
        "collection_id": collection["collection_id"],
        "name": collection["name"],
        "score": round(score, 3),
        "exact": score == 1.0,
        "reasons": reasons,
    }


def catalog(workspace_id: str) -> tuple[list[dict[str, Any]], bool]:
    """Up to MAX_CATALOG collections as list_collections lists them, with sample records."""
    listed = collection_list(workspace_id=workspace_id)["collections"]
    entries = listed[:MAX_CATALOG]
    # One small query per collection, bounded by MAX_CATALOG and served by the record_page index.
    for entry in entries:
        active = Record.objects.filter(
            collection_id=entry["collection_id"], archived_at__isnull=True
        ).order_by("created_at", "id")
        entry["sample_records"] = [
            {"record_id": record_id, "title": title}
            for record_id, title in active.values_list("id", "title")[:SAMPLES_PER_COLLECTION]
        ]
    return entries, len(listed) > MAX_CATALOG


def _fingerprint(entry: dict[str, Any]) -> str:
    """What a reader of the catalog decided on: a collection's name and what it is for."""
    said = canonical_json({k: entry[k] for k in ("name", "purpose", "record_meaning")})
    return hashlib.sha256(said.encode()).hexdigest()[:16]


# What a discovery tells the agent, by what it found ({name}: the exact match's name).
MESSAGES = {
    "truncated": f"The workspace has more than {MAX_CATALOG} collections and only the first "
    f"{MAX_CATALOG} are shown, so this review is incomplete and cannot authorize creating a "
    "collection.",
    "exact": "A collection named {name!r} already exists: reuse it. Creating the same name again "
    "returns it unchanged.",
    "related": "Some collections look related. Read their purposes: reuse one if it fits; "
    "creating a new one needs a clarification saying how it differs.",
    "none": "No lexical overlap found, but meaning can overlap without shared words: read every "
    "catalog entry before creating a new collection.",
}


def _kept(reply: dict[str, Any]) -> dict[str, Any]:
    """What a ticket keeps of a discovery, and what a re-evaluation is compared on."""
    entries = reply["catalog"]
    return {
        "status": reply["status"],
        "suggestions": reply["suggestions"],
        "catalog_ids": [e["collection_id"] for e in entries],
        "catalog_fingerprints": {e["collection_id"]: _fingerprint(e) for e in entries},
    }


def evaluate_discovery(workspace_id: str, *, name_text: str, purpose_text: str) -> dict[str, Any]:
    """What a ticket of this request would keep, as of now."""
    return _kept(_discover(workspace_id, name_text, purpose_text))


def _discover(workspace_id: str, name_text: str, purpose_text: str) -> dict[str, Any]:
    """The reply to a validated request as of now, without its ticket; discover_collections and
    the commit-time re-evaluation of a discovery both come here, so both use the same rules."""
    entries, truncated = catalog(workspace_id)
    purpose_words = _words(purpose_text) | _words(name_text)
    suggestions = [
        s for s in (_suggestion(entry, name_text, purpose_words) for entry in entries) if s
    ]
    suggestions.sort(key=lambda s: (-s["score"], s["name"]))
    exact = next((s for s in suggestions if s["exact"]), None)
    found = "truncated" if truncated else "exact" if exact else "related" if suggestions else "none"
    message = MESSAGES[found].format(name=exact["name"] if exact else "")
    return {
        "status": "incomplete" if truncated else "complete",
        "message": message,
        "suggestions": suggestions,
        "catalog": entries,
        "catalog_truncated": truncated,
    }


def discover_collections(scope: Scope, *, name: Any, purpose: Any) -> dict[str, Any]:
    name_text = v.name(name)
    purpose_text = v.description(purpose, "purpose")
    reply = _discover(scope.workspace_id, name_text, purpose_text)
    request = {
        "name": name_text,
        "normalized_name": normalize_name(name_text),
        "purpose": purpose_text,
    }
    counters = counter_values(scope.workspace_id, [CATALOG])
    [ticket] = issue_tickets(scope, ReviewTicket.DISCOVERY, [(request, _kept(reply), counters)])
    return {"discovery_id": ticket.pk, **reply, "expires_at": ticket.expires_at.isoformat()}
