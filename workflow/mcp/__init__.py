"""The whole MCP layer: tool classes, tool list, envelope, instructions, stdio transport and
every adaptation of the SDK. Nothing outside this package (but the HTTP view) imports the SDK.

Importing the package loads nothing, so `manage.py` can claim stdio from `workflow.mcp.stdio`
before Django starts; the tools are registered by `workflow.mcp.server.install()` once the
workflow app is ready.
"""
