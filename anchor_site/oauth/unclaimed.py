"""Clients nobody owns (self-registered, or from a Client ID Metadata Document): capped by
ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS, and `manage.py anchor_purge` removes those never used.

A metadata-document client is only a copy of a document: unused for UNUSED_METADATA_CLIENT_AGE
it leaves as the next new client arrives, and at the cap the oldest unused one gives way, so a
flood of documents never keeps a registration out. Registered clients are never evicted.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken
from oauth2_provider.settings import oauth2_settings

UNUSED_METADATA_CLIENT_AGE = timedelta(hours=1)


def unclaimed_clients() -> QuerySet[Any]:
    sources = [Application.RegistrationSource.DCR, Application.RegistrationSource.CIMD]
    clients: QuerySet[Any] = Application.objects.filter(
        user__isnull=True, registration_source__in=sources
    )
    return clients


def cap_refusal_text() -> str:
    return (
        f"This server already holds {settings.ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS} registered "
        "clients that no one owns, its limit (ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS). Reuse the "
        "client you registered before, or ask the operator to run `manage.py anchor_purge` "
        "(it removes registered clients never used)."
    )


def unused(clients: QuerySet[Any]) -> QuerySet[Any]:
    """The clients holding no code and no token of a person (their registration token does
    not count; a client whose tokens lapsed and were purged must authorize anew either way)."""
    by_client = {"application": OuterRef("pk")}
    person_tokens = AccessToken.objects.filter(**by_client).exclude(
        scope=oauth2_settings.DCR_REGISTRATION_SCOPE, user__isnull=True
    )
    return clients.filter(
        ~Exists(Grant.objects.filter(**by_client)),
        ~Exists(person_tokens),
        ~Exists(RefreshToken.objects.filter(**by_client)),
    )


def unused_unclaimed_clients(*, now: datetime, unused_for: timedelta) -> QuerySet[Any]:
    """What the purge removes: unused clients older than `unused_for`, and metadata-document
    clients as soon as they are UNUSED_METADATA_CLIENT_AGE old."""
    source = Application.RegistrationSource.CIMD
    metadata_age = min(unused_for, UNUSED_METADATA_CLIENT_AGE)
    return unused(unclaimed_clients()).filter(
        Q(created__lt=now - unused_for)
        | Q(registration_source=source, created__lt=now - metadata_age)
    )


def room_for_a_new_client() -> bool:
    """Whether one more client no one owns may be made, evicting metadata-document clients
    unused for an hour, and at the cap the oldest unused one."""
    source = Application.RegistrationSource.CIMD
    unused_metadata = unused(unclaimed_clients().filter(registration_source=source))
    unused_metadata.filter(created__lt=timezone.now() - UNUSED_METADATA_CLIENT_AGE).delete()
    cap = settings.ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS
    if not cap or unclaimed_clients().count() < cap:
        return True
    oldest = list(unused_metadata.order_by("created", "pk").values_list("pk", flat=True)[:1])
    if not oldest:
        return False
    Application.objects.filter(pk__in=oldest).delete()
    return True
