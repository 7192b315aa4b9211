"""Collections created and edited in the admin go through the services, audited by the user."""

from __future__ import annotations

from django.urls import reverse

from records.models import AuditEvent, Collection
from tests.admin.forms import page_post_data

USER = "user:maya"


def test_create_collection_through_the_service(admin_client_as_maya, ctx):
    response = admin_client_as_maya.post(
        reverse("admin:records_collection_add"),
        {
            "workspace": "local",
            "name": "Expenses",
            "purpose": "Money spent on hiring trips",
            "record_meaning": "One expense",
            "typical_fields": "amount\ncategory",
            "relationship_guidance": "",
            "requires_approval": "on",
            "change_reason": "Tracking travel",
            "aliases-TOTAL_FORMS": "1",
            "aliases-INITIAL_FORMS": "0",
            "aliases-0-alias": "costs",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    expenses = Collection.objects.get(name="Expenses")
    assert expenses.typical_fields == ["amount", "category"]
    assert expenses.requires_approval
    assert list(expenses.aliases.values_list("alias", flat=True)) == ["costs"]
    kinds = AuditEvent.objects.filter(collection_id=expenses.pk, actor_id=USER).values_list(
        "kind", flat=True
    )
    assert sorted(kinds) == [
        "collection.alias_added",
        "collection.created",
        "collection.policy_changed",
    ]


def test_duplicate_name_is_shown_on_the_form(admin_client_as_maya, hiring):
    response = admin_client_as_maya.post(
        reverse("admin:records_collection_add"),
        {
            "name": "People",
            "purpose": "x",
            "record_meaning": "y",
            "typical_fields": "a",
            "aliases-TOTAL_FORMS": "0",
            "aliases-INITIAL_FORMS": "0",
        },
        follow=True,
    )
    assert "already exists" in response.content.decode()
    assert Collection.objects.filter(normalized_name="people").count() == 1


def test_edit_collection_and_stale_edit_refused(admin_client_as_maya, hiring, ctx):
    from records import services

    url = reverse("admin:records_collection_change", args=[hiring.people.pk])
    form = page_post_data(admin_client_as_maya.get(url))
    form["purpose"] = "Candidates and interviewers"
    assert admin_client_as_maya.post(url, form).status_code == 302
    hiring.people.refresh_from_db()
    assert hiring.people.purpose == "Candidates and interviewers"
    assert AuditEvent.objects.filter(kind="collection.updated", actor_id=USER).count() == 1

    form = page_post_data(admin_client_as_maya.get(url))
    services.collection_alias_add(ctx=ctx, collection_id=hiring.people.pk, alias="candidates")
    form["purpose"] = "Something else"
    response = admin_client_as_maya.post(url, form)
    assert response.status_code == 200
    assert "changed since you opened it" in response.content.decode()
    hiring.people.refresh_from_db()
    assert hiring.people.purpose == "Candidates and interviewers"
