"""Add users to workspaces, remove them, list memberships (team mode).

Over HTTP a request acts only in a workspace its user is a member of; a user in several names
one per request with the X-Anchor-Workspace header.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from records.errors import AnchorError
from records.models.membership import WorkspaceMembership
from records.selectors import user_for_username
from records.services import workspace_membership_add, workspace_membership_remove


class Command(BaseCommand):
    help = "Add a user to a workspace, remove them, or list memberships."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="add|remove|list")
        add = actions.add_parser("add", help="Let a user work in a workspace (created if new).")
        add.add_argument("username")
        add.add_argument("workspace")
        add.add_argument(
            "--create-user",
            action="store_true",
            help="Create the user first if missing (no password: agents use tokens; set one "
            "later for the admin).",
        )
        remove = actions.add_parser("remove", help="Take a user out of a workspace.")
        remove.add_argument("username")
        remove.add_argument("workspace")
        listing = actions.add_parser("list", help="List memberships.")
        listing.add_argument("--user", dest="username", help="Only this user's memberships.")
        listing.add_argument("--workspace", help="Only this workspace's members.")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        try:
            getattr(self, action)(**options)  # the sub-command's own arguments, by name
        except AnchorError as exc:
            raise CommandError(exc.message) from None

    def add(
        self, *, username: str, workspace: str, create_user: bool, verbosity: int, **_: Any
    ) -> None:
        with transaction.atomic():
            User = get_user_model()
            if create_user and not User.objects.filter(**{User.USERNAME_FIELD: username}).exists():
                User.objects.create_user(**{User.USERNAME_FIELD: username})
                if verbosity >= 1:
                    self.stdout.write(f"Created user {username} (no password).")
            user = user_for_username(username)
            created = workspace_membership_add(user=user, workspace_id=workspace)[1]
        if created:
            self.stdout.write(self.style.SUCCESS(f"{username} is now a member of {workspace}."))
        else:
            self.stdout.write(f"{username} was already a member of {workspace}; nothing changed.")

    def remove(self, *, username: str, workspace: str, **_: Any) -> None:
        if workspace_membership_remove(user=user_for_username(username), workspace_id=workspace):
            self.stdout.write(self.style.SUCCESS(f"{username} is no longer in {workspace}."))
        else:
            raise CommandError(f"{username} is not a member of {workspace!r}.")

    def list(self, *, username: str | None, workspace: str | None, **_: Any) -> None:
        memberships = WorkspaceMembership.objects.select_related("user").order_by(
            "workspace_id", "user__username"
        )
        if username:
            memberships = memberships.filter(user=user_for_username(username))
        if workspace:
            memberships = memberships.filter(workspace_id=workspace)
        for membership in memberships:
            self.stdout.write(f"{membership.workspace_id:<30} {membership.user.get_username()}")
