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
            default=None,
            help="Keep committed actions' stored results this many days (default: "
            "ANCHOR_ACTION_RESULT_RETENTION_DAYS, 30). Replaying an older action is refused.",
        )
        parser.add_argument(
            "--unused-client-days",
            type=int,
            default=None,
            help="Remove OAuth clients no one owns, registered more than this many days ago "
            "and never used (default: ANCHOR_OAUTH_UNUSED_CLIENT_DAYS, 7).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        days = options["result_retention_days"]
        if days is None:
            days = settings.ANCHOR_ACTION_RESULT_RETENTION_DAYS
        if days < 1:
            raise CommandError("--result-retention-days must be at least 1.")
        client_days = options["unused_client_days"]
        if client_days is None:
            client_days = settings.ANCHOR_OAUTH_UNUSED_CLIENT_DAYS
        if client_days < 1:
            raise CommandError("--unused-client-days must be at least 1.")
        purged = purge(
            now=timezone.now(),
            result_retention=timedelta(days=days),
            unused_client_age=timedelta(days=client_days),
        )
        for line in purged.lines():
            self.stdout.write(line)
