"""The whole MCP layer: tools, tool list, envelope, instructions, stdio transport and every
adaptation of the SDK. Importing it loads nothing, so `manage.py` can claim stdio before Django
starts; `workflow.mcp.server.install()` registers the tools once the workflow app is ready.
"""
