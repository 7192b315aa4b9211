"""OAuth access in the admin: the clients people connected, and the tokens they hold.

The toolkit's unscoped admins are replaced by workspace-scoped ones: staff see their own
applications, grants and tokens, a superuser everyone's. Callbacks, "skip authorization" and the
owner only a superuser sets. Revoking a token revokes its whole refresh family, at once.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from oauth2_provider import admin as toolkit_admin
from oauth2_provider.cimd import is_cimd_client_id
from oauth2_provider.forms import ApplicationForm
from oauth2_provider.models import AccessToken as OAuthAccessToken
from oauth2_provider.models import Application, Grant, IDToken
from oauth2_provider.models import RefreshToken as OAuthRefreshToken

from records.admin.scoping import WorkspaceScopedAdmin, reaches_everything

# Digests and secrets are never a lookup in the URL, even for their owner.
OAUTH_SECRET_FIELDS = frozenset({"token", "token_checksum", "client_secret", "code"})

admin.site.unregister([Application, OAuthAccessToken, OAuthRefreshToken, Grant, IDToken])


class OAuthScopedAdmin(WorkspaceScopedAdmin):
    def lookup_allowed(self, lookup: str, value: Any, request: HttpRequest | None = None) -> bool:
        if OAUTH_SECRET_FIELDS.intersection(lookup.split("__")):
            return False
        return super().lookup_allowed(lookup, value, request)


def revoke_families(refresh_tokens: QuerySet[Any]) -> None:
    for family in set(refresh_tokens.values_list("token_family", flat=True)):
        OAuthRefreshToken.revoke_family(family)


# With these a staff member could send another workspace's people to any callback, unasked.
SUPERUSER_ONLY_APPLICATION_FIELDS = (
    "user",
    "skip_authorization",
    "redirect_uris",
    "post_logout_redirect_uris",
    "allowed_origins",
)
# The consent page (anchor_site.oauth.views) honours the flag on these terms only.
SKIP_AUTHORIZATION_HELP = (
    "People are sent to the client without a consent page only while the owner (User) is an "
    "active superuser; for any other owner, consent is asked anyway."
)

GRANTS_WITH_REDIRECTS = frozenset(
    {
        Application.GRANT_AUTHORIZATION_CODE,
        Application.GRANT_IMPLICIT,
        Application.GRANT_OPENID_HYBRID,
    }
)


class AdminApplicationForm(ApplicationForm):
    def clean_client_id(self) -> str:
        client_id: str = self.cleaned_data["client_id"]
        # An https client ID names a metadata document: it would impersonate that client.
        if is_cimd_client_id(client_id) and client_id != self.instance.client_id:
            raise forms.ValidationError(
                "A client ID starting with https:// is a Client ID Metadata Document URL: that "
                "client registers itself from its document. Leave the generated client ID."
            )
        return client_id


class StaffApplicationForm(AdminApplicationForm):
    """A staff member's form: a grant needing callbacks (which only a superuser sets) is refused
    with the way forward, before the toolkit's bare "cannot be empty"."""

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean()
        needs_callback = cleaned.get("authorization_grant_type") in GRANTS_WITH_REDIRECTS
        if needs_callback and not self.instance.redirect_uris.strip():
            self.add_error(
                "authorization_grant_type",
                "This grant sends codes to a redirect URI, and only a superuser sets those: "
                "ask a superuser to set this application's redirect URIs, or choose "
                "client credentials.",
            )
        return cleaned


@admin.register(Application)
class ApplicationAdmin(OAuthScopedAdmin, toolkit_admin.ApplicationAdmin):
    # Ownerless (self-registered) clients: superusers only. A staff member's are theirs.
    owner_path = "user"
    form = AdminApplicationForm
    # The toolkit's application pages are not served here: its link would be a 500.
    view_on_site = False

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        readonly = tuple(super().get_readonly_fields(request, obj))
        if reaches_everything(request):
            return readonly
        return readonly + SUPERUSER_ONLY_APPLICATION_FIELDS

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        if not reaches_everything(request):
            kwargs["form"] = StaffApplicationForm
        form = super().get_form(request, obj, change, **kwargs)
        if "skip_authorization" in form.base_fields:
            form.base_fields["skip_authorization"].help_text = SKIP_AUTHORIZATION_HELP
        return form

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if not reaches_everything(request) and not change:
            # Read-only fields are left out of the form: set them rather than trust defaults.
            obj.user = request.user
            obj.skip_authorization = False
        super().save_model(request, obj, form, change)


@admin.register(OAuthAccessToken)
class AccessTokenAdmin(OAuthScopedAdmin, toolkit_admin.AccessTokenAdmin):
    owner_path = "user"
    actions = ["revoke_tokens"]

    @admin.action(description="Revoke selected tokens (and their refresh tokens)")
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        count = queryset.count()
        revoke_families(OAuthRefreshToken.objects.filter(access_token__in=queryset))
        queryset.delete()
        self.message_user(request, f"Revoked {count} token(s).", messages.SUCCESS)


@admin.register(OAuthRefreshToken)
class RefreshTokenAdmin(OAuthScopedAdmin, toolkit_admin.RefreshTokenAdmin):
    owner_path = "user"
    actions = ["revoke_tokens"]

    @admin.action(description="Revoke selected refresh tokens (and their access tokens)")
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        count = queryset.count()
        revoke_families(queryset)
        self.message_user(request, f"Revoked {count} refresh token(s).", messages.SUCCESS)


@admin.register(Grant)
class GrantAdmin(OAuthScopedAdmin, toolkit_admin.GrantAdmin):
    owner_path = "user"


@admin.register(IDToken)
class IDTokenAdmin(OAuthScopedAdmin, toolkit_admin.IDTokenAdmin):
    # OpenID Connect is off; kept visible to superusers so nothing is hidden from them.
    superusers_only = True
