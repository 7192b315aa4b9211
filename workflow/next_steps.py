"""The `next_step` each review, prepare and commit reply carries: what to do now, with the exact
ID to cite. Written from the reply itself, so it can never name an ID the reply lacks.

no_match is the expected answer before a create, not a reason to ask the user; a question is
asked only when identity or organisation is uncertain (seed 000).
"""

from __future__ import annotations

from typing import Any

from workflow import reply_size
from workflow.action_kinds import kind_for_tool

# Words that stand for something said earlier ("him", "that opening"): never a new title.
REFERRING_WORDS = frozenset(
    {"he", "him", "his", "she", "her", "hers", "they", "them", "their", "it", "its"}
    | {"this", "that", "these", "those", "there"}
)


def refers_back(query: str) -> bool:
    words = query.lower().strip(" .,!?'\"").split()
    if len(words) == 1:
        return words[0] in REFERRING_WORDS
    return 1 < len(words) <= 3 and words[0] in {"this", "that", "these", "those", "the same"}


def with_next_step(result: dict[str, Any], step: str) -> dict[str, Any]:
    return {**result, "next_step": step}


def after_resolution(result: dict[str, Any], *, detail: bool = False) -> dict[str, Any]:
    review = result["resolution_id"]
    status = result["status"]
    if status == "resolved":
        step = (
            f"Cite resolution_id {review} in the write for record {result['selected_record_id']}."
        )
    elif status == "no_match" and refers_back(str(result.get("query", ""))):
        step = (
            f"{result['query']!r} refers to something said earlier, not a title: resolve the "
            "name it stands for, or ask the user which record they mean. Never create a "
            "record with this title."
        )
    elif status == "no_match":
        step = (
            f"The expected answer before a create: cite resolution_id {review} in create_record "
            "with this exact title and collection_id."
        )
    elif status == "needs_clarification":
        step = (
            "Ask the user one question using the candidates' details; then resolve again with "
            f"their answer, or cite resolution_id {review} with what they said in clarification."
        )
    else:
        step = (
            "Narrow the review (a collection_id, context_record_ids or a longer name) and "
            "resolve again; an incomplete review cannot authorize a write."
        )
    return with_next_step(result if detail else reply_size.resolution(result), step)


def after_batch_resolution(result: dict[str, Any]) -> dict[str, Any]:
    items = [
        {**item, "result": after_resolution(item["result"])} if item.get("ok") else item
        for item in result["items"]
    ]
    return {**result, "items": items}


def after_discovery(result: dict[str, Any]) -> dict[str, Any]:
    review = result["discovery_id"]
    if result.get("status") == "incomplete":
        step = "The catalog was cut short: narrow the name and purpose and discover again."
    elif result.get("suggestions"):
        step = (
            "Reuse a suggested collection if its purpose fits (cite its collection_id). "
            f"Otherwise cite discovery_id {review} in prepare_write create_collection, with "
            "the user's reason in clarification."
        )
    else:
        step = (
            "Reuse a listed collection whose purpose fits, or cite discovery_id "
            f"{review} in prepare_write create_collection."
        )
    return with_next_step(result, step)


def after_prepare(result: dict[str, Any], *, tool: str) -> dict[str, Any]:
    commit = kind_for_tool(tool).commit_tool
    action = result["action_id"]
    if result.get("needs_decision"):
        flagged = result["needs_decision"]
        keys = ", ".join(flagged[:5]) + (", …" if len(flagged) > 5 else "")
        step = (
            f"Settle the flagged rows with the user ({keys}), then call {commit} with "
            f"action_id {action} and one decision per flagged key."
        )
    else:
        step = f"Call {commit} with action_id {action}."
    if result.get("requires_human_approval"):
        step += (
            " This write needs a person's approval: the commit will hold it as "
            "awaiting_approval until someone approves it in the admin. Tell the user now."
        )
    return with_next_step(reply_size.prepared(result, result.get("operation")), step)


def after_commit(result: dict[str, Any]) -> dict[str, Any]:
    status = result.get("status")
    action = result.get("action_id")
    review = result.get("review") or {}
    if status == "committed" and review.get("resolution_id"):
        step = (
            f"Done. To link or change the new record next, cite resolution_id "
            f"{review['resolution_id']} (no need to resolve it again); tell the user what was "
            "stored."
        )
    elif status == "committed" and review.get("discovery_id"):
        step = (
            f"Done. To add records to it, resolve their titles in it; to change it, cite "
            f"discovery_id {review['discovery_id']}. Tell the user what was stored."
        )
    elif status == "committed" and _rows_reviewed(result):
        step = (
            "Done. To link or change a row's record next, cite its rows[key].resolution_id "
            "(no need to resolve it again); tell the user what was stored."
        )
    elif status == "committed":
        step = "Done. Tell the user what was stored, in one sentence, stating assumptions."
    elif status == "awaiting_approval":
        step = (
            "Tell the user a person must approve this in the admin. Later, call the same "
            f"commit tool with action_id {action} to read the decision; do not prepare it again."
        )
    elif status == "rejected":
        step = "Tell the user a person rejected it, and why; do not retry it unchanged."
    else:
        step = "Read the status and message above."
    return with_next_step(reply_size.committed(result), step)


def _rows_reviewed(result: dict[str, Any]) -> bool:
    rows = (result.get("result") or {}).get("rows")
    return isinstance(rows, dict) and any("resolution_id" in row for row in rows.values())
