"""Which workspace an HTTP request acts in: the user's one membership, or with several the one the
X-Anchor-Workspace header names; never a tool argument.
"""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.exceptions import APIException, PermissionDenied

from records.models.membership import WorkspaceMembership
from workflow.scope import Scope

WORKSPACE_HEADER = "X-Anchor-Workspace"


class WorkspaceNotChosen(APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "workspace_required"


def actor_for_user(user: Any) -> str:
    # Same form as the admin's actor, so the audit trail names one person one way.
    return f"user:{user.get_username()}"


def workspaces_of(user: Any) -> list[str]:
    memberships = WorkspaceMembership.objects.filter(user=user).order_by("workspace_id")
    return list(memberships.values_list("workspace_id", flat=True))


def scope_for_user(user: Any, requested: str | None, credential: tuple[str, str]) -> Scope:
    """The scope of a request by `user`'s agent through `credential` (key, name)."""
    workspaces = workspaces_of(user)
    requested = (requested or "").strip()
    if requested and requested not in workspaces:
        raise PermissionDenied(
            f"{WORKSPACE_HEADER}: you are not a member of workspace {requested!r}. Your "
            f"workspaces: {', '.join(workspaces) or 'none'}."
        )
    if not requested and not workspaces:
        raise PermissionDenied(
            f"User {user.get_username()!r} belongs to no workspace; an operator adds one with "
            "`python manage.py anchor_member add <username> <workspace>`."
        )
    if not requested and len(workspaces) > 1:
        raise WorkspaceNotChosen(
            f"You belong to several workspaces ({', '.join(workspaces)}); choose one for each "
            f"request with the {WORKSPACE_HEADER} header."
        )
    key, name = credential
    return Scope(
        requested or workspaces[0], actor_for_user(user), credential=key, credential_name=name
    )
