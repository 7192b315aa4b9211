"""Outcomes of a closed (or paused) agenda flow back to its bound records, guarded.

A record changed since it was bound (version, title, archived) is reported and left alone. The
others' updates go in one prepared batch citing a review of each record and the bound version,
committed like any agent write in the sync's transaction; where a collection needs approval,
each outcome is its own held write, whose decision a later sync reads.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

from django.db import connection

from records import approval
from records import validation as v
from records.errors import AnchorError, invalid
from records.models import Record
from records.names import normalize_name
from workflow.actions import commit_batch_write, commit_write, prepare_tool_batch, prepare_write
from workflow.agendas.guard import Frame, mutate, order_error
from workflow.agendas.presentation import state_view, with_optional
from workflow.models.agendas import Agenda, AgendaItem, AgendaLayer
from workflow.resolution import RESOLVED, resolve_by_ids, resolve_record
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
# Kept in an item's sync_detail when its write was one of a batch: its place in the batch.
BATCH_INDEX = "batch_index"


def title_fingerprint(title: str) -> str:
    """Identity of a bound record's meaning: its normalised title, hashed."""
    return hashlib.sha256(normalize_name(title).encode()).hexdigest()[:32]


def _status_values(value: Any) -> dict[str, str]:
    value = value or {}
    for state in value:
        if state not in AgendaItem.RESOLVED:
            raise invalid(
                "status_values", f"{state!r} is not one of {sorted(AgendaItem.RESOLVED)}."
            )
    return {state: v.name(status, f"status_values[{state}]") for state, status in value.items()}


def _write(frame: Frame, item: AgendaItem, statuses: dict[str, str]) -> dict[str, Any]:
    """The update_record write of the item's outcome, as prepare_write takes it."""
    outcome = with_optional(
        {
            "agenda_id": frame.agenda.pk,
            "agenda": frame.agenda.title,
            "item": item.path,
            "state": item.state,
            "at": frame.now.isoformat(),
        },
        {"conclusion": item.conclusion, "reason": item.reason},
    )
    changes: dict[str, Any] = {OUTCOME_KEY: outcome}
    if item.state in statuses:
        changes["status"] = statuses[item.state]
    return {
        "operation": "update_record",
        "arguments": {
            "record_id": item.record_id,
            "changes": changes,
            "expected_version": item.record_version,
        },
        "decision_reason": f"Outcome of item {item.path} ({item.state}) of agenda "
        f"{frame.agenda.title!r}.",
    }


def _refused(item: AgendaItem, report: dict[str, Any], message: str) -> None:
    item.sync_status = REFUSED
    report["message"] = message


def _committed(
    item: AgendaItem, outcome: dict[str, Any], report: dict[str, Any], index: int | None = None
) -> None:
    """What the item's write came to; `index` is its place in a batch's outcome."""
    report["action_id"] = outcome["action_id"]
    report[BATCH_INDEX] = index
    if outcome["status"] == "committed":
        result = outcome["result"] if index is None else outcome["result"]["items"][index]
        item.record_version = result["record"]["version"]
        item.sync_status = SYNCED
        report["record_version"] = item.record_version
    elif outcome["status"] == "awaiting_approval":
        item.sync_status = AWAITING
        report["message"] = "The collection needs a person's approval; sync again later."
    else:
        _refused(item, report, outcome.get("message", "rejected"))


def _bound_id(item: AgendaItem) -> str:
    assert item.record_id is not None  # only bound items are synced
    return item.record_id


def _read_decision(
    scope: Scope, item: AgendaItem, report: dict[str, Any], decisions: dict[str, Any]
) -> bool:
    """Read the decision on the item's held write (a batch's once); True if the outcome must be
    written again (approved, but revised meanwhile). A stale one is this item's refusal."""
    detail = item.sync_detail or {}
    action_id, index = detail["action_id"], detail.get(BATCH_INDEX)
    if action_id not in decisions:
        commit = commit_write if index is None else commit_batch_write
        try:
            decisions[action_id] = commit(scope, action_id=action_id)
        except AnchorError as exc:
            decisions[action_id] = exc
    outcome = decisions[action_id]
    if isinstance(outcome, AnchorError):
        _refused(item, report, f"{outcome.code}: {outcome.message}")
        return False
    _committed(item, outcome, report, index)
    if item.sync_status != SYNCED:
        return False
    # The record's stored outcome is not the item's current one: revised after it was sent.
    stored = Record.objects.get(pk=item.record_id).data.get(OUTCOME_KEY) or {}
    current = {"state": item.state, "conclusion": item.conclusion, "reason": item.reason}
    return any(stored.get(key, "") != value for key, value in current.items())


def _unchanged(item: AgendaItem, record: Record, report: dict[str, Any]) -> bool:
    """Whether the record is as the agenda bound it; if not, the item says why."""
    if record.archived_at is not None:
        item.sync_status = ARCHIVED
        report["message"] = "The record was archived since the agenda started; left alone."
        return False
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
        return False
    return True


def _write_item(
    frame: Frame, item: AgendaItem, record: Record, statuses: dict[str, str], report: Any
) -> None:
    """One outcome as its own guarded write (a batch that could not apply as a whole)."""
    scope = frame.scope
    review = resolve_record(scope, query=record.pk, collection_id=record.collection_id)
    if review["status"] != RESOLVED:
        _refused(item, report, f"Review of the record returned {review['status']}; left alone.")
        return
    try:
        write = _write(frame, item, statuses)
        prepared = prepare_write(scope, **write, review_ids=[review["resolution_id"]])
        _committed(item, commit_write(scope, action_id=prepared["action_id"]), report)
    except AnchorError as exc:
        _refused(item, report, f"{exc.code}: {exc.message}")


def _write_batch(
    frame: Frame,
    items: list[AgendaItem],
    records: dict[str, Record],
    statuses: dict[str, str],
    reports: dict[str, dict[str, Any]],
) -> None:
    """Every outcome in one prepared batch; if it cannot apply as a whole, each item is tried
    on its own, from its record as it is now."""
    scope = frame.scope
    reviews = resolve_by_ids(scope, [_bound_id(item) for item in items])
    batch = [
        {
            "index": index,
            **_write(frame, item, statuses),
            "review_ids": [reviews[_bound_id(item)]],
            "clarification": "",
        }
        for index, item in enumerate(items)
    ]
    collections = sorted({records[_bound_id(item)].collection_id for item in items})
    try:
        outcome = commit_batch_write(scope, action_id=prepare_tool_batch(scope, batch, collections))
    except AnchorError:
        fresh = Record.objects.in_bulk([_bound_id(item) for item in items])
        for item in items:
            report = reports[item.pk]
            if _unchanged(item, fresh[_bound_id(item)], report):
                _write_item(frame, item, fresh[_bound_id(item)], statuses, report)
        return
    for index, item in enumerate(items):
        _committed(item, outcome, reports[item.pk], index)


def _sync_items(
    frame: Frame, items: list[AgendaItem], statuses: dict[str, str]
) -> dict[str, dict[str, Any]]:
    """Each item's report, by item ID: decisions read, records checked, outcomes written."""
    reports = {
        item.pk: {"item": item.path, "record_id": item.record_id, "state": item.state}
        for item in items
    }
    in_workspace = Record.objects.filter(workspace_id=frame.scope.workspace_id)
    records = in_workspace.in_bulk([_bound_id(item) for item in items])
    decisions: dict[str, Any] = {}
    to_write = []
    for item in items:
        report = reports[item.pk]
        if item.sync_status == AWAITING and item.sync_detail and item.sync_detail.get("action_id"):
            if not _read_decision(frame.scope, item, report, decisions):
                continue
            # Approved, but the item's outcome was revised meanwhile: write the newer one too.
            records[_bound_id(item)] = Record.objects.get(pk=item.record_id)
        if _unchanged(item, records[_bound_id(item)], report):
            to_write.append(item)
    if not to_write:
        return reports
    collections = {records[_bound_id(item)].collection_id for item in to_write}
    if approval.approval_required(frame.scope.workspace_id, collections):
        # A person decides each outcome on its own: one going stale leaves the others.
        for item in to_write:
            _write_item(frame, item, records[_bound_id(item)], statuses, reports[item.pk])
    else:
        _write_batch(frame, to_write, records, statuses, reports)
    return reports


def _save_synced(items: list[AgendaItem]) -> None:
    """One prepared UPDATE run for every item (bulk_update's CASE over each row cost more to
    build than a sync of 100 records spent writing them)."""
    detail = AgendaItem._meta.get_field("sync_detail")
    rows = [
        (
            item.record_version,
            item.sync_status,
            detail.get_db_prep_save(item.sync_detail, connection),
            item.pk,
        )
        for item in items
    ]
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {AgendaItem._meta.db_table} SET record_version = %s, sync_status = %s, "
            "sync_detail = %s WHERE id = %s",
            rows,
        )


def sync_records(
    scope: Scope, *, agenda_id: Any, cursor_token: Any, status_values: Any = None
) -> dict[str, Any]:
    statuses = _status_values(status_values)
    results: list[dict[str, Any]] = []

    def apply(frame: Frame) -> dict[str, Any]:
        agenda = frame.agenda
        if agenda.sync_state == Agenda.SYNC_NOT_BOUND:
            raise order_error(
                "This agenda has no bound records (start one with record_ids to bind them)."
            )
        items = list(
            AgendaItem.objects.filter(layer__agenda=agenda, layer__kind=AgendaLayer.ROOT)
            .exclude(record=None)
            .select_related("layer")
            .order_by("number")
        )
        due = [
            item
            for item in items
            if item.sync_status not in (SYNCED, *CONFLICTS) and item.state in AgendaItem.RESOLVED
        ]
        reports = _sync_items(frame, due, statuses)
        for item in items:
            report = reports.get(item.pk)
            if report is not None:
                # Its place in a batch is for the next sync to read the decision, not shown.
                index = report.pop(BATCH_INDEX, None)
                item.sync_detail = report if index is None else {**report, BATCH_INDEX: index}
                results.append({**report, "status": item.sync_status})
                continue
            earlier = item.sync_status in (SYNCED, *CONFLICTS)
            status = item.sync_status if earlier else NOT_RESOLVED
            result = {"item": item.path, "record_id": item.record_id, "status": status}
            results.append(result | ({"earlier_sync": True} if earlier else {}))
        _save_synced(due)
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
    counts = dict(Counter(report["status"] for report in results))
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
