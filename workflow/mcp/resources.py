"""Collections and records as MCP resources, so a person can attach one to a conversation:
read-only and scoped like the tools (never by the URI); a record as `get_record_context` returns
it, a collection as its catalog entry with its first active records. completion/complete offers
the IDs these URIs take, best first, for what the user typed (titles, or collection names and
aliases, in the caller's workspace); prompts take free text, so none for them.
"""

from __future__ import annotations

import json
import re
from functools import partial
from types import SimpleNamespace
from typing import Any

from mcp import types
from mcp.server.lowlevel.helper_types import ReadResourceContents

from records import selectors
from records.errors import AnchorError
from workflow.mcp import sdk
from workflow.mcp.bounded_calls import run_bounded
from workflow.scope import Scope, scope_for_request

JSON = "application/json"
RECORD_TEMPLATE = "anchor://records/{record_id}"
COLLECTION_TEMPLATE = "anchor://collections/{collection_id}"
_RECORD_URI = re.compile(r"^anchor://records/([^/?#]+)$")
_COLLECTION_URI = re.compile(r"^anchor://collections/([^/?#]+)$")
COLLECTION_RECORDS_SHOWN = 20
# Values offered per completion (the protocol allows up to 100; a picker shows a few).
MAX_VALUES = 20

TEMPLATES = [
    types.ResourceTemplate(
        uriTemplate=uri, name=name, title=f"Anchor {name}", description=about, mimeType=JSON
    )
    for uri, name, about in (
        (
            RECORD_TEMPLATE,
            "record",
            "One record in full: data, version, aliases, one-hop links, recent history.",
        ),
        (
            COLLECTION_TEMPLATE,
            "collection",
            "A collection's description and its first 20 active records.",
        ),
    )
]


def request_scope() -> Scope:
    """The scope of the request being answered (resources and completions alike)."""
    return scope_for_request(sdk.current_request(SimpleNamespace()))


async def list_resources() -> list[types.Resource]:
    """The workspace's collections; records are reached through the record template."""
    scope = request_scope()
    listed = await run_bounded(lambda: selectors.collection_list(workspace_id=scope.workspace_id))
    return [
        types.Resource(
            uri=COLLECTION_TEMPLATE.format(collection_id=entry["collection_id"]),  # type: ignore[arg-type]
            name=entry["name"],
            description=entry.get("purpose") or None,
            mimeType=JSON,
        )
        for entry in listed["collections"]
    ]


async def list_resource_templates() -> list[types.ResourceTemplate]:
    return TEMPLATES


async def read_resource(uri: Any) -> list[ReadResourceContents]:
    text = str(uri)
    ws = request_scope().workspace_id
    if match := _RECORD_URI.match(text):
        read = partial(selectors.record_context, workspace_id=ws, record_id=match.group(1))
    elif match := _COLLECTION_URI.match(text):
        read = partial(_collection, ws, match.group(1))
    else:
        raise sdk.invalid_params(
            f"Unknown resource {text[:200]!r}: use {RECORD_TEMPLATE} or "
            f"{COLLECTION_TEMPLATE} (resources/templates/list)."
        )
    try:
        body = await run_bounded(read)
    except AnchorError as exc:
        raise sdk.invalid_params(exc.message[:500]) from None
    return [ReadResourceContents(content=json.dumps(body, ensure_ascii=False), mime_type=JSON)]


def _collection(workspace_id: str, collection_id: str) -> dict[str, Any]:
    entry = selectors.collection_entry(
        workspace_id=workspace_id, collection_id=collection_id, field="uri"
    )
    page = selectors.search_records(
        workspace_id=workspace_id, collection_id=collection_id, limit=COLLECTION_RECORDS_SHOWN
    )
    return {
        "collection": entry,
        "records": page["records"],
        "more": "search_records with this collection_id and next_cursor pages on"
        if page.get("next_cursor")
        else None,
    }


async def complete(
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: types.CompletionArgument,
    context: types.CompletionContext | None,
) -> types.Completion | None:
    if not isinstance(ref, types.ResourceTemplateReference):
        return None
    if ref.uri == RECORD_TEMPLATE and argument.name == "record_id":
        choose = selectors.record_choices
    elif ref.uri == COLLECTION_TEMPLATE and argument.name == "collection_id":
        choose = selectors.collection_choices
    else:
        return None
    ws, typed = request_scope().workspace_id, argument.value
    values, more = await run_bounded(lambda: choose(workspace_id=ws, typed=typed, limit=MAX_VALUES))
    return types.Completion(values=values, hasMore=more)
