"""Outcomes of a closed (or paused) agenda flow back to its bound records, guarded.

Each resolved item's record is reviewed (resolve_record by ID), then updated through
prepare_write/commit_write with the version bound at start as expected_version, so the write is
validated, versioned and audited like any agent write. A record that changed since it was bound
(new version, other title, archived) is reported and left alone, never overwritten.
"""

from __future__ import annotations

from typing import Any

from records import validation as v
from records.errors import AnchorError, invalid
from records.models import Record
from workflow.actions import commit_write, prepare_write
from workflow.agendas.errors import order_error
from workflow.agendas.guard import Frame, mutate
from workflow.agendas.layers_create import title_fingerprint
from workflow.agendas.presentation import state_view
from workflow.models.agendas import Agenda, AgendaItem, AgendaLayer
from workflow.resolution import RESOLVED, resolve_record
from workflow.scope import Scope

OUTCOME_KEY = "agenda_outcome"
SYNCED = "synced"
CHANGED = "changed"
ARCHIVED = "archived"
AWAITING = "awaiting_approval"
# Past this many bound items, a sync reply lists only the items that need a look.
MAX_LISTED_RESULTS = 30
REFUSED = "refused"
NOT_RESOLVED = "not_resolved"
CONFLICTS = (CHANGED, ARCHIVED, REFUSED)


def _status_values(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid("status_values", "must map agenda states to status values.")
    allowed = set(AgendaItem.RESOLVED)
    result = {}
    for state, status in value.items():
        if state not in allowed:
            raise invalid("status_values", f"{state!r} is not one of {sorted(allowed)}.")
        result[state] = v.name(status, f"status_values[{state}]")
    return result


def _changes(frame: Frame, item: AgendaItem, statuses: dict[str, str]) -> dict[str, Any]:
    outcome: dict[str, Any] = {
        "agenda_id": frame.agenda.pk,
        "agenda": frame.agenda.title,
        "item": item.path,
        "state": item.state,
        "at": frame.now.isoformat(),
    }
    if item.conclusion:
        outcome["conclusion"] = item.conclusion
    if item.reason:
        outcome["reason"] = item.reason
    changes: dict[str, Any] = {OUTCOME_KEY: outcome}
    if item.state in statuses:
        changes["status"] = statuses[item.state]
    return changes


def _committed(item: AgendaItem, outcome: dict[str, Any], report: dict[str, Any]) -> None:
    report["action_id"] = outcome["action_id"]
    if outcome["status"] == "committed":
        item.record_version = outcome["result"]["record"]["version"]
        item.sync_status = SYNCED
        report["record_version"] = item.record_version
    elif outcome["status"] == "awaiting_approval":
        item.sync_status = AWAITING
        report["message"] = "The collection needs a person's approval; sync again later."
    else:
        item.sync_status = REFUSED
        report["message"] = outcome.get("message", "rejected")


def _outdated(item: AgendaItem) -> bool:
    """The record's stored outcome is not the item's current one (revised after it was sent)."""
    stored = Record.objects.get(pk=item.record_id).data.get(OUTCOME_KEY) or {}
    current = {"state": item.state, "conclusion": item.conclusion, "reason": item.reason}
    return any(stored.get(key, "") != value for key, value in current.items())


def _sync_item(frame: Frame, item: AgendaItem, statuses: dict[str, str]) -> dict[str, Any]:
    report: dict[str, Any] = {"item": item.path, "record_id": item.record_id, "state": item.state}
    scope = frame.scope
    if item.sync_status == AWAITING and item.sync_detail and item.sync_detail.get("action_id"):
        # Read the person's decision; a held write that went stale (the record changed while
        # it waited) is this item's refusal, not the whole sync's.
        try:
            _committed(item, commit_write(scope, action_id=item.sync_detail["action_id"]), report)
        except AnchorError as exc:
            item.sync_status = REFUSED
            report["message"] = f"{exc.code}: {exc.message}"
            return report
        if item.sync_status != SYNCED or not _outdated(item):
            return report
        # Approved, but the item's outcome was revised meanwhile: write the newer one too.
    record = Record.objects.get(workspace_id=scope.workspace_id, pk=item.record_id)
    if record.archived_at is not None:
        item.sync_status = ARCHIVED
        report["message"] = "The record was archived since the agenda started; left alone."
        return report
    title_changed = title_fingerprint(record.title) != item.record_fingerprint
    if title_changed or record.version != item.record_version:
        item.sync_status = CHANGED
        report.update(
            {
                "bound_version": item.record_version,
                "current_version": record.version,
                "title_changed": title_changed,
                "current_title": record.title,
                "message": "The record changed since the agenda bound it; nothing was "
                "written. Read it (get_record_context) and decide with the user whether to "
                "apply this outcome by hand.",
            }
        )
        return report
    review = resolve_record(scope, query=record.pk, collection_id=record.collection_id)
    if review["status"] != RESOLVED:
        item.sync_status = REFUSED
        report["message"] = f"Review of the record returned {review['status']}; left alone."
        return report
    try:
        prepared = prepare_write(
            scope,
            operation="update_record",
            arguments={
                "record_id": record.pk,
                "changes": _changes(frame, item, statuses),
                "expected_version": item.record_version,
            },
            review_ids=[review["resolution_id"]],
            decision_reason=f"Outcome of item {item.path} ({item.state}) of agenda "
            f"{frame.agenda.title!r}.",
        )
        _committed(item, commit_write(scope, action_id=prepared["action_id"]), report)
    except AnchorError as exc:
        item.sync_status = REFUSED
        report["message"] = f"{exc.code}: {exc.message}"
    return report


def sync_records(
    scope: Scope, *, agenda_id: Any, cursor_token: Any, status_values: Any = None
) -> dict[str, Any]:
    statuses = _status_values(status_values)
    results: list[dict[str, Any]] = []

    def apply(frame: Frame) -> dict[str, Any]:
        agenda = frame.agenda
        if agenda.sync_state == Agenda.SYNC_NOT_BOUND:
            raise order_error(
                "This agenda has no bound records (start one with record_ids to bind them).",
                current=state_view(frame.position),
            )
        items = (
            AgendaItem.objects.filter(layer__agenda=agenda, layer__kind=AgendaLayer.ROOT)
            .exclude(record=None)
            .select_related("layer")
            .order_by("number")
        )
        for item in items:
            if item.sync_status in (SYNCED, *CONFLICTS):
                earlier = {"item": item.path, "record_id": item.record_id}
                results.append({**earlier, "status": item.sync_status, "earlier_sync": True})
                continue
            if item.state not in AgendaItem.RESOLVED:
                results.append(
                    {"item": item.path, "record_id": item.record_id, "status": NOT_RESOLVED}
                )
                continue
            report = _sync_item(frame, item, statuses)
            report["status"] = item.sync_status
            item.sync_detail = {k: v for k, v in report.items() if k != "status"}
            item.save(update_fields=["record_version", "sync_status", "sync_detail"])
            results.append(report)
        statuses_seen = {r["status"] for r in results}
        if statuses_seen & set(CONFLICTS):
            agenda.sync_state = Agenda.SYNC_CONFLICTS
        elif AWAITING in statuses_seen or (NOT_RESOLVED in statuses_seen and not agenda.is_closed):
            agenda.sync_state = Agenda.SYNC_PENDING
        else:
            agenda.sync_state = Agenda.SYNC_DONE
        return {"results": results, "status_values": statuses}

    position = mutate(
        scope,
        agenda_id=agenda_id,
        cursor_token=cursor_token,
        kind="records_synced",
        apply=apply,
        statuses=(Agenda.PAUSED, *Agenda.CLOSED),
        needs_presentation=False,
    )
    counts: dict[str, int] = {}
    for report in results:
        counts[report["status"]] = counts.get(report["status"], 0) + 1
    sync: dict[str, Any] = {"counts": counts, "results": results}
    if len(results) > MAX_LISTED_RESULTS:
        # A long agenda's reply stays small: plain successes are counted, not listed; what
        # needs a person or a look (awaiting, refused, conflicts) is listed first.
        needs_look = [r for r in results if r["status"] not in (SYNCED, NOT_RESOLVED)]
        sync["results"] = needs_look[:MAX_LISTED_RESULTS]
        sync["results_omitted"] = len(results) - len(sync["results"])
        sync["results_note"] = (
            "Synced and unresolved items are counted above, not listed; agenda_view shows "
            "each item's sync status."
        )
    return {**state_view(position), "sync": sync}
