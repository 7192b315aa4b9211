"""Who is calling and in which workspace. Never taken from tool arguments.

Over stdio the scope is configuration (ANCHOR_WORKSPACE_ID, ANCHOR_ACTOR_ID); over HTTP it is
the authenticated user, their membership and the credential that acted, attached to the request
by the HTTP view.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings


@dataclass(frozen=True)
class Scope:
    workspace_id: str
    actor_id: str
    # Over HTTP, the credential the agent acts through for actor_id's person (records.acting);
    # carried into every prepared action and audit event the call writes.
    credential: str | None = None
    credential_name: str | None = None


def scope_for_request(request: Any) -> Scope:
    scope = getattr(request, "anchor_scope", None)
    if isinstance(scope, Scope):
        return scope
    return Scope(workspace_id=settings.ANCHOR_WORKSPACE_ID, actor_id=settings.ANCHOR_ACTOR_ID)
