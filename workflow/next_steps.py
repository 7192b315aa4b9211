"""The `next_step` a review, prepare or commit reply carries when it changes what the agent does
next: which ID of the reply to cite, and where. Written from the reply itself, so it can never
point at an ID the reply lacks; it names the ID's key rather than repeating its value.

no_match is the expected answer before a create, not a reason to ask the user; a question is
asked only when identity or organisation is uncertain (the contract).
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


# A resolved answer needs none: the tool says to cite its resolution_id in the write.
AFTER_RESOLUTION = {
    "no_match": "The expected answer before a create: cite this resolution_id in create_record "
    "with this exact title and collection_id.",
    "needs_clarification": "Ask the user one question from the candidates' details that differ "
    "(collection, data, links); cite this resolution_id with the answer in clarification, or "
    "resolve again.",
    "incomplete": "Narrow the review (a collection_id, context_record_ids or a longer name) and "
    "resolve again; an incomplete review cannot authorize a write.",
}


def after_resolution(result: dict[str, Any], *, detail: bool = False) -> dict[str, Any]:
    step = AFTER_RESOLUTION.get(result["status"])
    if result["status"] == "no_match" and refers_back(str(result.get("query", ""))):
        step = (
            f"{result['query']!r} refers to something said earlier, not a title: resolve the "
            "name it stands for, or ask the user which record they mean. Never create a "
            "record with this title."
        )
    lean = result if detail else reply_size.resolution(result)
    return {**lean, "next_step": step} if step else lean


def after_batch_resolution(result: dict[str, Any]) -> dict[str, Any]:
    """Each item as resolve_record answers it, less a next_step an earlier item gave."""
    said: set[str] = set()
    items = []
    for item in result["items"]:
        if "result" in item:
            answer = after_resolution(item["result"])
            if answer.get("next_step") in said:
                answer = {k: v for k, v in answer.items() if k != "next_step"}
            said.add(answer.get("next_step", ""))
            item = {**item, "result": answer}
        items.append(item)
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
    return {**result, "next_step": step}


def after_prepare(
    result: dict[str, Any], *, tool: str, sent: dict[str, Any] | None = None
) -> dict[str, Any]:
    """`sent`: the tool's arguments, which the preview need not repeat. A plain prepare needs
    no next step: each prepare tool says which commit follows it."""
    step = ""
    if flagged := result.get("needs_decision"):
        keys = ", ".join(flagged[:5]) + (", …" if len(flagged) > 5 else "")
        step = (
            f"Settle the flagged rows with the user ({keys}), then call "
            f"{kind_for_tool(tool).commit_tool} with this action_id and one decision per "
            "flagged key. "
        )
    if result.get("requires_human_approval"):
        step += (
            "This write needs a person's approval: the commit will hold it as awaiting_approval "
            "until someone approves it in the admin. Tell the user now."
        )
    lean = reply_size.prepared(result, result.get("operation"), sent)
    return {**lean, "next_step": step.strip()} if step else lean


def after_commit(result: dict[str, Any]) -> dict[str, Any]:
    """A plain commit needs no next step: the agent tells the user what it stored. A held or
    rejected one neither: its message says what to tell the user and what not to do."""
    review = result.get("review") or {}  # only a committed write has a review, or rows
    rows = (result.get("result") or {}).get("rows")
    step = ""
    if review.get("resolution_id"):
        step = "To link or change the new record next, cite review.resolution_id (no new resolve)."
    elif review.get("discovery_id"):
        step = "To add records, resolve their titles in it; to change it, cite review.discovery_id."
    elif isinstance(rows, dict) and any("resolution_id" in row for row in rows.values()):
        step = "To link or change a row's record next, cite its rows[key].resolution_id."
    lean = reply_size.committed(result)
    return {**lean, "next_step": step} if step else lean
