"""Agendas as MCP tools: freeze a list, work it item by item, never drift.

One job per module: tokens (cursor tokens, presentation IDs), inputs (argument checks),
chain (the hash-chained event log and state hash), guard (the locked, token-checked mutation
frame), start, steps, layers, lifecycle, presentation (what the agent is shown), sync (outcomes
back to bound records), health (read-only checks), reads (view and list).
"""
