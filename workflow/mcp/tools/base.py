"""The base of Anchor's toolsets: each public method of a subclass is one MCP tool.

Registered by `workflow.mcp.sdk.register_toolset` on whichever server this process serves;
every call runs on a new instance holding the call's MCP context and Django request.
"""

from __future__ import annotations

from typing import Any


class Toolset:
    def __init__(self, context: Any = None, request: Any = None) -> None:
        self.context = context
        self.request = request
