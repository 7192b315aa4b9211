"""batch_read: several reads in one call and one consistent snapshot, answered in order.

Items share a budget (search limits, traverse max_nodes, one unit per context, catalog or
aggregate) and the response has a size cap: a batch over either is refused whole with the
figures to split it by, never truncated silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from records import selectors
from records.errors import AnchorError, invalid
from records.snapshot import read_snapshot
from workflow.scope import Scope

BUDGET = 100
MAX_TRAVERSE_NODES = 100
MAX_RESPONSE_BYTES = 2 * 1024 * 1024
BATCH_CONTEXT_EVENTS = 0  # history is opt-in in batches; the standalone tool defaults to 10

# Each read takes its own tool's arguments (the workspace is the caller's); a search may add
# include_context.
READS: dict[str, Callable[..., Any]] = {
    "search_records": selectors.search_records,
    "get_record_context": selectors.record_context,
    "list_collections": selectors.collection_list,
    "traverse": selectors.traverse,
    "aggregate": selectors.aggregate,
}


def _cost(operation: str, args: dict[str, Any], field: str) -> int:
    if operation == "search_records":
        return int(args.get("limit", 20))
    if operation == "traverse":
        nodes = int(args.get("max_nodes", 50))
        if nodes > MAX_TRAVERSE_NODES:
            raise invalid(f"{field}.max_nodes", f"is at most {MAX_TRAVERSE_NODES} in a batch.")
        return nodes
    return 1


def _parse(requests: Sequence[Mapping[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The items and their budget. Their shape (1-10 items, a known operation, that tool's own
    arguments) is the tool's schema's and each read tool's own argument check's
    (workflow.mcp.tools.reviews.read_checked), made before this runs."""
    items, spent = [], 0
    for index, raw in enumerate(requests):
        args = {k: value for k, value in raw.items() if k != "operation"}
        spent += _cost(raw["operation"], args, f"requests[{index}]")
        items.append((raw["operation"], args))
    if spent > BUDGET:
        raise invalid(
            "requests",
            f"ask for {spent} results in all; a batch allows {BUDGET}. "
            "Lower the limits or split the batch.",
            cost=spent,
            budget=BUDGET,
        )
    return items


def _run(scope: Scope, operation: str, args: dict[str, Any]) -> Any:
    ws = scope.workspace_id
    if operation == "get_record_context":
        args = {"event_limit": BATCH_CONTEXT_EVENTS, **args}
    include_context = args.pop("include_context", False)
    result = READS[operation](workspace_id=ws, **args)
    if include_context:  # history omitted, as BATCH_CONTEXT_EVENTS says
        _add_contexts(result, ws)
    return result


def _add_contexts(page: dict[str, Any], workspace_id: str) -> None:
    """Each hit becomes its whole record (full data, aliases, status) and `contexts` holds its
    links, so a record is said once: a report of three 20-record searches was half repeats.

    The search's own fields of a hit (a snippet, a rank) stay beside the record's.
    """
    contexts = selectors.record_contexts(
        workspace_id=workspace_id, record_ids=[hit["record_id"] for hit in page["records"]]
    )
    records = []
    for hit in page["records"]:
        context = contexts.get(hit["record_id"])
        if context is None:  # gone between the page and its contexts: keep what the page had
            records.append(hit)
            continue
        extras = {k: v for k, v in hit.items() if k not in PREVIEW_FIELDS}
        records.append(extras | context.pop("record"))
        context.pop("events", None)  # omitted, and said so by events_omitted
    page["records"] = records
    page["contexts"] = contexts


# What a hit carries in place of the whole record, dropped when the whole record is there.
PREVIEW_FIELDS = {"data_preview", "data_truncated"}


def batch_read(scope: Scope, *, requests: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    items = _parse(requests)
    answers = []
    with read_snapshot():
        for operation, args in items:
            try:
                answers.append({"result": _run(scope, operation, dict(args))})
            except AnchorError as exc:
                answers.append({"error": exc.as_dict()})
    # UTF-8 bytes of the compact JSON the client gets: ASCII escapes (six bytes a letter) would
    # refuse text in other scripts at a third of the cap.
    sizes = [
        len(json.dumps(a, default=str, ensure_ascii=False, separators=(",", ":")).encode())
        for a in answers
    ]
    if sum(sizes) > MAX_RESPONSE_BYTES:
        raise invalid(
            "requests",
            f"the answer would be {sum(sizes)} bytes; the limit is {MAX_RESPONSE_BYTES}. Split "
            "the batch (sizes per item are in details) or lower limits.",
            item_bytes=sizes,
        )
    return {"items": answers}
