"""Who may use /mcp: access tokens (shown once, revoked, never edited) and workspace memberships
with an optional role (records.roles), written through records.services. A staff member
manages their own tokens only (a token acts as its user); memberships, people and groups are
for superusers (whoever may change a user may make them a superuser)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.db.models import CharField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Cast, Concat
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html

from records.acting import TOKEN, credential_key
from records.admin.common import ChoicesFilter, ServiceWriteAdmin, admin_page, copy_saved
from records.admin.scoping import WorkspaceScopedAdmin, reaches_everything
from records.admin.timeline import readable_kind
from records.models import AuditEvent
from records.models.membership import AccessToken, WorkspaceMembership
from records.roles import role_grant
from records.services import (
    access_token_create,
    access_token_revoke,
    workspace_membership_add,
    workspace_membership_remove,
)


class TokenStateFilter(ChoicesFilter):
    title = parameter_name = "state"
    options = {
        "active": ("Active", Q(revoked_at__isnull=True)),
        "revoked": ("Revoked", Q(revoked_at__isnull=False)),
    }


@admin.register(AccessToken)
class AccessTokenAdmin(ServiceWriteAdmin):
    owner_path = "user"
    list_display = [
        "name",
        "user",
        "shown_prefix",
        "state",
        "created_at",
        "last_used_at",
        "last_change",
    ]
    list_filter = [TokenStateFilter, "created_at"]
    list_select_related = ["user"]
    search_fields = ["name", "prefix", "user__username"]
    # The digest is never displayed, searched or filtered by (scoping.SECRET_FIELDS refuses it
    # as a URL lookup too): nothing needs it, and a prefix search on it narrows the secret.
    readonly_fields = ["shown_prefix", "state", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke_tokens"]
    # A token is revoked and replaced, never edited; revoked rows stay, so the list shows which
    # tokens once existed.
    refused = frozenset({"change", "delete"})

    def get_queryset(self, request: HttpRequest) -> QuerySet[AccessToken]:
        # The newest change each token made, from the audit's credential index (one subquery).
        key = Concat(Value(f"{TOKEN}:"), Cast(OuterRef("pk"), CharField()))
        newest = AuditEvent.objects.filter(credential=key).order_by("-created_at", "-id")
        tokens: QuerySet[AccessToken] = super().get_queryset(request)
        return tokens.annotate(
            last_change_at=Subquery(newest.values("created_at")[:1]),
            last_change_kind=Subquery(newest.values("kind")[:1]),
        )

    @admin.display(description="last change", ordering="last_change_at")
    def last_change(self, token: Any) -> str:
        """What the token last did, linked to every audit event it made."""
        if token.last_change_at is None:
            return "—"
        events = reverse("admin:records_auditevent_changelist")
        return format_html(
            '<a href="{}?credential={}">{} · {}</a>',
            events,
            credential_key(TOKEN, token.pk),
            readable_kind(token.last_change_kind),
            f"{token.last_change_at:%Y-%m-%d %H:%M}",
        )

    @admin.display(description="token")
    def shown_prefix(self, token: AccessToken) -> str:
        return f"anchor_{token.prefix}_…" if token.prefix else "—"

    @admin.display(description="state")
    def state(self, token: AccessToken) -> str:
        if token.revoked_at:
            return f"revoked {token.revoked_at:%Y-%m-%d %H:%M}"
        return "active"

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "user":
            # A token works only in its person's workspaces: offer the people who have one.
            kwargs["queryset"] = (
                get_user_model()
                .objects.filter(is_active=True, anchor_memberships__isnull=False)
                .distinct()
                .order_by("username")
            )
            kwargs["label"] = "Person"
            kwargs["help_text"] = "Active members of a workspace; the token acts as them."
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        if obj is None:
            # Anyone but a superuser makes tokens for themselves: there is no user to pick.
            return ["user", "name"] if reaches_everything(request) else ["name"]
        return ["user", "name", *self.readonly_fields]

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("records.change_accesstoken")

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        owner = obj.user if reaches_everything(request) else request.user
        token, raw = access_token_create(user=owner, name=obj.name)
        copy_saved(obj, token)
        request._anchor_raw_token = raw  # type: ignore[attr-defined]

    def response_add(
        self, request: HttpRequest, obj: Any, post_url_continue: str | None = None
    ) -> HttpResponse:
        # Rendered here rather than carried through a redirect: messages would put the token
        # in a cookie or session row.
        response = admin_page(
            self,
            request,
            "admin/records/accesstoken/token_created.html",
            title="Copy your new access token",
            token=obj,
            raw_token=request._anchor_raw_token,  # type: ignore[attr-defined]
        )
        response["Cache-Control"] = "no-store"
        return response

    @admin.action(description="Revoke selected tokens", permissions=["revoke"])
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[AccessToken]) -> None:
        revoked = sum(access_token_revoke(token=token) for token in queryset)
        self.message_user(
            request,
            f"Revoked {revoked} token(s); they stop working at once.",
            messages.SUCCESS,
        )


class MembershipForm(forms.ModelForm):  # type: ignore[type-arg]
    role = forms.ChoiceField(
        choices=[
            ("", "None: their agents work here; no admin sign-in"),
            ("member", "Member: reads the workspace in the admin, edits records"),
            ("reviewer", "Reviewer: a member who also approves or rejects agents' writes"),
        ],
        required=False,
        help_text="Signs them in to the admin with that group's permissions. A role is the "
        "person's in every workspace they are a member of.",
    )

    class Meta:
        model = WorkspaceMembership
        fields = ["user", "workspace", "role"]


@admin.register(WorkspaceMembership)
class WorkspaceMembershipAdmin(ServiceWriteAdmin):
    superusers_only = True
    form = MembershipForm
    list_display = ["user", "workspace", "roles", "created_at"]
    list_filter = ["workspace"]
    list_select_related = ["user"]
    search_fields = ["user__username", "workspace__id"]
    # Remove and add instead: a membership has nothing else to edit.
    refused = frozenset({"change"})

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return super().get_queryset(request).prefetch_related("user__groups")

    @admin.display(description="roles")
    def roles(self, membership: WorkspaceMembership) -> str:
        return ", ".join(group.name for group in membership.user.groups.all()) or "—"

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        membership, _ = workspace_membership_add(user=obj.user, workspace_id=obj.workspace_id)
        if form.cleaned_data.get("role"):
            role_grant(user=obj.user, role=form.cleaned_data["role"])
        copy_saved(obj, membership)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        workspace_membership_remove(user=obj.user, workspace_id=obj.workspace_id)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for membership in queryset.select_related("user"):
            workspace_membership_remove(user=membership.user, workspace_id=membership.workspace_id)


# Django's own admins for people and groups, behind the same scope declaration as every other.
admin.site.unregister(get_user_model())
admin.site.unregister(Group)


@admin.register(get_user_model())
class PersonAdmin(WorkspaceScopedAdmin, UserAdmin):  # type: ignore[type-arg]
    superusers_only = True


@admin.register(Group)
class PersonGroupAdmin(WorkspaceScopedAdmin, GroupAdmin):
    superusers_only = True
