"""Orientation tools: the workspace at a glance, and the server's usage rules."""

from typing import Any

from workflow.digest import workspace_digest
from workflow.mcp import sdk
from workflow.mcp.envelope import ToolResult, run_tool
from workflow.mcp.instructions import current_instructions
from workflow.mcp.tools.base import Toolset


class SessionTools(Toolset):
    def workspace_digest(self) -> ToolResult:
        """Summarise this workspace: call it first in a new conversation.

        Collections (ID, purpose, count, fields, link types), who 'me' is, open agendas, writes
        waiting on you or a person, the latest changes and how many are unread. Changes nothing.
        """
        return self._run(digest, {})

    def get_server_instructions(self) -> ToolResult:
        """Return the server's working rules, the same text clients receive at initialization.

        Call it only if your client did not show you the server instructions. Changes nothing.
        """
        return run_tool(lambda: {"instructions": current_instructions()})


AGENDA_TOOLS_UNSERVED = (
    "Agenda tools are opt-in: serve them with ANCHOR_TOOLS=full (or mcp_serve --tools full) to "
    "continue this agenda; a person can see it in the admin meanwhile."
)


def digest(scope: Any) -> dict[str, Any]:
    """The digest as the agent reads it: no step naming a tool this server does not offer."""
    result = workspace_digest(scope)
    if sdk.served_tool("agenda_view") is None:
        for agenda in result.get("open_agendas", []):
            agenda["next_step"] = AGENDA_TOOLS_UNSERVED
        if "unsynced_agendas_next_step" in result:
            result["unsynced_agendas_next_step"] = AGENDA_TOOLS_UNSERVED
    return result
