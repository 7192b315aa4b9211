"""Agendas as MCP tools: freeze a list, work it item by item, never drift."""
