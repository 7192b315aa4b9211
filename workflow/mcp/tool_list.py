"""The tool list in one place: titles, behaviour annotations, profiles, strict arguments.

Each registered tool gets a title and the hints clients use to decide what needs a person's
approval (`tool_hints.json`), and a strict argument list; only the chosen profile's tools are
served. A tool missing there is served with cautious hints and named in the log (and fails the
tool-list test). Why some hints are as they are:

- Reviews store a ticket but change no data, so they are read-only: clients may run them
  unprompted. list_changes moves only the caller's own read mark, never a record: not
  read-only, and nothing is lost.
- A prepare stores a proposal only; its commit applies it, and a replay of a committed action
  changes nothing (idempotent). Archive and unlink hide or remove data, so commits are
  destructive.
- agenda_sync_records overwrites data.status and data.agenda_outcome of bound records (not
  additive); a repeat writes no synced item again, and the same token twice is refused.
- The retired one-step writes are in the full list so old clients learn the new path (each
  with the review to run and the ID to cite, `workflow.mcp.tools.legacy`); they never write,
  and a call by name answers with that path whatever the profile (`callable_tool`).
"""

from __future__ import annotations

import inspect
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from mcp.types import ToolAnnotations

from workflow.mcp import sdk

logger = logging.getLogger("anchor.tool_list")


@dataclass(frozen=True)
class ToolMeta:
    title: str
    read_only: bool = False
    destructive: bool = False  # data can be lost or hidden
    idempotent: bool = False  # repeating the same call changes nothing more
    core: bool = False
    open_arguments: bool = False  # retired tools accept anything and refuse it themselves


_HINTS = json.loads(Path(__file__).with_name("tool_hints.json").read_text())
# Each retired tool's replacement: (how to review, which reviews to cite).
RETIRED: dict[str, tuple[str, str]] = {name: tuple(how) for name, how in _HINTS["retired"].items()}
TOOL_LIST: dict[str, ToolMeta] = {
    name: ToolMeta(**hints) for name, hints in _HINTS["tools"].items()
} | {
    name: ToolMeta(
        f"Retired: {name.replace('_', ' ')}", read_only=True, idempotent=True, open_arguments=True
    )
    for name in RETIRED
}

_all_tools: dict[str, Any] = {}


def _compact(schema: Any, strict: bool) -> Any:
    """Drop generated titles, spell an optional parameter as ["<type>", "null"], and make
    every object refuse unknown keys unless it allows them (pydantic drops them instead). The
    schema is what `workflow.mcp.arguments` enforces, so it says where null is accepted and
    which keys are known; a forbidding model per shape would build every model and schema twice,
    most of the tool list's start-up."""
    if isinstance(schema, list):
        return [_compact(item, strict) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "properties":
            out[key] = {name: _compact(prop, strict) for name, prop in value.items()}
        elif key == "anyOf" and isinstance(value, list) and {"type": "null"} in value:
            rest = [branch for branch in value if branch != {"type": "null"}]
            if len(rest) == 1 and isinstance(rest[0].get("type"), str):
                out.update(_compact(rest[0], strict))
                out["type"] = [rest[0]["type"], "null"]
            else:
                out[key] = [*_compact(rest, strict), {"type": "null"}]
        else:
            out[key] = _compact(value, strict)
    if strict and "properties" in out and "additionalProperties" not in out:
        # In pydantic's key order (sorted), so the schema is byte for byte what it would make.
        out = dict(sorted({**out, "additionalProperties": False}.items()))
    return out


def describe(tool: Any) -> None:
    meta = TOOL_LIST.get(tool.name)
    if meta is None:
        logger.warning("tool %s has no tool-list entry; serving it with cautious hints", tool.name)
        meta = ToolMeta(tool.name.replace("_", " ").capitalize(), destructive=True)
    tool.title = meta.title
    # Docstrings carry their source indentation; the model pays for every space.
    tool.description = inspect.cleandoc(tool.description or "")
    tool.annotations = ToolAnnotations(
        readOnlyHint=meta.read_only,
        destructiveHint=meta.destructive,
        idempotentHint=meta.idempotent,
        openWorldHint=False,
    )
    # Retired tools accept anything and refuse it themselves.
    tool.parameters = _compact(tool.parameters, strict=not meta.open_arguments)
    # No outputSchema: every tool returns the same envelope (README, instructions), and a
    # schema saying so cost ~1,450 tokens of the tool list for nothing a client can use.
    # structuredContent is still sent (workflow.mcp.calls).
    tool.fn_metadata = tool.fn_metadata.model_copy(update={"output_schema": None})
    tool.__dict__.pop("output_schema", None)  # a cached_property on the SDK's Tool


def parse_selection(value: str) -> set[str]:
    """A profile name, or a comma-separated list of tool names."""
    names = [part.strip() for part in value.split(",") if part.strip()]
    if names == ["full"]:
        return set(_all_tools)
    if names == ["core"]:
        return {name for name in _all_tools if name in TOOL_LIST and TOOL_LIST[name].core}
    unknown = sorted(set(names) - set(_all_tools))
    if not names or unknown:
        raise ImproperlyConfigured(
            f"ANCHOR_TOOLS / --tools: {', '.join(unknown) or repr(value)} is not a profile or "
            "tool. Use core or full, or a comma-separated list of: "
            f"{', '.join(sorted(_all_tools))}."
        )
    return set(names)


def callable_tool(name: str) -> Any:
    """The tool a call by this name runs: a served one, or a retired one, served or not."""
    return sdk.served_tool(name) or (_all_tools.get(name) if name in RETIRED else None)


def registered(name: str) -> Any:
    """A registered tool by name, served by this profile or not (None if there is none)."""
    return _all_tools.get(name)


def install(server: Any, selection: str) -> None:
    if not _all_tools:
        _all_tools.update(sdk.tool_table(server))
        for tool in _all_tools.values():
            describe(tool)
    chosen = parse_selection(selection)
    sdk.serve_only_tools(
        {name: tool for name, tool in _all_tools.items() if name in chosen}, server
    )
