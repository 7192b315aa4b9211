"""Dynamic client registration (RFC 7591) and its updates (RFC 7592), kept to what we honour.

Registration is open, as MCP clients expect; django-oauth-toolkit does the rest. Both
registration and update pass the metadata through anchor_site.oauth.callbacks first (the
toolkit would split one item holding two URIs, and take an update's callbacks unchecked).
Registration has a budget per client address (ANCHOR_OAUTH_REGISTRATION_RATE). Replies carry
every field RFC 7591 §3.2.1 lists.

Clients nobody owns (self-registered, or from a Client ID Metadata Document) are capped by
ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS, and `manage.py anchor_purge` removes those never used. A
metadata-document client is only a copy of a document: unused for UNUSED_METADATA_CLIENT_AGE
it leaves as the next new client arrives, and at the cap the oldest unused one gives way, so a
flood of documents never keeps a registration out. Registered clients are never evicted.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import (
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
)

from anchor_site.http.ratelimit import Window, address_key
from anchor_site.oauth.callbacks import (
    INVALID_CLIENT_METADATA,
    RESPONSE_TYPES,
    CallbackRefused,
    check_client_metadata,
)

# A JSON Web Key Set, the deepest field RFC 7591 defines, needs four.
MAX_NESTING = 8
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


def refusal(error: str, description: str, status: int = 400, retry_after: int = 0) -> JsonResponse:
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    body = {"error": error, "error_description": description}
    return JsonResponse(body, status=status, headers=headers)


def nesting(value: Any) -> int:
    """How many arrays and objects deep `value` goes (0 for a plain value)."""
    depth, level = 0, [value]
    while containers := [item for item in level if isinstance(item, dict | list)]:
        depth += 1
        level = [
            child
            for item in containers
            for child in (item.values() if isinstance(item, dict) else item)
        ]
    return depth


def too_deep(what: str) -> str:
    return (
        f"{what} nests arrays or objects more than {MAX_NESTING} deep; RFC 7591 metadata "
        "needs a few levels at most."
    )


def refused_metadata(body: bytes) -> JsonResponse | None:
    try:
        metadata = json.loads(body)
    except RecursionError:
        return refusal(INVALID_CLIENT_METADATA, too_deep("The body"))
    except ValueError:
        return None  # the toolkit answers malformed JSON itself, as RFC 7591 asks
    if not isinstance(metadata, dict):
        return None
    for name, value in metadata.items():
        if nesting(value) > MAX_NESTING:
            return refusal(INVALID_CLIENT_METADATA, too_deep(json.dumps(name)))
    try:
        check_client_metadata(metadata)
    except CallbackRefused as refused:
        return refusal(refused.error, refused.description)
    return None


def completed_reply(response: HttpResponse, *, created: bool) -> HttpResponse:
    """The toolkit's reply, with the registered fields RFC 7591 §3.2.1 asks for and it omits."""
    if not isinstance(response, JsonResponse) or response.status_code != (201 if created else 200):
        return response
    data = json.loads(response.content)
    application = Application.objects.get(client_id=data["client_id"])
    data["response_types"] = RESPONSE_TYPES
    data["client_id_issued_at"] = int(application.created.timestamp())
    if "client_secret" in data:
        data["client_secret_expires_at"] = 0  # never
    return JsonResponse(data, status=response.status_code)


def over_registration_budget(remote_addr: str) -> tuple[str, int] | None:
    """Charge one new client to the address's budget; when that spent it, what to say and the
    seconds until it is back."""
    rate = settings.ANCHOR_OAUTH_REGISTRATION_RATE
    window = Window(f"register:{address_key(remote_addr)}", rate, time.time()) if rate else None
    if window is None or not window.over():
        return None
    return (
        f"Too many new clients from this address (registrations and metadata documents count "
        f"alike): the limit is {window.limit} per {window.seconds} s "
        f"(ANCHOR_OAUTH_REGISTRATION_RATE). Reuse the client you registered, or retry after "
        f"{window.retry_after} s."
    ), window.retry_after


class RegistrationView(DynamicClientRegistrationView):
    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        spent = over_registration_budget(request.META.get("REMOTE_ADDR", ""))
        if spent is not None:
            return refusal("too_many_requests", spent[0], 429, retry_after=spent[1])
        refused = refused_metadata(request.body)
        if refused is not None:
            return refused
        if not room_for_a_new_client():
            return refusal("temporarily_unavailable", cap_refusal_text(), status=503)
        return completed_reply(super().post(request, *args, **kwargs), created=True)


class RegistrationManagementView(DynamicClientRegistrationManagementView):
    """RFC 7592's read, update and delete; an update's metadata is checked before its token."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        return completed_reply(super().get(request, *args, **kwargs), created=False)

    def put(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        refused = refused_metadata(request.body)
        if refused is not None:
            return refused
        return completed_reply(super().put(request, *args, **kwargs), created=False)
