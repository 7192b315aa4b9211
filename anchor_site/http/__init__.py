"""Team mode: the authenticated MCP endpoint over streamable HTTP, and its safety checks."""
