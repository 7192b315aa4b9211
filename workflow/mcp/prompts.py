"""MCP prompts for the everyday starts (slash commands in clients such as Claude Code): each a
short user message setting the agent on Anchor's path; none reads or writes anything itself.

The prompts are `prompts.json`: each as prompts/list shows it, with the tools its text tells the
agent to call (`needs`: offered only when all of them are served) and the text, whose
`{argument}` the user's value fills in.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp import types

from workflow.mcp import sdk

PROMPTS: dict[str, dict[str, Any]] = {
    prompt["name"]: prompt for prompt in json.loads(Path(__file__).with_suffix(".json").read_text())
}


def _offered() -> list[dict[str, Any]]:
    return [p for p in PROMPTS.values() if all(sdk.served_tool(n) for n in p["needs"])]


async def list_prompts() -> list[types.Prompt]:
    return [
        types.Prompt(**{k: v for k, v in prompt.items() if k not in ("needs", "text")})
        for prompt in _offered()
    ]


async def get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
    offered = _offered()
    prompt = PROMPTS.get(name)
    if prompt not in offered:
        shown = ", ".join(p["name"] for p in offered)
        raise sdk.invalid_params(f"Unknown prompt {name[:100]!r}; prompts/list shows: {shown}.")
    text = prompt["text"]
    for argument in prompt["arguments"]:
        value = (arguments or {}).get(argument["name"], "")
        if argument["required"] and not value.strip():
            raise sdk.invalid_params(
                f"Prompt {name} needs the argument {argument['name']!r}: {argument['description']}"
            )
        text = text.replace("{" + argument["name"] + "}", value)
    return types.GetPromptResult(
        description=prompt["description"],
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        ],
    )
