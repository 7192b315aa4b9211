"""Create, list and revoke the access tokens agents send to /mcp (team mode).

`create` prints the token once, alone on stdout, so it can be captured by a script; only its
SHA-256 digest is stored, so it can never be shown again. Revoked tokens stop working at once.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from records.errors import AnchorError
from records.models.membership import AccessToken
from records.selectors import TOKEN_PATTERN, user_for_username
from records.services import access_token_create, access_token_revoke


class Command(BaseCommand):
    help = "Create, list or revoke access tokens for the MCP HTTP endpoint."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="create|list|revoke")
        create = actions.add_parser("create", help="Create a token and print it once.")
        create.add_argument("username", help="The user the token acts as.")
        create.add_argument("--name", required=True, help="Where it is used, e.g. 'laptop'.")
        listing = actions.add_parser("list", help="List tokens (never their secrets).")
        listing.add_argument("--user", dest="username", help="Only this user's tokens.")
        listing.add_argument(
            "--all", dest="include_revoked", action="store_true", help="Include revoked tokens."
        )
        revoke = actions.add_parser("revoke", help="Revoke a token at once.")
        revoke.add_argument("token", help="The token's prefix (as listed) or the whole token.")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        try:
            getattr(self, action)(**options)  # the sub-command's own arguments, by name
        except AnchorError as exc:
            raise CommandError(exc.message) from None

    def create(self, *, username: str, name: str, verbosity: int, **_: Any) -> None:
        token, raw = access_token_create(user=user_for_username(username), name=name)
        self.stdout.write(raw)
        if verbosity >= 1:
            self.stderr.write(
                f"Created token {token.prefix!r} ({token.name}) for {username}. It is shown "
                "only now; store it in the client's configuration.",
                style_func=self.style.WARNING,
            )

    def list(self, *, username: str | None, include_revoked: bool, **_: Any) -> None:
        tokens = AccessToken.objects.select_related("user").order_by("user__username", "-id")
        if username:
            tokens = tokens.filter(user=user_for_username(username))
        if not include_revoked:
            tokens = tokens.filter(revoked_at__isnull=True)
        for token in tokens:
            state = f"revoked {token.revoked_at:%Y-%m-%d %H:%M}" if token.revoked_at else "active"
            used = f"{token.last_used_at:%Y-%m-%d %H:%M}" if token.last_used_at else "never"
            self.stdout.write(
                f"{token.prefix}  {token.user.get_username():<20} {token.name:<24} "
                f"{state:<24} last used {used}"
            )

    def revoke(self, *, token: str, **_: Any) -> None:
        match = TOKEN_PATTERN.match(token.strip())
        prefix = match.group(1) if match else token.strip()
        found = AccessToken.objects.filter(prefix=prefix).first()
        if found is None:
            raise CommandError(f"No token with prefix {prefix!r}; see `anchor_token list`.")
        if access_token_revoke(token=found):
            self.stdout.write(self.style.SUCCESS(f"Revoked token {prefix} ({found.name})."))
        else:
            self.stdout.write(f"Token {prefix} was already revoked; nothing changed.")
