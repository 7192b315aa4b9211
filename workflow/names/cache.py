"""Where a scope's snapshot comes from: the cache, the names log, the stored row, the records."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from records.counters import counter_values, names_key
from records.models import Record, RecordAlias
from records.name_log import names_written_now, prune_names_log
from records.scope_cache import ScopeCache
from workflow.models import StoredNameList
from workflow.names.view import PATCH_FLOOR, Entry, ScopeNames

CACHED_SCOPES = 32
# Beyond this share of the scope changed since a snapshot, reading the list afresh costs less
# than patching it (though a small scope may always catch up on PATCH_FLOOR).
MAX_CHANGED_SHARE = 0.05
# Below this many records a scope reads from the records about as fast as from a stored list.
STORE_FROM_RECORDS = 2_000

_cache: ScopeCache[int, ScopeNames] = ScopeCache(CACHED_SCOPES)


def scope_names(workspace_id: str, collection_id: str | None) -> ScopeNames:
    """The scope's names at its names counter's revision, read before the names (see
    workflow.names)."""
    scope = (workspace_id, collection_id)
    counter = names_key(collection_id)
    revision = counter_values(workspace_id, [counter])[counter]
    view = _cache.get(scope, revision)
    if view is not None:
        return view
    latest = _cache.latest(scope)
    if latest is not None and latest[0] < revision:
        view = _follow_log(latest[1], workspace_id, collection_id, revision)
    if view is None:
        view = _fresh(workspace_id, collection_id, revision)
    _cache.put(scope, view.revision, view)
    return view


def clear_cache() -> None:
    _cache.clear()


def _in_scope(
    workspace_id: str, collection_id: str | None
) -> tuple[QuerySet[Record], QuerySet[RecordAlias]]:
    records = Record.objects.filter(workspace_id=workspace_id)
    aliases = RecordAlias.objects.filter(workspace_id=workspace_id)
    if collection_id:
        records = records.filter(collection_id=collection_id)
        aliases = aliases.filter(record__collection_id=collection_id)
    return records, aliases


def _load(workspace_id: str, collection_id: str | None, revision: int) -> ScopeNames:
    """Every name of the scope, read from the records."""
    too_large = ScopeNames(revision, record_count=scope_record_count(workspace_id, collection_id))
    if too_large.too_large:
        return too_large
    return ScopeNames.build(revision, _current_names(workspace_id, collection_id))


def _fresh(workspace_id: str, collection_id: str | None, revision: int) -> ScopeNames:
    """The stored list and the log since it when it can say what changed, else the records
    (and the list stored for the next process)."""
    key = names_key(collection_id)
    stored = StoredNameList.objects.filter(workspace_id=workspace_id, scope_key=key).first()
    view = None if stored is None else ScopeNames.from_stored(stored)
    if view is not None:
        if view.revision >= revision:  # stored after our counter read: newer is as good
            return view
        followed = _follow_log(view, workspace_id, collection_id, revision)
        if followed is not None:
            return followed
    loaded = _load(workspace_id, collection_id, revision)
    _store(workspace_id, collection_id, loaded)
    return loaded


def _follow_log(
    view: ScopeNames, workspace_id: str, collection_id: str | None, revision: int
) -> ScopeNames | None:
    """`view` brought to `revision` from the names log; None when the log cannot say what
    changed (a gap, pruned rows), or so much did that reading the list afresh serves better."""
    if view.too_large:
        return None
    limit = max(PATCH_FLOOR, int(MAX_CHANGED_SHARE * view.record_count))
    key = names_key(collection_id)
    # A move between collections moves a collection's counter twice: twice the moves.
    written = names_written_now(
        workspace_id, collection_id, key, view.revision, revision, limit=2 * limit
    )
    if written is None or len(written[0]) > limit:
        return None
    followed = view.patched(revision, *written)
    return None if followed is None or followed.too_large else followed


def _store(workspace_id: str, collection_id: str | None, names: ScopeNames) -> None:
    """Keep the list for the next process; the names log up to its revision goes with it
    (a reader behind that point meets a gap and reads this row). A rival's row serves too."""
    columns = names.stored_form()
    if columns is None or names.too_large or names.record_count < STORE_FROM_RECORDS:
        return
    key = names_key(collection_id)
    try:
        with transaction.atomic():
            StoredNameList.objects.update_or_create(
                workspace_id=workspace_id,
                scope_key=key,
                defaults={"revision": names.revision, **columns},
            )
            prune_names_log(workspace_id, key, names.revision)
    except IntegrityError:  # another process stored one at the same moment
        pass


def _current_names(
    workspace_id: str, collection_id: str | None, record_ids: set[str] | None = None
) -> list[Entry]:
    """The scope's entries as they are now (only these records', when given; a record gone
    from the scope has none), in the order records.name_log reads them."""
    records, aliases = _in_scope(workspace_id, collection_id)
    if record_ids is not None:
        records = records.filter(pk__in=record_ids)
        aliases = aliases.filter(record_id__in=record_ids)
    entries = [(rid, title, False) for rid, title in records.values_list("id", "title")]
    return entries + [
        (rid, alias, True) for rid, alias in aliases.values_list("record_id", "alias")
    ]


def scope_record_count(workspace_id: str, collection_id: str | None) -> int:
    """How many records the scope holds now, as a load counts them (ScopeNames.too_large)."""
    records, _ = _in_scope(workspace_id, collection_id)
    return records.count()
