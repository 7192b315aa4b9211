"""Ready-made admin roles: the groups "member" and "reviewer", each with exactly the permissions
its work needs. A role holds across the person's workspaces (Django's permissions are global);
every `migrate` puts each group's permissions back to these lists."""

from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.contrib.auth.models import Group, Permission
from django.db import DEFAULT_DB_ALIAS

# Read their workspaces' records, links, history and agents' writes; edit records (through the
# same services as agents, audited as them); make and revoke their own access tokens, and see
# and revoke the OAuth tokens their agents hold.
MEMBER = {
    "records": [
        "view_workspace",
        "view_collection",
        "view_record",
        "add_record",
        "change_record",
        "view_relationship",
        "view_auditevent",
        "view_clarificationreview",
        "view_selfmapping",
        "view_accesstoken",
        "add_accesstoken",
        "change_accesstoken",
    ],
    "workflow": ["view_preparedaction", "view_agenda", "view_agendaevent"],
    "oauth2_provider": ["view_application", "view_accesstoken", "view_refreshtoken"],
}
# A member who also decides: approves or rejects agents' held writes (and dismisses stale
# ones), confirms or disputes what agents reported, and removes a wrong "me" mapping.
REVIEWER = {
    "records": [*MEMBER["records"], "add_clarificationreview", "delete_selfmapping"],
    "workflow": [*MEMBER["workflow"], "change_preparedaction"],
    "oauth2_provider": MEMBER["oauth2_provider"],
}
ROLES = {"member": MEMBER, "reviewer": REVIEWER}


def sync_role_groups(sender: AppConfig, using: str = DEFAULT_DB_ALIAS, **kwargs: Any) -> None:
    """post_migrate, sent once per app after its permissions exist: that app's share of each
    role. An app left out of this process (the stdio server's) is synced by the next migrate
    that has it."""
    if not any(sender.label in role for role in ROLES.values()):
        return
    for name, role in ROLES.items():
        group, _ = Group.objects.using(using).get_or_create(name=name)
        of_app = Permission.objects.using(using).filter(content_type__app_label=sender.label)
        wanted = of_app.filter(codename__in=role.get(sender.label, []))
        group.permissions.remove(*group.permissions.filter(pk__in=of_app).exclude(pk__in=wanted))
        group.permissions.add(*wanted)


def role_grant(*, user: Any, role: str) -> None:
    """Give user the role, and the admin sign-in (is_staff) it is for."""
    user.groups.add(Group.objects.get(name=role))
    if not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
