"""A prepared action's state is an ActionState, stored as the same strings it always was."""

from __future__ import annotations

from django.db import connection

from tests.workflow.helpers import ok
from workflow.admin.changes import BADGES
from workflow.models import OPEN_STATES, ActionState, PreparedAction


def test_the_stored_values_are_the_ones_existing_rows_hold():
    """Renaming a value would strand every stored action: it needs a data migration."""
    assert ActionState.values == ["prepared", "committed", "awaiting_approval", "rejected", "stale"]
    assert set(OPEN_STATES) == {ActionState.PREPARED, ActionState.AWAITING_APPROVAL}
    field = PreparedAction._meta.get_field("state")
    assert field.choices == ActionState.choices and field.default == ActionState.PREPARED


def test_a_prepared_then_committed_action_stores_plain_strings(hiring):
    review = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    prepared = ok(
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": {
                "record_id": hiring.kirat.pk,
                "changes": {"stage": "offer"},
                "expected_version": 1,
            },
            "review_ids": [review["resolution_id"]],
            "decision_reason": "The panel agreed.",
        },
    )

    def stored_state() -> str:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT state FROM workflow_preparedaction WHERE id = %s", [prepared["action_id"]]
            )
            return cursor.fetchone()[0]

    assert stored_state() == "prepared"
    assert ok("commit_write", {"action_id": prepared["action_id"]})["status"] == "committed"
    assert stored_state() == "committed"
    assert PreparedAction.objects.filter(state=ActionState.COMMITTED).count() == 1


def test_every_state_has_a_badge_in_the_admin():
    assert set(BADGES) == set(ActionState)
