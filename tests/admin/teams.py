"""Two teams sharing one Anchor, each with one of everything the admin shows, and a staff member
of each team who holds every permission Django has (the strongest staff account an operator
could hand out short of superuser).

Every string that belongs to a team carries its word ("alpha" for team-a, "bravo" for team-b),
so a page can be checked for the other team's word to prove nothing of theirs leaked.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import Permission
from django.utils import timezone
from oauth2_provider.models import AccessToken as OAuthAccessToken
from oauth2_provider.models import Application, Grant, set_token_value
from oauth2_provider.models import RefreshToken as OAuthRefreshToken

from records import services
from records.models import AccessToken, AuditEvent, Collection, Record, Relationship
from records.services import (
    CollectionFields,
    WriteContext,
    access_token_create,
    clarification_review_create,
    workspace_membership_add,
)
from workflow.actions import commit_write, prepare_write
from workflow.agendas.lifecycle import acknowledge
from workflow.agendas.steps import agenda_start, step
from workflow.models import PreparedAction
from workflow.resolution import resolve_record
from workflow.scope import Scope

PASSWORD = "correct horse battery"
STAFF_APPS = ("records", "workflow", "auth", "oauth2_provider")


@dataclass
class Team:
    word: str
    workspace: str
    staff: Any
    token: AccessToken
    people: Collection
    gated: Collection
    kirat: Record
    abhishek: Record
    link: Relationship
    clarified: AuditEvent
    pending: PreparedAction
    agenda_id: str

    @property
    def kirat_title(self) -> str:
        return self.kirat.title


def _collection(ctx: WriteContext, name: str) -> Collection:
    return services.collection_create(
        ctx=ctx,
        fields=CollectionFields.validated(
            name=name,
            purpose=f"Track {name}",
            record_meaning=f"One of the {name}",
            typical_fields=["notes"],
            relationship_guidance="",
        ),
    )


def _staff_member(django_user_model: Any, word: str, workspace: str) -> Any:
    user = django_user_model.objects.create_user(
        username=f"staff-{word}", password=PASSWORD, is_staff=True
    )
    user.user_permissions.set(Permission.objects.filter(content_type__app_label__in=STAFF_APPS))
    workspace_membership_add(user=user, workspace_id=workspace)
    return django_user_model.objects.get(pk=user.pk)  # a fresh permission cache


def _oauth_access(staff: Any, word: str) -> None:
    """A client the staff member connected over OAuth: its grant, access and refresh token."""
    application = Application.objects.create(
        user=staff,
        name=f"{word} desktop client",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
    )
    expires = timezone.now() + timedelta(hours=1)
    Grant.objects.create(
        user=staff,
        application=application,
        code=f"{word}-code",
        expires=expires,
        redirect_uri="http://127.0.0.1/callback",
        code_challenge="x" * 43,
        code_challenge_method="S256",
    )
    access = OAuthAccessToken(user=staff, application=application, expires=expires, scope="mcp")
    set_token_value(access, f"{word}-access-token")
    access.save()
    refresh = OAuthRefreshToken(user=staff, application=application, access_token=access)
    set_token_value(refresh, f"{word}-refresh-token")
    refresh.save()


def _agenda(scope: Scope, word: str) -> str:
    started = agenda_start(
        scope,
        title=f"{word} release chores",
        items=[f"{word} rename the settings", f"{word} pin the SDK"],
        source_reference=f"{word} issue 12",
    )
    moved = acknowledge(
        scope,
        agenda_id=started["agenda_id"],
        cursor_token=started["cursor_token"],
        presentation_id=started["presentation_id"],
    )
    step(
        scope,
        agenda_id=moved["agenda_id"],
        cursor_token=moved["cursor_token"],
        action="complete",
        text=f"{word} settings renamed.",
    )
    return str(started["agenda_id"])


def seed_team(django_user_model: Any, word: str, workspace: str) -> Team:
    services.workspace_ensure(workspace)
    agent_id = f"agent-{word}"
    ctx = WriteContext(workspace_id=workspace, actor_id=agent_id, decision_reason=f"{word} seed")
    people = _collection(ctx, f"{word} people")
    services.collection_alias_add(ctx=ctx, collection_id=people.pk, alias=f"{word} candidates")
    kirat = services.record_create(
        ctx=ctx, collection_id=people.pk, title=f"{word} Kirat", data={"notes": word}
    )
    abhishek = services.record_create(
        ctx=ctx, collection_id=people.pk, title=f"{word} Abhishek", data={}
    )
    kirat = services.record_alias_add(
        ctx=ctx, record_id=kirat.pk, alias=f"{word} K.", expected_version=kirat.version
    )
    link, _ = services.relationship_create(
        ctx=ctx, source_id=abhishek.pk, relationship_type="knows", target_id=kirat.pk
    )
    clarifying = WriteContext(
        workspace_id=workspace,
        actor_id=agent_id,
        decision_reason=f"{word} stage from the user",
        clarification=f"The user said {word} Abhishek is onsite.",
    )
    services.record_update(
        ctx=clarifying, record_id=abhishek.pk, changes={"stage": "onsite"}, expected_version=1
    )
    clarified = AuditEvent.objects.get(
        workspace_id=workspace, agent_reported_clarification__startswith="The user said"
    )
    clarification_review_create(
        ctx=WriteContext(workspace_id=workspace, actor_id=f"user:reviewer-{word}"),
        event_id=clarified.pk,
        state="confirmed",
        note=f"{word} confirmed",
    )
    kirat = services.self_mapping_set(
        ctx=ctx, record_id=kirat.pk, expected_version=kirat.version
    ).record

    gated = _collection(ctx, f"{word} offers")
    offer = services.record_create(ctx=ctx, collection_id=gated.pk, title=f"{word} offer", data={})
    services.collection_set_requires_approval(
        ctx=ctx, collection_id=gated.pk, requires_approval=True
    )
    scope = Scope(workspace, agent_id)
    review = resolve_record(scope, query=f"{word} offer", collection_id=gated.pk)
    prepared = prepare_write(
        scope,
        operation="update_record",
        arguments={"record_id": offer.pk, "changes": {"stage": "sent"}, "expected_version": 1},
        review_ids=[review["resolution_id"]],
        decision_reason=f"{word} panel says send the offer.",
    )
    assert commit_write(scope, action_id=prepared["action_id"])["status"] == "awaiting_approval"

    staff = _staff_member(django_user_model, word, workspace)
    token, _ = access_token_create(user=staff, name=f"{word} laptop")
    _oauth_access(staff, word)
    return Team(
        word=word,
        workspace=workspace,
        staff=staff,
        token=token,
        people=people,
        gated=gated,
        kirat=kirat,
        abhishek=abhishek,
        link=link,
        clarified=clarified,
        pending=PreparedAction.objects.get(pk=prepared["action_id"]),
        agenda_id=_agenda(scope, word),
    )
