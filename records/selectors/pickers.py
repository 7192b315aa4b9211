"""Choices for a picker: the IDs of active records or collections whose names hold what was typed.

Casefolded as search_records' `query`; names starting with the text first, then those holding
it; an ID typed whole is offered back when it names one."""

from __future__ import annotations

from records.ids import is_valid_id
from records.models import Record
from records.selectors.catalog import collection_list
from records.selectors.search import search_records

# Titles scanned per request before ranking; a picker shows a few of them.
SCANNED = 100
MAX_TYPED = 300


def _ranked(matches: list[tuple[str, str]], typed: str) -> list[str]:
    needle = typed.casefold()
    ordered = sorted(
        matches, key=lambda m: (not m[1].casefold().startswith(needle), m[1].casefold(), m[0])
    )
    return list(dict.fromkeys(pk for pk, _ in ordered))


def record_choices(*, workspace_id: str, typed: str, limit: int) -> tuple[list[str], bool]:
    """IDs of active records whose title holds `typed`, and whether there are more."""
    typed = typed.strip()[:MAX_TYPED]
    if is_valid_id(typed):
        active = Record.objects.filter(
            workspace_id=workspace_id, pk=typed, archived_at__isnull=True
        )
        return ([typed] if active.exists() else []), False
    page = search_records(workspace_id=workspace_id, query=typed or None, limit=SCANNED)
    ranked = _ranked([(r["record_id"], r["title"]) for r in page["records"]], typed)
    return ranked[:limit], len(ranked) > limit or bool(page["has_more"])


def collection_choices(*, workspace_id: str, typed: str, limit: int) -> tuple[list[str], bool]:
    """IDs of collections whose name or an alias holds `typed`, and whether there are more."""
    typed = typed.strip()[:MAX_TYPED]
    needle = typed.casefold()
    matches = []
    for entry in collection_list(workspace_id=workspace_id)["collections"]:
        names = [entry["name"], *entry.get("aliases", [])]
        if entry["collection_id"] == typed or any(needle in str(n).casefold() for n in names):
            matches.append((entry["collection_id"], entry["name"]))
    ranked = _ranked(matches, typed)
    return ranked[:limit], len(ranked) > limit
