"""search_records: active records matching every given criterion, one keyset page at a time
in one of search_pages' orders. Two queries per page at most: the page itself and, for text
searches, the snippets of that page. Mode "meaning" ranks text by words and by meaning together
(selectors/meaning_search.py)."""

from __future__ import annotations

from typing import Any

from records.errors import UNSUPPORTED, AnchorError, invalid
from records.selectors import arguments as args
from records.selectors.conditions import Criteria, parse_criteria
from records.selectors.cursors import decode_cursor, encode_cursor, fingerprint
from records.selectors.mismatch import data_prefix_hint, mismatch_hint
from records.selectors.search_pages import (
    CreatedOrder,
    FieldOrder,
    Order,
    RelevanceOrder,
    words_page,
)

MAX_LIMIT = 100


def search_records(
    *,
    workspace_id: str,
    collection_id: Any = None,
    query: Any = None,
    filters: Any = None,
    limit: Any = 20,
    cursor: Any = None,
    text: Any = None,
    where: Any = None,
    linked_to: Any = None,
    order_by: Any = None,
    mode: Any = None,
) -> dict[str, Any]:
    limit = args.bounded_int(limit, "limit", low=1, high=MAX_LIMIT)
    by_meaning = _parse_mode(mode)
    criteria = parse_criteria(
        workspace_id=workspace_id,
        collection_id=collection_id,
        query=query,
        filters=filters,
        text=text,
        where=where,
        linked_to=linked_to,
    )
    sort = _parse_order_by(order_by)
    if sort is not None and criteria.words is not None:
        raise invalid(
            "order_by",
            "cannot be combined with text, whose results are ordered by relevance; drop one.",
        )
    if by_meaning:
        return _meaning_search(workspace_id, criteria, text, cursor, limit)
    bound_to = fingerprint(
        "search", workspace_id, {**criteria.fingerprint_params(), "order_by": sort}
    )
    key = decode_cursor(cursor, bound_to, key_length=2)
    order: Order
    if criteria.words is not None:
        order = RelevanceOrder(criteria.words)
    elif sort is not None:
        order = FieldOrder(**sort)
    else:
        order = CreatedOrder()
    page, last = words_page(workspace_id, criteria, order, key, limit)
    page["next_cursor"] = (
        encode_cursor(bound_to, order.cursor_key(last)) if last is not None else None
    )
    if not page["records"] and key is None and criteria.where:
        hints = {
            "a path": data_prefix_hint(workspace_id, criteria),
            "a value's type": mismatch_hint(workspace_id, criteria),
        }
        said = [f"Nothing matched, perhaps because of {why}: {h}" for why, h in hints.items() if h]
        if said:
            page["hint"] = " ".join(said)
    return page


def _parse_mode(value: Any) -> bool:
    """Whether the search is by meaning; refused when this server has meaning turned off."""
    if value is None or value == "words":
        return False
    if value != "meaning":
        raise invalid("mode", f'must be "words" (the default) or "meaning", got {value!r}.')
    from records.meaning.model import enabled

    if not enabled():
        raise AnchorError(
            UNSUPPORTED,
            "mode: search by meaning is turned off on this server (ANCHOR_MEANING=off); "
            'search with mode "words" (the default), or ask its operator to turn it on.',
            field="mode",
        )
    return True


def _meaning_search(
    workspace_id: str, criteria: Criteria, text: str, cursor: Any, limit: int
) -> dict[str, Any]:
    # Imported here: numpy and the model load on the first search by meaning, not at start-up.
    from records.selectors.meaning_search import meaning_search

    if criteria.words is None:
        raise invalid(
            "mode",
            '"meaning" ranks records against text; give text (the question, in any words) '
            'or search with mode "words".',
        )
    return meaning_search(workspace_id, criteria, text, cursor, limit)


def _parse_order_by(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise invalid(
            "order_by",
            'must be an object such as {"field": ["amount"], "type": "number", "direction": '
            '"desc"}.',
        )
    args.only_keys(value, "order_by", {"field", "type", "direction"}, {"field", "type"})
    if value["type"] not in ("number", "string"):
        raise invalid("order_by.type", f'must be "number" or "string", got {value["type"]!r}.')
    direction = value.get("direction", "asc")
    if direction not in ("asc", "desc"):
        raise invalid("order_by.direction", f'must be "asc" or "desc", got {direction!r}.')
    return {
        "field": args.field_path(value["field"], "order_by.field"),
        "type": value["type"],
        "direction": direction,
    }
