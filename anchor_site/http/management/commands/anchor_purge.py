"""`manage.py anchor_purge`: delete what has expired (anchor_site.http.purge); run it daily."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from anchor_site.http.purge import purge


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
