"""A person's verdict on an agent-reported clarification shows in context and history."""

from __future__ import annotations

from records import selectors, services
from records.models import AuditEvent, ClarificationReview
from records.services import WriteContext
from records.trust import clarification_review_create


def test_verdict_shows_in_context_and_history(hiring):
    agent = WriteContext(
        workspace_id="local",
        actor_id="local-agent",
        decision_reason="update",
        clarification="User: Kirat moved to Pune",
    )
    services.record_update(
        ctx=agent, record_id=hiring.kirat.pk, changes={"city": "Pune"}, expected_version=1
    )
    event = AuditEvent.objects.get(kind="record.updated")
    context = selectors.record_context(workspace_id="local", record_id=hiring.kirat.pk)
    updated = next(e for e in context["events"] if e["kind"] == "record.updated")
    assert updated["clarification_review"] == {"state": "unreviewed"}
    person = WriteContext(workspace_id="local", actor_id="user:ana")
    clarification_review_create(
        ctx=person, event_id=event.pk, state=ClarificationReview.DISPUTED, note="He moved to Delhi"
    )
    history = selectors.record_history(workspace_id="local", record_id=hiring.kirat.pk)
    updated = next(e for e in history["events"] if e["kind"] == "record.updated")
    assert updated["clarification_review"]["state"] == "disputed"
    assert updated["clarification_review"]["reviewer_id"] == "user:ana"
    created = next(e for e in history["events"] if e["kind"] == "record.created")
    assert "clarification_review" not in created
