"""A member and a token for them in one call: what `anchor_member add --create-user` and then
`anchor_token create` do, by the same services, without a Django start-up for each.

Imported both by tests (PostgreSQL, in pytest's own process) and by `manage.py shell -c`
against a server's SQLite file (tests/http/shared_server.py), so it imports nothing else.
"""

from __future__ import annotations


def make_token(username: str, workspace: str) -> str:
    from django.contrib.auth import get_user_model

    from records.services import access_token_create, workspace_membership_add

    user, _ = get_user_model().objects.get_or_create(username=username)
    workspace_membership_add(user=user, workspace_id=workspace)
    return access_token_create(user=user, name="e2e")[1]
