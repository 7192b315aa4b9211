"""Why a prepared write can no longer apply, in plain words a person and an agent both read.

The refusals commit raises are written for the agent (which tool to call next, which counter
moved). What is stored on a stale action says what changed in the world instead: which record,
which links, which names, with titles rather than IDs.
"""

from __future__ import annotations

from records.acting import acted_by
from records.counters import ALL_NAMES, CATALOG
from records.errors import ARCHIVED, STALE_REVIEW, VERSION_CONFLICT, AnchorError
from records.models import AuditEvent, Collection, Record

AGAIN = "The agent has to look again and prepare a new write."


def _quoted(model: type[Record] | type[Collection], workspace_id: str, pk: str) -> str:
    """A record's title or a collection's name in quotes, or its kind and ID when it is gone."""
    column, kind = ("title", "record") if model is Record else ("name", "collection")
    rows = model.objects.filter(workspace_id=workspace_id, pk=pk)
    value = rows.values_list(column, flat=True).first()
    return f"“{value}”" if value else f"{kind} {pk}"


def _moved(workspace_id: str, key: str) -> str:
    kind, _, pk = key.partition(":")
    if kind == "links":
        return f"the links of {_quoted(Record, workspace_id, pk)} changed"
    if key == ALL_NAMES:
        return "a record was added, renamed or given another name somewhere in the workspace"
    if kind == "names":
        where = _quoted(Collection, workspace_id, pk)
        return f"a record in {where} was added, renamed or given another name"
    if key == CATALOG:
        return "the list of collections changed"
    return f"{key} changed"


def _changed_by(workspace_id: str, record_id: str, version: object) -> str:
    """' by agent (Claude Code) for user:dana, approved by user:maya at <time>': who wrote that
    version, as its audit event names them (records.acting), and who let it through."""
    events = AuditEvent.objects.filter(workspace_id=workspace_id, record_id=record_id)
    event = events.filter(after__version=version).first() if isinstance(version, int) else None
    if event is None:
        return ""
    evidence = [entry for entry in event.review_evidence or [] if isinstance(entry, dict)]
    approvers = [entry["approved_by"] for entry in evidence if entry.get("approved_by")]
    approver = f", approved by {approvers[0]}" if approvers else ""
    return f" by {acted_by(event)}{approver} at {event.created_at:%Y-%m-%d %H:%M} UTC"


def _version_changed(workspace_id: str, exc: AnchorError) -> str:
    record_id = str(exc.details.get("record_id", ""))
    current, expected = exc.details.get("current_version"), exc.details.get("expected_version")
    both = exc.details.get("fields_changed_by_both")
    overwrites = "Applying it would overwrite a change the agent never saw."
    if isinstance(both, list) and both:
        fields = ", ".join(str(field) for field in both)
        overwrites = (
            f"That change also set {fields}, which this write sets too. Applying it would "
            "overwrite a value the agent never saw."
        )
    return (
        f"{_quoted(Record, workspace_id, record_id)} changed after the agent prepared this "
        f"write: it was prepared against version {expected}, and the record is now at version "
        f"{current} (changed{_changed_by(workspace_id, record_id, current)}). {overwrites}"
    )


def plain_stale_reason(workspace_id: str, exc: AnchorError) -> str:
    """The refusal `exc` (a final one: stale, version conflict, archived) as a person reads it."""
    if exc.code == VERSION_CONFLICT and exc.details.get("record_id"):
        return _version_changed(workspace_id, exc)
    if exc.code == ARCHIVED and exc.details.get("record_id"):
        record = _quoted(Record, workspace_id, str(exc.details["record_id"]))
        return f"{record} was archived after the agent prepared this write."
    changes = exc.details.get("changes")
    if exc.code == STALE_REVIEW and isinstance(changes, list) and changes:
        # Exact freshness says what changed in the answer (e.g. a new similar name).
        return (
            "What the agent looked at before preparing this write now answers differently: "
            f"{'; '.join(str(c) for c in changes[:5])}. {AGAIN}"
        )
    changed = exc.details.get("changed")
    if exc.code == STALE_REVIEW and isinstance(changed, list) and changed:
        what = "; ".join(_moved(workspace_id, str(key)) for key in changed)
        return f"What the agent looked at before preparing this write has changed: {what}. {AGAIN}"
    if exc.code == STALE_REVIEW and "expired" in exc.message:
        return f"The agent's look at the data expired before this write was committed. {AGAIN}"
    return exc.message
