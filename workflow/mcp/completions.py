"""completion/complete for the resource templates: a client's record and collection pickers.

What the user typed is matched against titles, or collection names and aliases, in the caller's
workspace; the IDs those URIs take are offered best first. Prompts take free text: no values.
"""

from __future__ import annotations

from mcp import types

from records import selectors
from workflow.mcp.bounded_calls import run_bounded
from workflow.mcp.resources import COLLECTION_TEMPLATE, RECORD_TEMPLATE, request_scope

# Values offered per request (the protocol allows up to 100; a picker shows a few).
MAX_VALUES = 20


async def complete(
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: types.CompletionArgument,
    context: types.CompletionContext | None,
) -> types.Completion | None:
    if not isinstance(ref, types.ResourceTemplateReference):
        return None
    scope = request_scope()
    typed = argument.value
    if ref.uri == RECORD_TEMPLATE and argument.name == "record_id":
        choose = selectors.record_choices
    elif ref.uri == COLLECTION_TEMPLATE and argument.name == "collection_id":
        choose = selectors.collection_choices
    else:
        return None
    values, more = await run_bounded(
        lambda: choose(workspace_id=scope.workspace_id, typed=typed, limit=MAX_VALUES)
    )
    return types.Completion(values=values, hasMore=more)
