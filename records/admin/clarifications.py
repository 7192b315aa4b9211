"""What the user is said to have answered, with where it came from, for one template.

Two sources, never mixed: an answer the user gave in the client's own dialog (MCP elicitation,
`user_confirmed_in_client`) and the agent's own unverifiable account, which a person may
confirm or dispute. Drawn by `templates/records/clarifications.html`."""

from __future__ import annotations

from typing import Any

CLIENT_CONFIRMATION = "user_confirmed_in_client"


def _from_client(confirmation: dict[str, Any]) -> dict[str, Any]:
    client = confirmation.get("client") or {}
    named = " ".join(str(client.get(k) or "") for k in ("name", "version")).strip()
    return {
        "by_user": True,
        "text": str(confirmation.get("answer", "")),
        "client": named or "an unnamed client",
        "at": str(confirmation.get("at", ""))[:19].replace("T", " "),
        "question": str(confirmation.get("question", "")),
    }


def clarifications(
    evidence: Any,
    agent_text: str = "",
    verdict: Any = None,
    review_url: str = "",
) -> list[dict[str, Any]]:
    """Each clarification of a write or an event: the user's answers in the client (kept on its
    cited reviews, or an import's row decisions) first, then the agent-reported text with a
    person's verdict on it (a state, or a stored verdict)."""
    entries = evidence.values() if isinstance(evidence, dict) else evidence or []
    shown = [
        _from_client(e[CLIENT_CONFIRMATION])
        for e in entries
        if isinstance(e, dict) and isinstance(e.get(CLIENT_CONFIRMATION), dict)
    ]
    if agent_text.strip():
        stored = verdict if isinstance(verdict, dict) else {"state": verdict or ""}
        shown.append(
            {
                "by_user": False,
                "text": agent_text,
                "verdict": str(stored.get("state") or ""),
                "verdict_by": str(stored.get("reviewer_id") or ""),
                "verdict_note": str(stored.get("note") or ""),
                "review_url": review_url,
            }
        )
    return shown
