"""Self mappings: set once by an agent, removed only by a person, audited both ways."""

from __future__ import annotations

import pytest

from records import services
from records.errors import AnchorError
from records.models import AuditEvent, SelfMapping


def test_person_removes_a_mapping_and_the_agent_may_set_a_new_one(hiring, ctx):
    services.self_mapping_set(ctx=ctx, record_id=hiring.kirat.pk, expected_version=1)
    with pytest.raises(AnchorError) as refused:
        services.self_mapping_set(ctx=ctx, record_id=hiring.abhishek.pk, expected_version=1)
    assert refused.value.code == "NEEDS_CLARIFICATION"
    person = services.WriteContext(
        workspace_id="local", actor_id="user:ana", decision_reason="agent mapped the wrong person"
    )
    services.self_mapping_remove(ctx=person, actor_id=ctx.actor_id)
    assert not SelfMapping.objects.exists()
    event = AuditEvent.objects.get(kind="record.self_unmapped")
    assert event.before is not None
    assert event.actor_id == "user:ana" and event.before["record_id"] == hiring.kirat.pk
    services.self_mapping_set(ctx=ctx, record_id=hiring.abhishek.pk, expected_version=1)
    with pytest.raises(AnchorError) as missing:
        services.self_mapping_remove(ctx=person, actor_id="nobody")
    assert missing.value.code == "NOT_FOUND"
