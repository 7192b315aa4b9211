"""`manage.py anchor_purge`: delete rows that only ever grow and are no longer needed; run it
daily.

Reviews an action awaiting commit or approval cites stay, and so do stale writes still listed for
a person's attention. Unused clients go before the expired tokens, so a client whose tokens lapse
in this run stays until the next.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.sessions.models import Session
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken, clear_expired

from anchor_site.oauth.registration import unused_unclaimed_clients
from workflow.models import ActionState, PreparedAction, ReviewTicket

UNCOMMITTED = (ActionState.PREPARED, ActionState.STALE)
AWAITING_DECISION = (ActionState.PREPARED, ActionState.AWAITING_APPROVAL)


def _oauth_rows() -> int:
    return sum(model.objects.count() for model in (Grant, AccessToken, RefreshToken))


def purge(
    *, now: datetime, result_retention: timedelta, unused_client_age: timedelta
) -> dict[str, int]:
    """How many rows of each kind went."""
    with transaction.atomic():
        actions = PreparedAction.objects.filter(state__in=UNCOMMITTED, expires_at__lt=now).exclude(
            state=ActionState.STALE, dismissed_at__isnull=True
        )
        counts = {"expired uncommitted actions": actions.delete()[0]}
        pending = PreparedAction.objects.filter(state__in=AWAITING_DECISION)
        cited = {
            str(id_) for ids in pending.values_list("review_ids", flat=True) for id_ in ids or []
        }
        tickets = ReviewTicket.objects.filter(expires_at__lt=now).exclude(pk__in=cited)
        counts["expired review tickets"] = tickets.delete()[0]
        counts["committed results past retention"] = PreparedAction.objects.filter(
            state=ActionState.COMMITTED,
            decided_at__lt=now - result_retention,
            result__isnull=False,
        ).update(result=None)
        counts["expired sessions"] = Session.objects.filter(expire_date__lt=now).delete()[0]
        unused = unused_unclaimed_clients(now=now, unused_for=unused_client_age)
        # The clients alone: the delete also takes their registration tokens.
        counts["unused registered OAuth clients"] = unused.delete()[1].get(
            Application._meta.label, 0
        )
    before = _oauth_rows()
    clear_expired()  # batches of its own; counts are taken around it
    counts["expired or revoked OAuth codes and tokens"] = before - _oauth_rows()
    return counts


class Command(BaseCommand):
    help = (
        "Delete expired review tickets, uncommitted actions, sessions and OAuth codes and "
        "tokens, the stored results of committed actions past the retention, and registered OAuth "
        "clients no one owns that were never used."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--result-retention-days",
            type=int,
            default=settings.ANCHOR_ACTION_RESULT_RETENTION_DAYS,
            help="Keep committed actions' stored results this many days (default: "
            "ANCHOR_ACTION_RESULT_RETENTION_DAYS, 30). Replaying an older action is refused.",
        )
        parser.add_argument(
            "--unused-client-days",
            type=int,
            default=settings.ANCHOR_OAUTH_UNUSED_CLIENT_DAYS,
            help="Remove OAuth clients no one owns, registered more than this many days ago "
            "and never used (default: ANCHOR_OAUTH_UNUSED_CLIENT_DAYS, 7).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        days, client_days = options["result_retention_days"], options["unused_client_days"]
        for option, value in (("result-retention-days", days), ("unused-client-days", client_days)):
            if value < 1:
                raise CommandError(f"--{option} must be at least 1.")
        counts = purge(
            now=timezone.now(),
            result_retention=timedelta(days=days),
            unused_client_age=timedelta(days=client_days),
        )
        for what, count in counts.items():
            self.stdout.write(f"{what}: {count}")
