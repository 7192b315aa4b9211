"""Clients nobody owns: those that registered themselves (RFC 7591) or came from a Client ID
Metadata Document. Anyone can make one, so their number is capped
(ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS) and `manage.py anchor_purge` removes those never used."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef, QuerySet
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)
from oauth2_provider.settings import oauth2_settings


def unclaimed_clients() -> QuerySet[Any]:
    Application = get_application_model()
    return Application.objects.filter(
        user__isnull=True,
        registration_source__in=[
            Application.RegistrationSource.DCR,
            Application.RegistrationSource.CIMD,
        ],
    )


def unclaimed_cap_reached() -> bool:
    cap = settings.ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS
    return bool(cap) and unclaimed_clients().count() >= cap


def cap_refusal_text() -> str:
    return (
        f"This server already holds {settings.ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS} registered "
        "clients that no one owns, its limit (ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS). Reuse the "
        "client you registered before, or ask the operator to run `manage.py anchor_purge` "
        "(it removes registered clients never used)."
    )


def unused_unclaimed_clients(*, registered_before: datetime) -> QuerySet[Any]:
    """Unclaimed clients older than the cut-off holding no code and no token of a person.

    Their registration token (an access token with the registration scope and no user) does
    not count as use. The purge removes expired codes and tokens, so a client whose last
    token lapsed and was purged looks the same as one never used: both must authorize anew.
    """
    by_client = {"application": OuterRef("pk")}
    person_tokens = (
        get_access_token_model()
        .objects.filter(**by_client)
        .exclude(scope=oauth2_settings.DCR_REGISTRATION_SCOPE, user__isnull=True)
    )
    return unclaimed_clients().filter(
        ~Exists(get_grant_model().objects.filter(**by_client)),
        ~Exists(person_tokens),
        ~Exists(get_refresh_token_model().objects.filter(**by_client)),
        created__lt=registered_before,
    )
