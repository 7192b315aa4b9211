"""The tool list as a client receives it: tools/list, in tokens (compact JSON chars / 4)."""

from __future__ import annotations

import json

from anchor_site.devtools.benchmarks.measure import Row
from anchor_site.devtools.benchmarks.server import RawServer

AREA = "tool_list"
FULL_BUDGET = 10_000
CORE_BUDGET = 5_000


def listed_tokens(profile: str) -> tuple[int, int]:
    """(tokens, tool count) of tools/list served with ANCHOR_TOOLS=profile."""
    server = RawServer(ANCHOR_TOOLS=profile)
    try:
        server.initialize()
        tools = server.request("tools/list", {})["tools"]
    finally:
        server.close()
    text = json.dumps(tools, separators=(",", ":"), ensure_ascii=False)
    return len(text) // 4, len(tools)


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
