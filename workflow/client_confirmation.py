"""A clarification the user gave in the client's own dialog, kept on the review it settles.

The question a `needs_clarification` resolution leaves (each candidate told apart, "a different
one", "cancel"), and the client's answer, stored with who the client said it is and when. It came
from the client, not the model, so it is kept apart from agent-reported `clarification` text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from records.errors import INVALID_INPUT, NEEDS_CLARIFICATION, AnchorError
from records.models import Collection, Record
from records.selectors import in_workspace
from workflow.models import ReviewTicket
from workflow.resolution import link_summaries
from workflow.scope import Scope

LABEL = "user-confirmed in the client"
# The two answers that are not a candidate's record ID.
DIFFERENT = "different"
CANCEL = "cancel"


@dataclass(frozen=True)
class Question:
    resolution_id: str
    message: str
    choices: list[tuple[str, str]]


def resolution_question(scope: Scope, resolution_id: str) -> Question | None:
    """The question a `needs_clarification` resolution leaves, or None (no candidates)."""
    ticket = _own_resolution(scope, resolution_id)
    # Every candidate, never a cut: "a different one" must mean none of all of them.
    candidates = ticket.answer.get("candidates", [])
    if ticket.answer.get("status") != "needs_clarification" or not candidates:
        return None  # nothing to pick from ("me" with no self mapping, say)
    wanted = Collection.objects.filter(
        workspace_id=scope.workspace_id, pk__in={c["collection_id"] for c in candidates}
    )
    names = dict(wanted.values_list("pk", "name"))
    # What tells them apart is read as the records are now (a stored answer keeps no data).
    candidates = _with_data_and_links(scope, candidates)
    differ = _differing(candidates)
    shared = frozenset.intersection(*(frozenset(c["links"]) for c in candidates))
    choices = [(c["record_id"], _choice_title(c, names, differ, shared)) for c in candidates]
    if len({title for _, title in choices}) < len(choices):
        # Two choices the user cannot tell apart: a pick would be a guess stored as confirmed.
        raise AnchorError(
            NEEDS_CLARIFICATION,
            "Not asked in the client: two candidates read the same there (same collection, "
            "data and links). Tell them apart with the user in the conversation.",
        )
    choices += [
        (DIFFERENT, "A different one (none of these)"),
        (CANCEL, "Cancel: do not decide now"),
    ]
    message = f"Which one do you mean by “{ticket.request.get('query', '')}”?"
    return Question(resolution_id=ticket.pk, message=message, choices=choices)


def _with_data_and_links(scope: Scope, candidates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ids = [c["record_id"] for c in candidates]
    records = Record.objects.filter(workspace_id=scope.workspace_id, pk__in=ids)
    data = dict(records.values_list("pk", "data"))
    links = link_summaries(ids)
    return [
        {
            **c,
            "data": data.get(c["record_id"], {}),
            "links": sorted({link["title"] for link in links[c["record_id"]]}),
        }
        for c in candidates
    ]


def _differing(candidates: list[dict[str, Any]]) -> set[str]:
    """The data keys whose values are not the same on every candidate."""
    keys = {k for c in candidates for k in c["data"]}
    return {k for k in keys if len({repr(c["data"].get(k)) for c in candidates}) > 1}


def _choice_title(
    candidate: dict[str, Any],
    collection_names: dict[str, str],
    differ: set[str],
    shared: frozenset[str],
) -> str:
    where = collection_names.get(candidate["collection_id"], "")
    notes = [where] if where else []
    data = candidate["data"]
    notes += [f"{k}: {str(data[k])[:40]}" for k in sorted(differ) if k in data][:3]
    notes += [f"linked to {t[:40]}" for t in sorted(set(candidate["links"]) - shared)][:2]
    if candidate.get("status") == "archived":
        notes.append("archived")
    return f"{candidate['title']} ({', '.join(notes)})" if notes else str(candidate["title"])


def confirm_resolution(
    scope: Scope, question: Question, *, choice: str, client: dict[str, str]
) -> dict[str, Any]:
    """Store the user's choice (not cancel) on the resolution, once and by its own actor only
    (a second answer would leave two truths in the audit); the stored confirmation."""
    titles = dict(question.choices)
    if choice == CANCEL or choice not in titles:
        raise AnchorError(INVALID_INPUT, f"The client answered {choice!r}, not one of the choices.")
    ticket = _own_resolution(scope, question.resolution_id)
    confirmation = {
        "label": LABEL,
        "client": client,
        "at": timezone.now().isoformat(),
        "question": question.message,
        "choices": [title for _, title in question.choices],
        "answer": titles[choice],
        "record_id": None if choice == DIFFERENT else choice,
        "different": choice == DIFFERENT,
    }
    stored = ReviewTicket.objects.filter(pk=ticket.pk, client_confirmation__isnull=True).update(
        client_confirmation=confirmation
    )
    if stored != 1:
        raise AnchorError(
            INVALID_INPUT,
            f"Resolution {ticket.pk} already has the user's answer from the client; resolve "
            "again to ask a new question.",
            field="resolution_id",
        )
    return confirmation


def _own_resolution(scope: Scope, resolution_id: str) -> ReviewTicket:
    mine = ReviewTicket.objects.filter(actor_id=scope.actor_id, kind=ReviewTicket.RESOLUTION)
    return in_workspace(mine, workspace_id=scope.workspace_id, pk=resolution_id, kind="resolution")
