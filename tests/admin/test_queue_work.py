"""The approval queue as a reviewer works it: title search, filter by agent and operation, bulk
reject with one reason, the next waiting write after each decision, and what the user answered
in the client shown with its source wherever the write is judged or remembered."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse

from records.models import AuditEvent, Record
from tests.admin.queue_helpers import held_after_asking
from tests.admin.review_helpers import gate, held_update
from workflow.models import ActionState, PreparedAction

QUEUE = "admin:workflow_preparedaction_changelist"


@pytest.fixture
def held(hiring, ctx) -> list[PreparedAction]:
    gate(ctx, hiring.people)
    return [
        held_update(hiring.kirat, {"stage": "offer"}),
        held_update(hiring.abhishek, {"stage": "onsite"}),
        held_update(hiring.rahul_backend, {"stage": "screen"}, clarification="The backend one."),
    ]


def listed(client, **query) -> str:
    return client.get(reverse(QUEUE), query).content.decode()


def test_search_finds_writes_by_the_title_they_name(admin_client_as_maya, held):
    kirat, abhishek, _ = held
    page = listed(admin_client_as_maya, q="kira")
    assert f"{kirat.pk}/change/" in page and f"{abhishek.pk}/change/" not in page
    assert f"{abhishek.pk}/change/" not in listed(admin_client_as_maya, q="Nobody-by-this-name")


def test_filter_by_agent_words_it_as_everywhere_and_keeps_apart_who_it_acts_for(
    admin_client_as_maya, held
):
    kirat, abhishek, rahul = held
    PreparedAction.objects.filter(pk=kirat.pk).update(
        actor_id="user:alice", credential="oauth:7", credential_name="Claude Code"
    )
    page = listed(admin_client_as_maya)
    assert "agent (Claude Code) for user:alice" in page
    page = listed(admin_client_as_maya, agent="user:alice|oauth:7")
    assert f"{kirat.pk}/change/" in page and f"{abhishek.pk}/change/" not in page
    page = listed(admin_client_as_maya, agent="local-agent|")
    assert f"{kirat.pk}/change/" not in page and f"{rahul.pk}/change/" in page
    assert f"{kirat.pk}/change/" not in listed(admin_client_as_maya, operation="create_record")


def test_bulk_reject_asks_one_reason_and_rejects_each(admin_client_as_maya, held):
    kirat, abhishek, rahul = held
    chosen = {"action": "reject_selected", "_selected_action": [kirat.pk, abhishek.pk]}
    asked = admin_client_as_maya.post(reverse(QUEUE), chosen)
    assert asked.status_code == 200 and "Reject 2 writes" in asked.content.decode()
    assert PreparedAction.objects.filter(state=ActionState.REJECTED).count() == 0
    empty = admin_client_as_maya.post(reverse(QUEUE), {**chosen, "reason": ""})
    assert "This field is required" in empty.content.decode()
    done = admin_client_as_maya.post(reverse(QUEUE), {**chosen, "reason": "Not this week."})
    assert done.status_code == 302
    states = dict(PreparedAction.objects.values_list("pk", "state"))
    assert states[kirat.pk] == states[abhishek.pk] == ActionState.REJECTED
    assert states[rahul.pk] == ActionState.AWAITING_APPROVAL
    assert PreparedAction.objects.get(pk=kirat.pk).decision_note == "Not this week."


def test_a_decision_opens_the_next_waiting_write_of_the_same_list(admin_client_as_maya, held):
    kirat, abhishek, rahul = held
    filters = "q=a&o=1"  # titles holding "a" (all three), oldest first
    approve = reverse("admin:workflow_preparedaction_approve", args=[kirat.pk])
    # The filters ride in the query string, as the change page's form sends them.
    done = admin_client_as_maya.post(f"{approve}?_changelist_filters=q%3Da%26o%3D1")
    target = urlsplit(done["Location"])
    assert target.path == reverse("admin:workflow_preparedaction_change", args=[abhishek.pk])
    assert parse_qs(target.query)["_changelist_filters"] == [filters]
    reject = reverse("admin:workflow_preparedaction_reject", args=[abhishek.pk])
    done = admin_client_as_maya.post(
        f"{reject}?_changelist_filters=q%3Da%26o%3D1", {"reason": "No."}
    )
    assert urlsplit(done["Location"]).path == reverse(
        "admin:workflow_preparedaction_change", args=[rahul.pk]
    )
    page = admin_client_as_maya.get(done["Location"]).content.decode()
    back = 'id="back-to-list"'
    assert f'href="{reverse(QUEUE)}?q=a&amp;o=1" {back}' in page  # the breadcrumb keeps them
    last = reverse("admin:workflow_preparedaction_approve", args=[rahul.pk])
    done = admin_client_as_maya.post(f"{last}?_changelist_filters=q%3Da%26o%3D1")
    assert urlsplit(done["Location"]).path == reverse(
        "admin:workflow_preparedaction_change", args=[rahul.pk]
    )


def test_the_users_answer_in_the_client_shows_with_its_source_where_the_write_is_judged(
    admin_client_as_maya, hiring, ctx
):
    gate(ctx, hiring.people)
    action = held_after_asking(hiring.rahul_backend, {"stage": "screen"})
    badge = 'class="anchor-badge anchor-user">user-confirmed in the client'
    change = reverse("admin:workflow_preparedaction_change", args=[action.pk])
    waiting = admin_client_as_maya.get(change).content.decode()
    assert badge in waiting and "dialog-client 7.1" in waiting
    assert "Which one do you mean by “Rahul”?" in waiting
    assert "agent-reported" not in waiting
    admin_client_as_maya.post(reverse("admin:workflow_preparedaction_approve", args=[action.pk]))
    applied = admin_client_as_maya.get(change).content.decode()
    assert badge in applied and "Applied" in applied
    record = Record.objects.get(pk=hiring.rahul_backend.pk)
    history = admin_client_as_maya.get(
        reverse("admin:records_record_change", args=[record.pk])
    ).content.decode()
    assert badge in history and "dialog-client 7.1" in history
    event = AuditEvent.objects.get(action_id=action.pk, kind="record.updated")
    audit = admin_client_as_maya.get(
        reverse("admin:records_auditevent_change", args=[event.pk])
    ).content.decode()
    assert badge in audit


def test_record_history_names_nested_changes_by_path(admin_client_as_maya, hiring, ctx):
    from records import services

    record = Record.objects.get(pk=hiring.kirat.pk)
    services.record_update(
        ctx=ctx,
        record_id=record.pk,
        changes={"address": {"city": "Pune", "pin": "411001"}},
        expected_version=record.version,
    )
    services.record_update(
        ctx=ctx,
        record_id=record.pk,
        changes={"address": {"city": "Delhi", "pin": "411001"}},
        expected_version=record.version + 1,
    )
    page = admin_client_as_maya.get(
        reverse("admin:records_record_change", args=[record.pk])
    ).content.decode()
    assert "data.address.city" in page and "Delhi" in page


def test_the_queue_heads_the_sidebar_and_the_index(admin_client_as_maya, held):
    page = admin_client_as_maya.get(reverse("admin:records_record_changelist")).content.decode()
    sidebar = page[page.index('id="nav-sidebar"') :]
    queue = reverse(QUEUE)
    assert sidebar.index(f'href="{queue}"') < sidebar.index(
        reverse("admin:records_record_changelist")
    )
    assert sidebar.index(f'href="{queue}"') < sidebar.index(
        reverse("admin:workflow_agenda_changelist")
    )
