"""The original one-step write tools, kept listed so old clients learn the new workflow.

They never write: each answers REVIEW_REQUIRED with the calls that replace it, and says the same
in its description (one STEPS entry, from the review and the ID to cite in `tool_list.RETIRED`
and the operation's own argument keys).
"""

from collections.abc import Callable

from records.errors import REVIEW_REQUIRED, AnchorError
from workflow.mcp.envelope import ToolResult, refused
from workflow.mcp.tool_list import RETIRED
from workflow.mcp.tools.base import Toolset
from workflow.operations import operation_named

NEVER_WRITES = "Retired; never writes: every call answers REVIEW_REQUIRED and changes nothing."


def _steps(tool: str) -> str:
    review, cite = RETIRED[tool]
    keys = ", ".join(operation_named(tool).keys)
    return (
        f'{review} → prepare_write(operation="{tool}", arguments={{{keys}}}, '
        f"review_ids=[{cite}], decision_reason) → commit_write(action_id)"
    )


STEPS = {tool: _steps(tool) for tool in RETIRED}


def description(tool: str) -> str:
    return f"{NEVER_WRITES} Use {STEPS[tool]}."


def _retired(tool: str) -> Callable[[Toolset], ToolResult]:
    def refuse(self: Toolset) -> ToolResult:
        message = f"{tool} is retired and never writes; nothing was changed. Use {STEPS[tool]}."
        return refused(AnchorError(REVIEW_REQUIRED, message, replacement=STEPS[tool]))

    refuse.__name__ = refuse.__qualname__ = tool
    refuse.__doc__ = description(tool)  # from the same steps its refusal gives
    return refuse


LegacyWriteTools = type("LegacyWriteTools", (Toolset,), {t: _retired(t) for t in RETIRED})
