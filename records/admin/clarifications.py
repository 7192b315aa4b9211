"""What the user is said to have answered, with where it came from, for one template.

Two sources, never mixed: an answer the user gave in the client's own dialog (MCP elicitation,
`user_confirmed_in_client`) and the agent's own unverifiable account, which a person may
confirm or dispute. Drawn by `templates/records/clarifications.html`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CLIENT_CONFIRMATION = "user_confirmed_in_client"


@dataclass(frozen=True)
class Clarification:
    by_user: bool  # True: the user answered in the client; False: the agent reported it
    text: str
    client: str = ""
    at: str = ""
    question: str = ""
    verdict: str = ""  # a person's verdict on an agent-reported one: confirmed or disputed
    verdict_by: str = ""
    verdict_note: str = ""
    review_url: str = ""


def client_confirmations(evidence: Any) -> list[dict[str, Any]]:
    """The client-dialog answers kept on a write's cited reviews (or an import's row decisions)."""
    entries = evidence.values() if isinstance(evidence, dict) else evidence or []
    return [
        e[CLIENT_CONFIRMATION]
        for e in entries
        if isinstance(e, dict) and isinstance(e.get(CLIENT_CONFIRMATION), dict)
    ]


def _from_client(confirmation: dict[str, Any]) -> Clarification:
    client = confirmation.get("client") or {}
    named = " ".join(str(client.get(k) or "") for k in ("name", "version")).strip()
    return Clarification(
        by_user=True,
        text=str(confirmation.get("answer", "")),
        client=named or "an unnamed client",
        at=str(confirmation.get("at", ""))[:19].replace("T", " "),
        question=str(confirmation.get("question", "")),
    )


def clarifications(
    evidence: Any,
    agent_text: str = "",
    verdict: Any = None,
    review_url: str = "",
) -> list[Clarification]:
    """Each clarification of a write or an event: the user's answers in the client first, then
    the agent-reported text with a person's verdict on it (a state, or a stored verdict)."""
    shown = [_from_client(c) for c in client_confirmations(evidence)]
    if agent_text.strip():
        stored = verdict if isinstance(verdict, dict) else {"state": verdict or ""}
        shown.append(
            Clarification(
                by_user=False,
                text=agent_text,
                verdict=str(stored.get("state") or ""),
                verdict_by=str(stored.get("reviewer_id") or ""),
                verdict_note=str(stored.get("note") or ""),
                review_url=review_url,
            )
        )
    return shown
