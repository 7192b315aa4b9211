"""The base of Anchor's toolsets: each public method of a subclass is one MCP tool.

Registered by `workflow.mcp.sdk.register_toolset` on whichever server this process serves;
every call runs on a new instance holding the call's Django request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workflow.mcp.envelope import ToolResult, run_tool
from workflow.scope import scope_for_request


class Toolset:
    def __init__(self, request: Any = None) -> None:
        self.request = request

    def _run(
        self,
        call: Callable[..., Any],
        arguments: dict[str, Any],
        then: Callable[[Any], Any] = lambda result: result,
    ) -> ToolResult:
        """`call(scope, **arguments)` in the envelope, its result passed through `then`. A tool
        passes its `locals()`: its own parameters as the client sent them."""
        scope = scope_for_request(self.request)
        kwargs = {key: value for key, value in arguments.items() if key != "self"}
        return run_tool(lambda: then(call(scope, **kwargs)))

    def _read(
        self,
        selector: Callable[..., Any],
        arguments: dict[str, Any],
        then: Callable[[Any], Any] = lambda result: result,
    ) -> ToolResult:
        """A selector's read, in the caller's workspace."""
        return self._run(
            lambda scope, **kw: selector(workspace_id=scope.workspace_id, **kw), arguments, then
        )
