"""/agents/: a person's agents, one credential each, and revoking one without the others.

A signed-in person sees their own credentials only: each OAuth client they authorized (its
tokens are one credential) and each personal token, with when it was last used and what it last
changed (records.acting). Revoking a client removes this person's codes and tokens for it,
refresh families included; revoking a personal token stamps it revoked. /mcp checks every
request, so either stops at once, and every other credential keeps working.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib import admin, messages
from django.contrib.auth.decorators import login_required
from django.db.models import Max
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods
from oauth2_provider.models import AccessToken as OAuthAccessToken
from oauth2_provider.models import Application
from oauth2_provider.models import RefreshToken as OAuthRefreshToken

from anchor_site.http.workspace import actor_for_user
from anchor_site.oauth.resource import revoke_all_of
from records.acting import OAUTH, TOKEN, credential_key
from records.admin.timeline import readable_kind
from records.models import AuditEvent
from records.models.membership import AccessToken
from records.services import access_token_revoke


@dataclass
class Credential:
    key: str
    kind: str  # "OAuth client" or "personal token"
    name: str
    since: datetime
    last_used: datetime | None
    last_change: AuditEvent | None = None

    @property
    def last_change_said(self) -> str:
        """What the last change did, and to which title when it has one: "Created: Priya"."""
        event = self.last_change
        if event is None:
            return ""
        state = event.after if isinstance(event.after, dict) else event.before
        title = state.get("title") if isinstance(state, dict) else None
        what = readable_kind(event.kind)
        return f"{what}: {title}" if isinstance(title, str) else what


def person_credentials(user: Any) -> list[Credential]:
    """The person's OAuth clients (a live token or refresh token) and personal tokens."""
    now = timezone.now()
    tokens = OAuthAccessToken.objects.filter(user=user, application__isnull=False)
    live = set(tokens.filter(expires__gt=now).values_list("application_id", flat=True))
    refreshable = OAuthRefreshToken.objects.filter(user=user, revoked__isnull=True)
    live |= set(refreshable.values_list("application_id", flat=True))
    stamps = dict(
        tokens.filter(application_id__in=live)
        .values("application_id")
        .annotate(last=Max("updated"))
        .values_list("application_id", "last")
    )
    clients = Application.objects.filter(pk__in=live).order_by("name", "pk")
    personal = AccessToken.objects.filter(user=user, revoked_at__isnull=True)
    credentials = [
        Credential(
            key=credential_key(OAUTH, client.pk),
            kind="OAuth client",
            name=client.name or client.client_id,
            since=client.created,
            last_used=stamps.get(client.pk),
        )
        for client in clients
    ] + [
        Credential(
            key=credential_key(TOKEN, token.pk),
            kind="personal token",
            name=f"{token.name} (anchor_{token.prefix}_…)",
            since=token.created_at,
            last_used=token.last_used_at,
        )
        for token in personal
    ]
    actor = actor_for_user(user)
    for credential in credentials:
        # One backward step of audit_credential each: a person holds a handful of credentials.
        credential.last_change = (
            AuditEvent.objects.filter(credential=credential.key, actor_id=actor)
            .order_by("-created_at", "-id")
            .first()
        )
    return credentials


def revoke_credential(user: Any, key: str) -> str | None:
    """Revoke the person's credential `key`; its name, or None when it is not theirs or was
    revoked already."""
    kind, _, pk = key.partition(":")
    if not (pk.isascii() and pk.isdigit() and len(pk) <= 18):  # a bigint, or nothing of theirs
        return None
    if kind == TOKEN:
        token = AccessToken.objects.filter(pk=int(pk), user=user).first()
        return token.name if token and access_token_revoke(token=token) else None
    client = Application.objects.filter(pk=int(pk)).first()
    if kind != OAUTH or client is None:
        return None
    # This person's whole refresh families for the client, not another person's authorization.
    return (client.name or client.client_id) if revoke_all_of(user, application=client) else None


@login_required
@require_http_methods(["GET", "POST"])
def agents_page(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        revoked = revoke_credential(request.user, str(request.POST.get("credential", "")))
        if revoked is None:
            messages.error(
                request, "Nothing was revoked: that is not one of your active credentials."
            )
        else:
            messages.success(
                request, f"Revoked {revoked}: it stopped at once; your other agents go on."
            )
        return HttpResponseRedirect(reverse("anchor-agents"))
    context = {
        **admin.site.each_context(request),
        "title": "Your agents",
        "credentials": person_credentials(request.user),
    }
    return render(request, "anchor/agents.html", context)
