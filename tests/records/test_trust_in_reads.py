"""A person's verdict on an agent-reported clarification shows in context and history."""

from __future__ import annotations

from datetime import timedelta

from records import selectors, services
from records.models import AuditEvent, ClarificationReview
from records.services import WriteContext, clarification_review_create


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


def test_history_as_of_shows_the_record_then_and_events_up_to_then(hiring, ctx):
    import pytest
    from django.utils import timezone

    from records.errors import AnchorError

    before_any = hiring.kirat.created_at - timedelta(seconds=1)
    services.record_update(
        ctx=ctx, record_id=hiring.kirat.pk, changes={"city": "Pune"}, expected_version=1
    )
    between = timezone.now()
    services.record_rename(
        ctx=ctx, record_id=hiring.kirat.pk, title="Kirat Singh", expected_version=2
    )
    then = selectors.record_history(
        workspace_id="local", record_id=hiring.kirat.pk, as_of=between.isoformat()
    )
    assert then["record_as_of"]["title"] == "Kirat"
    assert then["record_as_of"]["data"]["city"] == "Pune"
    assert [e["kind"] for e in then["events"]][:2] == ["record.updated", "record.created"]
    assert all(e["kind"] != "record.renamed" for e in then["events"])
    with pytest.raises(AnchorError) as early:
        selectors.record_history(
            workspace_id="local", record_id=hiring.kirat.pk, as_of=before_any.isoformat()
        )
    assert early.value.code == "NOT_FOUND"
