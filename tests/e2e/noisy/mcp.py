"""One tool that writes to stdout through print, sys.__stdout__, fd 1 and a stdout logger."""

import logging
import os
import sys

from workflow.mcp.envelope import ToolResult, run_tool
from workflow.mcp.tools.base import Toolset

stdout_logger = logging.getLogger("tests.e2e.noisy")
stdout_logger.addHandler(logging.StreamHandler(sys.stdout))
stdout_logger.propagate = False


class StrayOutputTools(Toolset):
    def emit_stray_output(self) -> ToolResult:
        """Write junk to stdout in every common way, then return normally."""
        return run_tool(write_everywhere)


def write_everywhere() -> str:
    print("STRAY-PRINT from a tool")  # noqa: T201 - the stray output under test
    sys.stdout.flush()
    if sys.__stdout__ is not None:
        sys.__stdout__.write("STRAY-DUNDER via sys.__stdout__\n")
        sys.__stdout__.flush()
    os.write(1, b"STRAY-FD1 via os.write(1)\n")
    stdout_logger.warning("STRAY-LOG via a handler made for sys.stdout")
    return "written"
