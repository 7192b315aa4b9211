"""Dynamic client registration (RFC 7591) and its updates (RFC 7592), kept to what we honour.

Registration is open, as MCP clients expect; django-oauth-toolkit does the rest. Before it runs,
both registration and update pass the client's metadata through anchor_site.oauth.callbacks
(the toolkit alone would split one item holding two URIs into two callbacks, and would take an
update's callbacks unchecked). Registration also has a budget of its own per client
address (ANCHOR_OAUTH_REGISTRATION_RATE), charged on every attempt whatever it carries, and
stops at a cap on clients no one owns (ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS).

Replies carry every registered field RFC 7591 §3.2.1 lists, the toolkit's own and those it
leaves out (response_types, client_id_issued_at, client_secret_expires_at).
"""

from __future__ import annotations

import json
import time
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from oauth2_provider.models import get_application_model
from oauth2_provider.views import (
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
)

from anchor_site.http.ratelimit import Window, client_address
from anchor_site.oauth.callbacks import RESPONSE_TYPES, CallbackRefused, check_client_metadata
from anchor_site.oauth.unclaimed import cap_refusal_text, unclaimed_cap_reached


def refusal(error: str, description: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": error, "error_description": description}, status=status)


def refused_metadata(body: bytes) -> JsonResponse | None:
    try:
        metadata = json.loads(body)
    except ValueError:
        return None  # the toolkit answers malformed JSON itself, as RFC 7591 asks
    if not isinstance(metadata, dict):
        return None
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
    application = get_application_model().objects.get(client_id=data["client_id"])
    data["response_types"] = RESPONSE_TYPES
    data["client_id_issued_at"] = int(application.created.timestamp())
    if "client_secret" in data:
        data["client_secret_expires_at"] = 0  # never
    return JsonResponse(data, status=response.status_code)


def over_registration_budget(request: HttpRequest) -> JsonResponse | None:
    """Charge the address's registration budget; a refusal when it is spent."""
    rate = settings.ANCHOR_OAUTH_REGISTRATION_RATE
    if not rate:
        return None
    window = Window(f"register:{client_address(request)}", rate, time.time())
    if window.charge() <= window.limit:
        return None
    refused = refusal(
        "too_many_requests",
        f"Too many registrations from this address: the limit is {window.limit} per "
        f"{window.seconds} s (ANCHOR_OAUTH_REGISTRATION_RATE). Reuse the client you registered, "
        f"or retry after {window.retry_after} s.",
        status=429,
    )
    refused["Retry-After"] = str(window.retry_after)
    return refused


class RegistrationView(DynamicClientRegistrationView):
    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        refused = over_registration_budget(request) or refused_metadata(request.body)
        if refused is not None:
            return refused
        if unclaimed_cap_reached():
            return refusal("temporarily_unavailable", cap_refusal_text(), status=503)
        return completed_reply(super().post(request, *args, **kwargs), created=True)


class RegistrationManagementView(DynamicClientRegistrationManagementView):
    """RFC 7592's read, update and delete. An update's metadata is checked before its token:
    a refused body costs no database read and changes nothing either way."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        return completed_reply(super().get(request, *args, **kwargs), created=False)

    def put(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        refused = refused_metadata(request.body)
        if refused is not None:
            return refused
        return completed_reply(super().put(request, *args, **kwargs), created=False)
