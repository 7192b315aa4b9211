"""batch_read: several reads in one call and one consistent snapshot, answered in order.

Items share a budget (search limits, traverse max_nodes, one unit per context, catalog or
aggregate) and the response has a size cap: a batch over either is refused whole with the
figures to split it by, never truncated silently.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

from records import selectors
from records.errors import AnchorError, invalid
from records.snapshot import read_snapshot
from workflow.scope import Scope

MAX_ITEMS = 10
BUDGET = 100
MAX_TRAVERSE_NODES = 100
MAX_RESPONSE_BYTES = 2 * 1024 * 1024
BATCH_CONTEXT_EVENTS = 0  # history is opt-in in batches; the standalone tool defaults to 10

READS: dict[str, Callable[..., Any]] = {
    "search_records": selectors.search_records,
    "get_record_context": selectors.record_context,
    "list_collections": selectors.collection_list,
    "traverse": selectors.traverse,
    "aggregate": selectors.aggregate,
}
# Each read takes its selector's arguments (the workspace is the caller's); a search may add
# include_context.
OPERATIONS = {
    name: set(inspect.signature(read).parameters) - {"workspace_id"}
    | ({"include_context"} if name == "search_records" else set())
    for name, read in READS.items()
}


def _cost(operation: str, args: dict[str, Any], field: str) -> int:
    if operation == "search_records":
        return int(args.get("limit", 20)) if isinstance(args.get("limit", 20), int) else 0
    if operation == "traverse":
        nodes = args.get("max_nodes", 50)
        if isinstance(nodes, int) and nodes > MAX_TRAVERSE_NODES:
            raise invalid(f"{field}.max_nodes", f"is at most {MAX_TRAVERSE_NODES} in a batch.")
        return nodes if isinstance(nodes, int) else 0
    return 1


def _parse(requests: Any) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(requests, list) or not 1 <= len(requests) <= MAX_ITEMS:
        raise invalid("requests", f"must be a list of 1-{MAX_ITEMS} read requests.")
    items, spent = [], 0
    for index, raw in enumerate(requests):
        field = f"requests[{index}]"
        if not isinstance(raw, dict) or raw.get("operation") not in OPERATIONS:
            raise invalid(f"{field}.operation", f"must be one of {sorted(OPERATIONS)}.")
        args = {k: value for k, value in raw.items() if k != "operation"}
        unknown = set(args) - OPERATIONS[raw["operation"]]
        if unknown:
            raise invalid(
                field,
                f"{raw['operation']} does not take {sorted(unknown)}; it takes "
                f"{sorted(OPERATIONS[raw['operation']])}.",
            )
        spent += _cost(raw["operation"], args, field)
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
    if not isinstance(include_context, bool):
        raise invalid("include_context", "must be true or false.")
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


def batch_read(scope: Scope, *, requests: Any) -> dict[str, Any]:
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
