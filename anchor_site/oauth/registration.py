"""Dynamic client registration (RFC 7591) and its updates (RFC 7592), kept to what we honour.

Registration is open, as MCP clients expect; django-oauth-toolkit does the rest. Both
registration and update pass the metadata through anchor_site.oauth.callbacks first (the
toolkit would split one item holding two URIs, and take an update's callbacks unchecked).
Registration has a budget per client address (ANCHOR_OAUTH_REGISTRATION_RATE) and a cap on
clients no one owns. Replies carry every field RFC 7591 §3.2.1 lists.
"""

from __future__ import annotations

import json
import time
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from oauth2_provider.models import Application
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
from anchor_site.oauth.unclaimed import cap_refusal_text, room_for_a_new_client

# A JSON Web Key Set, the deepest field RFC 7591 defines, needs four.
MAX_NESTING = 8


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
