"""A person confirms or disputes an agent-reported clarification; the verdict is kept beside
the append-only event, audited, and readable through records.selectors."""

from __future__ import annotations

import pytest
from django.urls import reverse

from records import services
from records.errors import AnchorError
from records.models import AuditEvent
from records.selectors import clarification_reviews_for
from records.services import WriteContext, clarification_review_create


@pytest.fixture
def clarified(hiring, ctx) -> AuditEvent:
    agent = WriteContext(
        workspace_id=ctx.workspace_id,
        actor_id="local-agent",
        decision_reason="Feedback for Kriat",
        clarification="User said 'Kriat' is Kirat.",
    )
    services.record_update(
        ctx=agent, record_id=hiring.kirat.pk, changes={"a": 1}, expected_version=1
    )
    return AuditEvent.objects.exclude(agent_reported_clarification="").get()


def test_review_page_records_a_verdict_shown_on_the_record(admin_client_as_maya, clarified):
    url = reverse("admin:records_auditevent_review", args=[clarified.pk])
    page = admin_client_as_maya.get(url)
    assert "agent-reported clarification" in page.content.decode()

    done = admin_client_as_maya.post(url, {"state": "disputed", "note": "He meant Karan"})

    assert done.status_code == 302
    verdict = clarification_reviews_for([clarified.pk])[clarified.pk]
    assert (verdict["state"], verdict["reviewer_id"], verdict["note"]) == (
        "disputed",
        "user:maya",
        "He meant Karan",
    )
    audit = AuditEvent.objects.get(kind="clarification.disputed")
    assert audit.record_id == clarified.record_id and audit.actor_id == "user:maya"
    record_page = admin_client_as_maya.get(done["Location"]).content.decode()
    assert "disputed" in record_page and "He meant Karan" in record_page


def test_latest_verdict_stands_and_reviews_are_counted(ctx, clarified):
    person = WriteContext(workspace_id="local", actor_id="user:maya")
    clarification_review_create(ctx=person, event_id=clarified.pk, state="disputed")
    clarification_review_create(ctx=person, event_id=clarified.pk, state="confirmed")
    verdict = clarification_reviews_for([clarified.pk, 999999])
    assert list(verdict) == [clarified.pk]
    assert (verdict[clarified.pk]["state"], verdict[clarified.pk]["review_count"]) == (
        "confirmed",
        2,
    )
    assert clarification_reviews_for([clarified.pk], workspace_id="elsewhere") == {}


def test_a_verdicts_event_keeps_everything_its_context_says(clarified):
    """The verdict is audited like every write: its own reason, clarification, evidence, action
    and item index are kept, not only who decided and why."""
    person = WriteContext(
        workspace_id="local",
        actor_id="user:maya",
        decision_reason="Checked with the hiring lead.",
        clarification="The lead said Kriat is Kirat.",
        review_evidence=[{"seen": "interview notes"}],
        action_id="act-verdict-1",
        item_index=2,
    )
    clarification_review_create(ctx=person, event_id=clarified.pk, state="confirmed")
    event = AuditEvent.objects.get(kind="clarification.confirmed")
    assert {
        "decision_reason": event.decision_reason,
        "agent_reported_clarification": event.agent_reported_clarification,
        "review_evidence": event.review_evidence,
        "action_id": event.action_id,
        "item_index": event.item_index,
        "entity": (event.entity_type, event.entity_id, event.record_id),
        "before": event.before,
    } == {
        "decision_reason": "Checked with the hiring lead.",
        "agent_reported_clarification": "The lead said Kriat is Kirat.",
        "review_evidence": [{"seen": "interview notes"}],
        "action_id": "act-verdict-1",
        "item_index": 2,
        "entity": ("audit_event", str(clarified.pk), clarified.record_id),
        "before": None,
    }, "the verdict's audit event dropped part of its write context"


def test_events_without_a_clarification_cannot_be_reviewed(hiring):
    plain = AuditEvent.objects.filter(agent_reported_clarification="").first()
    assert plain is not None
    with pytest.raises(AnchorError, match="no agent-reported clarification"):
        clarification_review_create(
            ctx=WriteContext(workspace_id="local", actor_id="user:maya"),
            event_id=plain.pk,
            state="confirmed",
        )


def test_bulk_actions_mark_clarifications(admin_client_as_maya, clarified):
    response = admin_client_as_maya.post(
        reverse("admin:records_auditevent_changelist"),
        {"action": "confirm_clarifications", "_selected_action": [clarified.pk]},
    )
    assert response.status_code == 302
    assert clarification_reviews_for([clarified.pk])[clarified.pk]["state"] == "confirmed"


def test_audit_shows_user_confirmed_in_the_client_apart_from_agent_reported(
    admin_client_as_maya, hiring, ctx, clarified
):
    confirmation = {
        "label": "user-confirmed in the client",
        "client": {"name": "dialog-client", "version": "7.1"},
        "at": "2026-12-02T04:50:00+00:00",
        "question": "Which one do you mean by “Kriat”?",
        "answer": "Kirat (people)",
        "record_id": hiring.kirat.pk,
        "different": False,
    }
    agent = WriteContext(
        workspace_id=ctx.workspace_id,
        actor_id="local-agent",
        decision_reason="Stage for Kriat",
        review_evidence=[{"review_id": "r1", "user_confirmed_in_client": confirmation}],
    )
    services.record_update(
        ctx=agent, record_id=hiring.kirat.pk, changes={"b": 2}, expected_version=2
    )
    confirmed = AuditEvent.objects.filter(decision_reason="Stage for Kriat").get()

    def page(event: AuditEvent) -> str:
        url = reverse("admin:records_auditevent_change", args=[event.pk])
        return admin_client_as_maya.get(url).content.decode()

    badge = '<span class="anchor-badge anchor-user">user-confirmed in the client</span>'
    shown = page(confirmed)
    assert badge in shown
    assert "dialog-client 7.1" in shown and "Kirat (people)" in shown
    assert "Which one do you mean by “Kriat”?" in shown
    agent_badge = 'class="anchor-badge anchor-agent">agent-reported'
    assert agent_badge not in shown
    reported = page(clarified)
    assert agent_badge in reported and badge not in reported
    listing = admin_client_as_maya.get(reverse("admin:records_auditevent_changelist"))
    assert badge in listing.content.decode()
