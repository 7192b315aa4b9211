"""The flagged rows of a prepared import, put to the user in the client's dialog.

commit_import(ask_user=true) asks about each flagged row the agent left undecided, in one form:
the stored records it resembles by title ("it is this one": use_existing), the earlier row of
the same import it resembles ("the same as that row": skip), or "a different one"
(create_anyway). The answers become the rows' decisions,
each carrying what `workflow.client_confirmation` records for a resolution: which client, when,
the question and the answer, labelled user-confirmed in the client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from records.ids import is_valid_id
from workflow.action_kinds import kind_for_tool
from workflow.client_confirmation import DIFFERENT, LABEL
from workflow.imports import CLEAN, CREATE_ANYWAY, SKIP, USE_EXISTING
from workflow.models import ActionState, PreparedAction
from workflow.scope import Scope

MAX_ROWS_ASKED = 10  # one dialog; more rows than this are decided in the conversation
SAME = "same"


@dataclass(frozen=True)
class RowQuestion:
    field: str  # the form's property name for this row
    key: str  # the row's key in the import
    title: str
    choices: list[tuple[str, str]]


@dataclass(frozen=True)
class ImportQuestion:
    message: str
    rows: list[RowQuestion]


def import_question(
    scope: Scope, action_id: Any, decided: set[str]
) -> tuple[ImportQuestion | None, str]:
    """The question for the flagged rows not in `decided`, or None and why nothing is asked."""
    action = (
        PreparedAction.objects.filter(
            pk=action_id,
            workspace_id=scope.workspace_id,
            actor_id=scope.actor_id,
            operation=kind_for_tool("commit_import").name,
            state=ActionState.PREPARED,
        ).first()
        if is_valid_id(action_id)
        else None
    )
    if action is None:
        return None, "Not asked: this is not an import of yours waiting for its first commit."
    reviewed = action.arguments["reviewed"]
    by_key = {row["key"]: row for row in reviewed}
    open_rows = [r for r in reviewed if r["status"] != CLEAN and r["key"] not in decided]
    if not open_rows:
        return None, "Not asked: no flagged row is left undecided."
    if len(open_rows) > MAX_ROWS_ASKED:
        return None, (
            f"Not asked: {len(open_rows)} rows are undecided, more than one dialog holds "
            f"({MAX_ROWS_ASKED}). Decide some in decisions and ask about the rest."
        )
    rows = []
    for index, row in enumerate(open_rows):
        # Every candidate: "a different one" must mean none of all of them, nor the earlier
        # row this one resembles.
        choices = [
            (c["record_id"], f"{c['title']}{' (archived)' if c['status'] == 'archived' else ''}")
            for c in row["candidates"]
        ]
        if row["duplicate_of"] is not None:
            earlier = by_key[row["duplicate_of"]]["title"]
            choices.append((SAME, f"The same as the row “{earlier}” (skip this row)"))
        choices.append((DIFFERENT, "A different one (create it)"))
        rows.append(RowQuestion(f"row_{index + 1}", row["key"], row["title"], choices))
    message = (
        "Some rows to import look like records already stored (or like each other). For each, "
        "is it one of these, or a different one? Cancel to decide nothing now."
    )
    return ImportQuestion(message, rows), ""


def import_decisions(
    question: ImportQuestion, content: dict[str, Any], client: dict[str, str]
) -> dict[str, dict[str, Any]] | None:
    """Each asked row's decision from the submitted form, or None if any answer is not a choice."""
    at = timezone.now().isoformat()
    decisions: dict[str, dict[str, Any]] = {}
    for row in question.rows:
        choice = content.get(row.field)
        titles = dict(row.choices)
        if not isinstance(choice, str) or choice not in titles:
            return None
        confirmation = {
            "label": LABEL,
            "client": client,
            "at": at,
            "question": f"{question.message} Row: “{row.title}”.",
            "choices": list(titles.values()),
            "answer": titles[choice],
        }
        if choice == DIFFERENT:
            decision: dict[str, Any] = {"decision": CREATE_ANYWAY}
        elif choice == SAME:
            decision = {"decision": SKIP}
        else:
            decision = {"decision": USE_EXISTING, "record_id": choice}
        decisions[row.key] = {**decision, "user_confirmed_in_client": confirmation}
    return decisions
