"""Collections and records as MCP resources, so a person can attach one to a conversation:
read-only and scoped like the tools (never by the URI); a record as `get_record_context` returns
it, a collection as its catalog entry with its first active records.
"""

from __future__ import annotations

import json
import re
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

TEMPLATES = [
    types.ResourceTemplate(
        uriTemplate=RECORD_TEMPLATE,
        name="record",
        title="Anchor record",
        description="One record in full: data, version, aliases, one-hop links, recent history.",
        mimeType=JSON,
    ),
    types.ResourceTemplate(
        uriTemplate=COLLECTION_TEMPLATE,
        name="collection",
        title="Anchor collection",
        description="A collection's description and its first 20 active records.",
        mimeType=JSON,
    ),
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
    scope = request_scope()
    if match := _RECORD_URI.match(text):
        record_id = match.group(1)
        body = await _answer(
            lambda: selectors.record_context(workspace_id=scope.workspace_id, record_id=record_id)
        )
    elif match := _COLLECTION_URI.match(text):
        body = await _answer(lambda: _collection(scope, match.group(1)))
    else:
        raise sdk.invalid_params(
            f"Unknown resource {text[:200]!r}: use {RECORD_TEMPLATE} or "
            f"{COLLECTION_TEMPLATE} (resources/templates/list)."
        )
    return [ReadResourceContents(content=json.dumps(body, ensure_ascii=False), mime_type=JSON)]


async def _answer(call: Any) -> Any:
    try:
        return await run_bounded(call)
    except AnchorError as exc:
        raise sdk.invalid_params(exc.message[:500]) from None


def _collection(scope: Scope, collection_id: str) -> dict[str, Any]:
    entry = selectors.collection_entry(
        workspace_id=scope.workspace_id, collection_id=collection_id, field="uri"
    )
    page = selectors.search_records(
        workspace_id=scope.workspace_id, collection_id=collection_id, limit=COLLECTION_RECORDS_SHOWN
    )
    return {
        "collection": entry,
        "records": page["records"],
        "more": "search_records with this collection_id and next_cursor pages on"
        if page.get("next_cursor")
        else None,
    }
