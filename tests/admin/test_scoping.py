"""The admin shows each person only their workspaces: tried from both teams against every
registered model, through every door the admin has (lists, change pages, search, filters,
autocomplete, raw-ID popups and foreign-key choices, actions, add forms, custom views).

A superuser sees everything. Tokens are their owner's; memberships and people are superusers'.
"""

from __future__ import annotations

from typing import Any

import pytest
from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from records.admin.scoping import WorkspaceScopedAdmin
from records.models import (
    AccessToken,
    ClarificationReview,
    Collection,
    Record,
    Relationship,
    WorkspaceMembership,
)
from records.services import workspace_membership_add
from tests.admin.forms import page_post_data
from tests.admin.teams import Team
from workflow.models import ActionState, PreparedAction

REGISTERED: list[tuple[Any, Any]] = sorted(
    admin.site._registry.items(), key=lambda item: item[0]._meta.label
)
MODEL_IDS = [model._meta.label for model, _ in REGISTERED]
SIDES = pytest.mark.parametrize("side", [0, 1], ids=["team-a looks", "team-b looks"])


def every_model_both_ways(teams: tuple[Team, Team]) -> Any:
    """(model, its admin, the team looking, the other team) for every model, from both sides.

    One seeded database serves the whole walk; each assertion names the model and the side.
    """
    for me, other in (teams, teams[::-1]):
        for model, model_admin in REGISTERED:
            yield model, model_admin, me, other


def admin_url(model: Any, page: str, *args: Any) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{page}", args=args)


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def rows_of(model_admin: Any, team: Team) -> set[Any]:
    """The team's rows of the admin's model, worked out from the data, not from the admin."""
    model = model_admin.model
    if model is get_user_model():
        return {team.staff.pk}
    if model is Group:
        return set()
    if model is WorkspaceMembership:
        found = model.objects.filter(workspace_id=team.workspace)
    elif model is AccessToken:
        found = model.objects.filter(user=team.staff)
    elif model_admin.owner_path:
        found = model.objects.filter(**{model_admin.owner_path: team.staff})
    elif model_admin.superusers_only:
        found = model.objects.none()
    elif model_admin.workspace_path == "pk":
        found = model.objects.filter(pk=team.workspace)
    else:
        found = model.objects.filter(**{model_admin.workspace_path: team.workspace})
    return set(found.values_list("pk", flat=True))


def listed(response: Any) -> set[Any]:
    assert response.status_code == 200, response.status_code
    return set(response.context["cl"].queryset.values_list("pk", flat=True))


def assert_nothing_of(team: Team, response: Any, where: str = "") -> None:
    text = response.content.decode().lower()
    assert team.word not in text, f"{where}: {team.word!r} shown"
    assert team.workspace not in text, f"{where}: {team.workspace!r} shown"


def snapshot(team: Team) -> dict[str, list[dict[str, Any]]]:
    """Every row of the team's, as stored: what no action of the other team may change."""
    taken = {}
    for model, model_admin in REGISTERED:
        rows = model._default_manager.filter(pk__in=rows_of(model_admin, team))
        values = [
            {name: value for name, value in row.items() if name != "last_login"}  # signing in
            for row in rows.values()
        ]
        taken[model._meta.label] = sorted(values, key=lambda row: str(row["id"]))
    return taken


@pytest.fixture
def superuser(db, django_user_model):
    return django_user_model.objects.create_superuser(username="root", password="x")


# --- every admin declares its scope ----------------------------------------------------------


def test_every_registered_model_admin_is_scoped():
    unscoped = [
        label
        for label, (_, model_admin) in zip(MODEL_IDS, REGISTERED, strict=True)
        if not isinstance(model_admin, WorkspaceScopedAdmin)
        or len(model_admin.declared_scopes()) != 1
    ]
    assert unscoped == []


def test_an_admin_without_a_declared_scope_fails_the_system_check():
    class Unscoped(WorkspaceScopedAdmin):
        pass

    errors = Unscoped(Record, admin.site).check()
    assert [error.id for error in errors] == ["anchor.E101"]


# --- lists, change pages, search, filters ----------------------------------------------------


def test_list_shows_only_own_rows_and_names_nothing_of_the_other_team(teams):
    for model, model_admin, me, other in every_model_both_ways(teams):
        where = f"{model._meta.label} seen by {me.workspace}"
        response = signed_in(me.staff).get(admin_url(model, "changelist"))
        if model_admin.superusers_only:
            assert response.status_code == 403, where
            continue
        mine = rows_of(model_admin, me)
        assert mine, f"{where}: the seed must give every model a row on each side"
        assert listed(response) == mine, where
        assert_nothing_of(other, response, where)


def test_another_teams_change_history_and_delete_pages_are_404(teams):
    for model, model_admin, me, other in every_model_both_ways(teams):
        client = signed_in(me.staff)
        for pk in sorted(rows_of(model_admin, other), key=str)[:2]:
            for page in ("change", "history", "delete"):
                where = f"{model._meta.label} {page} page of {pk} seen by {me.workspace}"
                response = client.get(admin_url(model, page, pk))
                assert response.status_code == 404, where
                assert_nothing_of(other, response, where)
        if not model_admin.superusers_only:
            own = sorted(rows_of(model_admin, me), key=str)[0]
            assert client.get(admin_url(model, "change", own)).status_code == 200, model


def test_a_superuser_sees_both_teams(teams, superuser):
    alpha, bravo = teams
    client = signed_in(superuser)
    for model, model_admin in REGISTERED:
        everything = rows_of(model_admin, alpha) | rows_of(model_admin, bravo)
        assert everything <= listed(client.get(admin_url(model, "changelist"))), model
        for pk in sorted(rows_of(model_admin, bravo), key=str)[:1]:
            assert client.get(admin_url(model, "change", pk)).status_code == 200, model


def test_search_finds_nothing_of_the_other_team(teams):
    for model, model_admin, me, other in every_model_both_ways(teams):
        if model_admin.superusers_only:
            continue
        client = signed_in(me.staff)
        for term in (other.word, other.kirat_title, other.kirat.pk, other.workspace):
            response = client.get(admin_url(model, "changelist"), {"q": term})
            where = f"{model._meta.label} searched for {term!r} by {me.workspace}"
            assert listed(response) <= rows_of(model_admin, me), where


def test_filters_offer_and_apply_only_own_rows(teams):
    for model, model_admin, me, other in every_model_both_ways(teams):
        if model_admin.superusers_only:
            continue
        client = signed_in(me.staff)
        url = admin_url(model, "changelist")
        mine = rows_of(model_admin, me)
        changelist = client.get(url).context["cl"]
        for spec in changelist.filter_specs:
            where = f"{model._meta.label} filter {spec.title} for {me.workspace}"
            choices = list(spec.choices(changelist))
            for choice in choices:
                shown = str(choice["display"]).lower()
                assert other.word not in shown and other.workspace not in shown, where
            for choice in choices[1:]:
                assert listed(client.get(url + choice["query_string"])) <= mine, where
        if model_admin.workspace_path == "workspace":
            typed = client.get(url, {"workspace__id__exact": other.workspace})
            assert listed(typed) <= mine, f"{model._meta.label} filtered by hand"


@SIDES
def test_the_workspace_filter_lists_only_the_persons_workspaces(teams, side):
    me = teams[side]
    workspace_membership_add(user=me.staff, workspace_id=f"{me.workspace}-two")
    changelist = signed_in(me.staff).get(admin_url(Record, "changelist")).context["cl"]
    [workspace_filter] = [spec for spec in changelist.filter_specs if spec.title == "workspace"]
    shown = [str(choice["display"]) for choice in workspace_filter.choices(changelist)]
    assert shown == ["All", me.workspace, f"{me.workspace}-two"]


# --- autocomplete, raw-ID popups, foreign-key choices -----------------------------------------


@SIDES
def test_autocomplete_offers_only_own_rows(teams, side):
    me, other = teams[side], teams[1 - side]
    client = signed_in(me.staff)
    # the loop below has work
    assert "collection" in admin.site.get_model_admin(Record).autocomplete_fields
    for model, model_admin in REGISTERED:
        for field_name in model_admin.autocomplete_fields:
            target: Any = model._meta.get_field(field_name).related_model
            target_admin = admin.site.get_model_admin(target)
            for term in ("", other.word):
                response = client.get(
                    reverse("admin:autocomplete"),
                    {
                        "app_label": model._meta.app_label,
                        "model_name": model._meta.model_name,
                        "field_name": field_name,
                        "term": term,
                    },
                )
                assert response.status_code == 200
                found = {row["id"] for row in response.json()["results"]}
                assert found <= {str(pk) for pk in rows_of(target_admin, me)}, term
                assert other.word not in response.content.decode().lower()


@SIDES
def test_raw_id_popup_lists_only_own_records(teams, side):
    me = teams[side]
    response = signed_in(me.staff).get(
        admin_url(Record, "changelist"), {"_popup": "1", "_to_field": "id"}
    )
    assert listed(response) == rows_of(admin.site.get_model_admin(Record), me)


def _offered_choices(form_class: Any) -> dict[str, tuple[Any, set[Any]]]:
    offered = {}
    for name, field in form_class.base_fields.items():
        if isinstance(field, forms.ModelChoiceField) and field.queryset is not None:
            choices = field.queryset
            offered[name] = (choices.model, set(choices.values_list("pk", flat=True)))
    return offered


@SIDES
def test_every_foreign_key_choice_offers_no_row_of_the_other_team(teams, side, rf):
    me, other = teams[side], teams[1 - side]
    request = rf.get("/")
    request.user = me.staff
    checked = 0
    for model, model_admin in REGISTERED:
        if model_admin.superusers_only:
            continue
        own = model._default_manager.filter(pk__in=rows_of(model_admin, me)).first()
        form_classes = [model_admin.get_form(request), model_admin.get_form(request, own, True)]
        form_classes += [
            formset.form for formset, _ in model_admin.get_formsets_with_inlines(request, own)
        ]
        for form_class in form_classes:
            for name, (target, offered) in _offered_choices(form_class).items():
                theirs = rows_of(admin.site.get_model_admin(target), other)
                assert not offered & theirs, f"{model._meta.label}.{name}"
                checked += 1
    assert checked >= 4  # collection's workspace, record's collection, a link's ends


# --- actions and custom views ----------------------------------------------------------------


def test_actions_on_posted_ids_of_the_other_team_change_nothing(teams, rf):
    before = {team.workspace: snapshot(team) for team in teams}
    tried = 0
    for model, model_admin, me, other in every_model_both_ways(teams):
        request = rf.get("/")
        request.user = me.staff
        foreign = sorted(rows_of(model_admin, other), key=str)
        client = signed_in(me.staff)
        for action in model_admin.get_actions(request):
            client.post(
                admin_url(model, "changelist"),
                {"action": action, "_selected_action": foreign, "post": "yes", "index": 0},
            )
            tried += 1
    assert tried >= 8  # archive, link and mapping removal, verdicts, approve, revoke, deletes
    assert {team.workspace: snapshot(team) for team in teams} == before


@SIDES
def test_staff_cannot_approve_or_reject_another_teams_pending_write(teams, side):
    me, other = teams[side], teams[1 - side]
    client = signed_in(me.staff)
    approve = reverse("admin:workflow_preparedaction_approve", args=[other.pending.pk])
    reject = reverse("admin:workflow_preparedaction_reject", args=[other.pending.pk])
    assert client.post(approve).status_code == 404
    assert client.get(reject).status_code == 404
    assert client.post(reject, {"reason": "No."}).status_code == 404
    client.post(
        admin_url(PreparedAction, "changelist"),
        {"action": "approve_selected", "_selected_action": [other.pending.pk]},
    )
    other.pending.refresh_from_db()
    assert other.pending.state == ActionState.AWAITING_APPROVAL

    own = reverse("admin:workflow_preparedaction_approve", args=[me.pending.pk])
    assert client.post(own).status_code == 302
    me.pending.refresh_from_db()
    assert (me.pending.state, me.pending.decided_by) == (
        ActionState.COMMITTED,
        f"user:{me.staff.username}",
    )


@SIDES
def test_archive_and_clarification_review_views_refuse_another_teams_objects(teams, side):
    me, other = teams[side], teams[1 - side]
    client = signed_in(me.staff)
    archive = reverse("admin:records_record_archive", args=[other.kirat.pk])
    assert client.get(archive).status_code == 404
    assert client.post(archive, {"version": other.kirat.version, "reason": "x"}).status_code == 404
    assert Record.objects.get(pk=other.kirat.pk).archived_at is None
    review = reverse("admin:records_auditevent_review", args=[other.clarified.pk])
    assert client.get(review).status_code == 404
    assert client.post(review, {"state": "disputed"}).status_code == 404
    assert not ClarificationReview.objects.filter(state="disputed").exists()


# --- add forms -------------------------------------------------------------------------------


def test_add_forms_cannot_create_rows_in_another_workspace(teams):
    alpha, bravo = teams
    client = signed_in(alpha.staff)
    collections_before = set(Collection.objects.values_list("pk", flat=True))

    page = client.get(admin_url(Collection, "add"))
    form = page_post_data(page)
    form.update(
        name="sneaky",
        purpose="Track sneaky things",
        record_meaning="One sneaky thing",
        typical_fields="notes",
    )
    for workspace in (bravo.workspace, ""):
        refused = client.post(admin_url(Collection, "add"), {**form, "workspace": workspace})
        assert refused.status_code == 200 and refused.context["adminform"].form.errors
    assert set(Collection.objects.values_list("pk", flat=True)) == collections_before
    made = client.post(admin_url(Collection, "add"), {**form, "workspace": alpha.workspace})
    assert made.status_code == 302
    assert Collection.objects.get(name="sneaky").workspace_id == alpha.workspace

    records_before = Record.objects.count()
    refused = client.post(
        admin_url(Record, "add"), {"collection": bravo.people.pk, "title": "Sneaky", "data": "{}"}
    )
    assert refused.status_code == 200 and "collection" in refused.context["adminform"].form.errors
    assert Record.objects.count() == records_before

    links_before = Relationship.objects.count()
    for source, target in ((alpha.kirat, bravo.kirat), (bravo.abhishek, bravo.kirat)):
        refused = client.post(
            admin_url(Relationship, "add"),
            {"source": source.pk, "relationship_type": "knows", "target": target.pk},
        )
        assert refused.status_code == 200 and refused.context["adminform"].form.errors
        assert_nothing_of(bravo, refused)  # the raw-ID label does not name the typed-in row
    assert Relationship.objects.count() == links_before


# --- tokens, memberships, people -------------------------------------------------------------


def test_staff_manage_only_their_own_tokens(teams):
    alpha, bravo = teams
    client = signed_in(alpha.staff)
    add = client.get(admin_url(AccessToken, "add"))
    assert list(add.context["adminform"].form.fields) == ["name"]

    made = client.post(admin_url(AccessToken, "add"), {"name": "desk", "user": bravo.staff.pk})
    assert made.status_code == 200 and "raw_token" in made.context
    assert AccessToken.objects.get(name="desk").user == alpha.staff
    assert list(AccessToken.objects.filter(user=bravo.staff)) == [bravo.token]

    client.post(
        admin_url(AccessToken, "changelist"),
        {"action": "revoke_tokens", "_selected_action": [bravo.token.pk]},
    )
    bravo.token.refresh_from_db()
    assert bravo.token.revoked_at is None


def test_a_superuser_makes_tokens_for_anyone(teams, superuser):
    _, bravo = teams
    client = signed_in(superuser)
    assert "user" in client.get(admin_url(AccessToken, "add")).context["adminform"].form.fields
    client.post(admin_url(AccessToken, "add"), {"name": "for bravo", "user": bravo.staff.pk})
    assert AccessToken.objects.get(name="for bravo").user == bravo.staff


def test_token_hashes_are_never_shown_searched_or_filtered(teams, superuser, rf):
    alpha, bravo = teams
    token_admin = admin.site.get_model_admin(AccessToken)
    request = rf.get("/")
    request.user = superuser
    exposed = [
        *token_admin.get_list_display(request),
        *token_admin.get_search_fields(request),
        *[str(entry) for entry in token_admin.get_list_filter(request)],
        *token_admin.get_fields(request, bravo.token),
    ]
    assert "key_hash" not in exposed
    for user in (alpha.staff, superuser):
        client = signed_in(user)
        url = admin_url(AccessToken, "changelist")
        for lookup in ("key_hash__startswith", "key_hash", "user__anchor_tokens__key_hash"):
            response = client.get(url, {lookup: bravo.token.key_hash[:1]})
            assert response.status_code == 400, lookup
            assert bravo.token.prefix not in response.content.decode()
        assert listed(client.get(url, {"q": bravo.token.key_hash[:12]})) == set()
        page = client.get(admin_url(AccessToken, "change", alpha.token.pk))
        assert alpha.token.key_hash not in page.content.decode()
    memberships = signed_in(superuser).get(
        admin_url(WorkspaceMembership, "changelist"),
        {"user__anchor_tokens__key_hash__startswith": "a"},
    )
    assert memberships.status_code == 400


def test_memberships_and_people_are_for_superusers_only(teams, superuser):
    alpha, bravo = teams
    client = signed_in(alpha.staff)
    assert client.get(admin_url(WorkspaceMembership, "add")).status_code == 403
    joined = client.post(
        admin_url(WorkspaceMembership, "add"),
        {"user": alpha.staff.pk, "workspace": bravo.workspace},
    )
    assert joined.status_code == 403
    assert not WorkspaceMembership.objects.filter(
        user=alpha.staff, workspace_id=bravo.workspace
    ).exists()

    user_model = get_user_model()
    assert client.get(admin_url(user_model, "changelist")).status_code == 403
    promoted = client.post(
        admin_url(user_model, "change", alpha.staff.pk),
        {"username": alpha.staff.username, "is_staff": "on", "is_superuser": "on"},
    )
    assert promoted.status_code in (403, 404)
    assert not user_model.objects.get(pk=alpha.staff.pk).is_superuser
    index = client.get(reverse("admin:index")).content.decode()
    assert "Workspace memberships" not in index and "Users" not in index

    everyone = listed(signed_in(superuser).get(admin_url(WorkspaceMembership, "changelist")))
    assert everyone == set(WorkspaceMembership.objects.values_list("pk", flat=True))


@SIDES
def test_the_dashboard_and_the_read_first_record_page_show_nothing_of_the_other_team(teams, side):
    me, other = teams[side], teams[1 - side]
    client = signed_in(me.staff)
    dashboard = client.get(reverse("admin:index"))
    assert dashboard.status_code == 200
    assert "Writes awaiting your approval (1)" in dashboard.content.decode()  # own only
    assert_nothing_of(other, dashboard, "dashboard")
    for query in ({}, {"edit": "1"}):
        foreign = reverse("admin:records_record_change", args=[other.kirat.pk])
        assert client.get(foreign, query).status_code == 404
    own = client.get(reverse("admin:records_record_change", args=[me.kirat.pk]))
    assert own.status_code == 200
    assert_nothing_of(other, own, "own record page")
