"""MCP tool catalogue, autodiscovered by django-mcp-server.

Importing the toolset modules registers their classes. Each tool is a thin wrapper: parse the
arguments, call a workflow or records function, wrap the envelope. No business rules here.
"""

from workflow.tools import agendas, legacy, reads, reviews, session, writes  # noqa: F401
