"""Ask the user in the client's own dialog (MCP elicitation, form mode), on `ask_user: true` only.

A `needs_clarification` from resolve_record (or a batch_resolve_records item) becomes a one-field
form (`workflow.client_confirmation`: choices told apart, or none asked); an accepted answer is
stored as user-confirmed in the client, a decline or cancel stores nothing. commit_import asks
about the flagged rows left undecided, one field per row (`workflow.import_confirmation`). Where
no question can be put (no form-mode capability; over HTTP, where no request can go back to the
client) the plain reply stands and `client_question` says why. The dialog waits on the event
loop between two short database steps: no transaction or worker is held while it is open.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from mcp.shared.exceptions import McpError

from records.errors import NEEDS_CLARIFICATION, AnchorError
from workflow import actions as write_actions
from workflow import client_confirmation
from workflow.client_confirmation import CANCEL
from workflow.import_confirmation import import_decisions, import_question
from workflow.mcp import sdk
from workflow.mcp.bounded_calls import run_bounded
from workflow.mcp.envelope import refused, run_tool
from workflow.next_steps import after_commit
from workflow.scope import scope_for_request

logger = logging.getLogger("anchor.elicitation")

OVER_HTTP = (
    "Not asked in the client: over HTTP this server answers each request on its own and "
    "cannot send the client a question. Ask the user in the conversation."
)
NO_CAPABILITY = (
    "Not asked in the client: it did not declare the elicitation capability (form mode) at "
    "initialize. Ask the user in the conversation."
)
NOTHING_TO_ASK = "Not asked: the status is {status}, which leaves no question for the user."


def _next_step(confirmation: dict[str, Any], resolution_id: str) -> str:
    if confirmation["different"]:
        return (
            f"The user said in the client it is none of the candidates. To create it, cite "
            f"resolution_id {resolution_id} in prepare_write create_record (no clarification "
            "needed); if they may mean another stored record, resolve that name."
        )
    return (
        f"The user chose {confirmation['answer']} in the client. Cite resolution_id "
        f"{resolution_id} in prepare_write for record {confirmation['record_id']}; no "
        "clarification needed."
    )


def _form(fields: dict[str, tuple[str, list[tuple[str, str]]]]) -> dict[str, Any]:
    """The requested schema: each field a required, titled single-select (the 2025-11-25 enum
    shape), given as field: (title, [(value, label)])."""
    return {
        "type": "object",
        "properties": {
            field: {
                "type": "string",
                "title": title,
                "oneOf": [{"const": value, "title": label} for value, label in choices],
            }
            for field, (title, choices) in fields.items()
        },
        "required": list(fields),
    }


async def _on_worker(call: Callable[[], Any]) -> dict[str, Any]:
    """A database step on the worker thread, in the envelope (the dialog waits between)."""
    return dict(await run_bounded(lambda: run_tool(call)))


async def _elicit(
    context: Any, message: str, schema: dict[str, Any]
) -> tuple[str, dict[str, Any]] | dict[str, Any]:
    """The user's action and content, or the client_question saying the client did not answer."""
    try:
        return await sdk.elicit_form(context, message, schema)
    except McpError as exc:
        logger.info("the client did not answer the elicitation: %s", exc.error.message)
        return {
            "asked": False,
            "reason": f"The client did not answer the question ({exc.error.message[:200]}). "
            "Ask the user in the conversation.",
        }


def _why_not(context: Any) -> str:
    """Why this call cannot put a question to the user through its client ("" if it can)."""
    if sdk.call_came_over_http():
        return OVER_HTTP
    return "" if sdk.client_declares_form_elicitation(context) else NO_CAPABILITY


async def ask_about_resolution(envelope: dict[str, Any]) -> dict[str, Any]:
    """resolve_record's envelope, with the user's answer from the client when one was given."""
    if not envelope.get("ok"):
        return envelope
    return {**envelope, "result": await _asked(envelope["result"])}


async def ask_about_batch(envelope: dict[str, Any], asked: set[int]) -> dict[str, Any]:
    """batch_resolve_records' envelope, each item that set ask_user asked as resolve_record's
    would be, one question after another."""
    if not envelope.get("ok") or not asked:
        return envelope
    items = [
        {**item, "result": await _asked(item["result"])}
        if "result" in item and index in asked
        else item
        for index, item in enumerate(envelope["result"]["items"])
    ]
    return {**envelope, "result": {**envelope["result"], "items": items}}


async def _asked(result: dict[str, Any]) -> dict[str, Any]:
    asked = await _ask(result)
    result = {**result, "client_question": asked}
    confirmation = asked.get("confirmation")
    if confirmation is not None:
        result["next_step"] = _next_step(confirmation, result["resolution_id"])
    elif asked["asked"]:
        result["next_step"] = (
            "The user cancelled the question in the client: write nothing that depends on it. "
            "Ask in the conversation if the task still needs an answer."
        )
    return result


async def _ask(result: dict[str, Any]) -> dict[str, Any]:
    if result.get("status") != "needs_clarification":
        return {"asked": False, "reason": NOTHING_TO_ASK.format(status=result.get("status"))}
    context = sdk.request_context()
    why_not = _why_not(context)
    if why_not:
        return {"asked": False, "reason": why_not}
    scope = scope_for_request(SimpleNamespace())  # stdio: the configured scope
    resolution_id = result["resolution_id"]
    built = await _on_worker(lambda: client_confirmation.resolution_question(scope, resolution_id))
    question = built.get("result")
    if not built["ok"]:
        return {"asked": False, "reason": built["error"]["message"]}
    if question is None:
        return {
            "asked": False,
            "reason": 'Not asked: the resolution has no candidates to choose from ("me" '
            "with no self mapping). Ask the user in the conversation.",
        }
    answered = await _elicit(
        context, question.message, _form({"choice": ("Your answer", question.choices)})
    )
    if isinstance(answered, dict):
        return answered
    action, content = answered
    choice = content.get("choice")
    if action != "accept" or choice == CANCEL:
        return {"asked": True, "answer": "cancelled", "stored": False}
    if not isinstance(choice, str) or choice not in dict(question.choices):
        return {
            "asked": True,
            "answer": "not one of the choices",
            "stored": False,
            "reason": "The client returned an answer that was not one of the choices; nothing "
            "was stored. Ask the user in the conversation.",
        }
    client = sdk.client_identity(context)
    stored = await _on_worker(
        lambda: client_confirmation.confirm_resolution(
            scope, question, choice=choice, client=client
        )
    )
    if not stored["ok"]:
        return {"asked": True, "stored": False, "reason": stored["error"]["message"]}
    confirmation = stored["result"]
    answer = confirmation["answer"]
    return {"asked": True, "answer": answer, "stored": True, "confirmation": confirmation}


# --- commit_import -------------------------------------------------------------------------------


def _with_question(envelope: dict[str, Any], asked: dict[str, Any]) -> dict[str, Any]:
    """The envelope with `client_question` in its result, or in its error's details."""
    if envelope.get("ok"):
        return {**envelope, "result": {**envelope["result"], "client_question": asked}}
    error = envelope["error"]
    details = {**error.get("details", {}), "client_question": asked}
    return {**envelope, "error": {**error, "details": details}}


async def commit_import_asking(kwargs: dict[str, Any]) -> dict[str, Any]:
    """commit_import, with the undecided flagged rows first put to the user in the client."""
    scope = scope_for_request(SimpleNamespace())  # stdio: the configured scope
    agent_decisions = kwargs.get("decisions") or {}

    async def commit(confirmed: dict[str, dict[str, Any]] | None) -> dict[str, Any]:
        return await _on_worker(
            lambda: after_commit(
                write_actions.commit_import(
                    scope,
                    action_id=kwargs["action_id"],
                    decisions=kwargs.get("decisions"),
                    confirmed=confirmed,
                )
            )
        )

    context = sdk.request_context()
    why_not = _why_not(context)
    if why_not:
        return _with_question(await commit(None), {"asked": False, "reason": why_not})
    built = await _on_worker(
        lambda: import_question(scope, kwargs["action_id"], set(agent_decisions))
    )
    if not built["ok"]:
        return dict(built)
    question, reason = built["result"]
    if question is None:
        return _with_question(await commit(None), {"asked": False, "reason": reason})
    schema = _form({row.field: (row.title, row.choices) for row in question.rows})
    answered = await _elicit(context, question.message, schema)
    if isinstance(answered, dict):
        return _with_question(await commit(None), answered)
    action, content = answered
    confirmed = (
        import_decisions(question, content, sdk.client_identity(context))
        if action == "accept"
        else None
    )
    if confirmed is None:
        message = (
            "The user cancelled the question in the client (or answered outside its choices); "
            "nothing was committed and the import is still prepared. Ask in the conversation, "
            "then commit_import with decisions."
        )
        asked = {"asked": True, "answer": "cancelled", "stored": False}
        return dict(refused(AnchorError(NEEDS_CLARIFICATION, message, client_question=asked)))
    committed = await commit(confirmed)
    # The answers are stored with the commit's decisions, so only if the commit went through.
    asked = {"asked": True, "stored": bool(committed.get("ok")), "rows": confirmed}
    return _with_question(committed, asked)
