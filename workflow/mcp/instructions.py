"""The server instructions every MCP client receives at initialize, built from the tools
served: a rule naming a tool the profile does not offer is left out.

The words are in `instructions.json`: the introduction's lines, then each rule with the tools it
names. (discover_collections says itself to come before creating a collection, in its
description.)
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from workflow.mcp import sdk

_TEXT = json.loads(Path(__file__).with_suffix(".json").read_text())
INTRODUCTION = "\n".join(_TEXT["introduction"])
# (tools the rule names, the rule). A rule is given only when every tool it names is served.
RULES = [(frozenset(rule["needs"]), rule["rule"]) for rule in _TEXT["rules"]]


def instructions_for(served: Iterable[str]) -> str:
    tools = set(served)
    lines = [f"- {rule}" for needs, rule in RULES if needs <= tools]
    return INTRODUCTION + "\n" + "\n".join(lines) + "\n"


# The full profile's instructions (every rule).
SERVER_INSTRUCTIONS = instructions_for(frozenset().union(*(needs for needs, _ in RULES)))


def install_server_instructions(served: Iterable[str]) -> None:
    # django-mcp-server builds its server object at import; set the instructions on it.
    sdk.set_instructions(instructions_for(served))


def current_instructions() -> str:
    """What this server sent in its initialize result (its profile's rules)."""
    return sdk.instructions() or SERVER_INSTRUCTIONS
