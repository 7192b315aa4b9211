"""Ask the user in the client's own dialog (MCP elicitation, form mode), when the agent asks for it.

Only on the agent's explicit `ask_user: true`, never silently. After resolve_record answers
`needs_clarification`, the question goes to the client as a one-field form: the candidates by
title, "a different one", "cancel". An accepted answer is stored on the resolution as
user-confirmed in the client (`workflow.client_confirmation`); decline, cancel or the cancel
choice store nothing. When the question cannot be put (the client did not declare form-mode
elicitation, or the call came over HTTP, where this server answers each POST on its own and
cannot send the client a request), the plain reply stands and `client_question` says why.

The wait for the user happens here, on the event loop, between two short database steps on the
worker thread: no transaction and no worker is held while the dialog is open.
"""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

from mcp.shared.exceptions import McpError

from workflow import client_confirmation
from workflow.client_confirmation import CANCEL, Question
from workflow.mcp import sdk
from workflow.mcp.envelope import run_tool
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


def _form(question: Question) -> dict[str, Any]:
    """The requested schema: one required single-select, each choice titled (2025-11-25)."""
    return {
        "type": "object",
        "properties": {
            "choice": {
                "type": "string",
                "title": "Your answer",
                "oneOf": [{"const": value, "title": title} for value, title in question.choices],
            }
        },
        "required": ["choice"],
    }


async def ask_about_resolution(envelope: dict[str, Any]) -> dict[str, Any]:
    """resolve_record's envelope, with the user's answer from the client when one was given."""
    if not envelope.get("ok"):
        return envelope
    result = dict(envelope["result"])
    asked = await _ask(result)
    result["client_question"] = asked
    confirmation = asked.get("confirmation")
    if confirmation is not None:
        result["next_step"] = _next_step(confirmation, result["resolution_id"])
    elif asked["asked"]:
        result["next_step"] = (
            "The user cancelled the question in the client: write nothing that depends on it. "
            "Ask in the conversation if the task still needs an answer."
        )
    return {**envelope, "result": result}


async def _ask(result: dict[str, Any]) -> dict[str, Any]:
    from workflow.mcp.calls import run_bounded  # calls imports this module

    if result.get("status") != "needs_clarification":
        return {"asked": False, "reason": NOTHING_TO_ASK.format(status=result.get("status"))}
    request = sdk.REQUEST_CONTEXT.get(None)
    if request is not None:
        return {"asked": False, "reason": OVER_HTTP}
    context = sdk.request_context()
    if not sdk.client_declares_form_elicitation(context):
        return {"asked": False, "reason": NO_CAPABILITY}
    scope = scope_for_request(SimpleNamespace())  # stdio: the configured scope
    resolution_id = result["resolution_id"]
    built = await run_bounded(
        lambda: run_tool(lambda: client_confirmation.resolution_question(scope, resolution_id))
    )
    question = built.get("result")
    if not built["ok"] or question is None:
        return {"asked": False, "reason": "Not asked: the resolution leaves no question."}
    try:
        action, content = await sdk.elicit_form(context, question.message, _form(question))
    except McpError as exc:
        logger.info("the client did not answer the elicitation: %s", exc.error.message)
        return {
            "asked": False,
            "reason": f"The client did not answer the question ({exc.error.message[:200]}). "
            "Ask the user in the conversation.",
        }
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
    stored = await run_bounded(
        lambda: run_tool(
            lambda: client_confirmation.confirm_resolution(
                scope, question, choice=choice, client=client
            )
        )
    )
    if not stored["ok"]:
        return {"asked": True, "stored": False, "reason": stored["error"]["message"]}
    confirmation: dict[str, Any] = stored["result"]
    return {
        "asked": True,
        "answer": confirmation["answer"],
        "stored": True,
        **{"confirmation": confirmation},
    }
