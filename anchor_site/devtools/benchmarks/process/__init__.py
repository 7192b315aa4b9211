"""The mcp_serve process itself: what a model reads first, start-up and shut-down, memory."""
