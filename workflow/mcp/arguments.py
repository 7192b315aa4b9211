"""The one validation path for every tool's arguments, in front of every tool.

Arguments reach a tool exactly as the client sent them: nothing is JSON-parsed out of a string
(the SDK's own path turns "null" into None and "[1]" into a list), nothing unknown is dropped.
Every problem becomes INVALID_INPUT naming the field, what is wrong and the fix, in a message
of bounded size whatever the input; no pydantic or jsonschema text reaches a client.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError
from jsonschema.exceptions import best_match
from pydantic import ValidationError
from rapidfuzz import fuzz, process

from records.errors import INVALID_INPUT, AnchorError
from records.field_paths import data_keys

# Record data may nest 32 levels (records.validation); the arguments wrap it a few more.
MAX_ARGUMENT_DEPTH = 48
# What an error message may quote of a value the client sent.
MAX_QUOTED_CHARS = 60
MAX_MESSAGE_CHARS = 1_000
SUGGESTION_CUTOFF = 70
MAX_SUGGESTED_KEYS = 8

JSON_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "a JSON object",
    "array": "a list",
    "null": "null",
}
BOUNDS = {
    "maximum": "at most",
    "minimum": "at least",
    "exclusiveMaximum": "below",
    "exclusiveMinimum": "above",
}


def quoted(value: Any) -> str:
    """A short, safe rendering of a client's value for an error message."""
    if isinstance(value, list):
        return f"a list of {len(value):,} items"
    if isinstance(value, dict):
        return "a JSON object"
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > MAX_QUOTED_CHARS:
        text = text[: MAX_QUOTED_CHARS - 1] + "…"
    return text


def field_path(parts: Iterable[Any]) -> str:
    """`requests[2].where[0].op`"""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).removeprefix(".")


def refuse(tool: str, field: str, problem: str, fix: str = "") -> AnchorError:
    message = f"{tool}: `{field}` {problem}" + (f" {fix}" if fix else "")
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[: MAX_MESSAGE_CHARS - 1] + "…"
    return AnchorError(INVALID_INPUT, message, field=field[:200])


def check_plain_json(tool: str, arguments: dict[str, Any]) -> None:
    """Refuse what JSON text can carry but a stored value cannot: NaN, ±Infinity (1e999 reads
    as infinity), lone UTF-16 surrogates in strings or keys, and nesting past the limit
    (iteratively: a pathologically deep value never costs a RecursionError)."""
    stack: list[tuple[list[Any], Any]] = [([name], value) for name, value in arguments.items()]
    while stack:
        path, value = stack.pop()  # a value's depth is its path's length
        if len(path) > MAX_ARGUMENT_DEPTH:
            raise refuse(
                tool,
                field_path(path),
                f"nests deeper than {MAX_ARGUMENT_DEPTH} levels.",
                "Flatten the value.",
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise refuse(
                tool,
                field_path(path),
                "is not a finite number (NaN, Infinity and numbers beyond 1e308 cannot be stored).",
                "Send a finite number, or null or a string if the value is unknown.",
            )
        if isinstance(value, str):
            _check_text(tool, path, value)
        elif isinstance(value, dict):
            for key, item in value.items():
                _check_text(tool, [*path, "<key>"], key)
                stack.append(([*path, key], item))
        elif isinstance(value, list):
            stack.extend(([*path, index], item) for index, item in enumerate(value))


def _check_text(tool: str, path: list[Any], text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise refuse(
            tool,
            field_path(path),
            "contains a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), which is "
            "not text.",
            "Send valid Unicode: pair the surrogates or drop the character.",
        ) from None


class ArgumentChecker:
    """Validate one tool's arguments against its JSON Schema, then build its Python values."""

    def __init__(self, tool_name: str, schema: dict[str, Any], arg_model: Any) -> None:
        self.tool = tool_name
        self.schema = schema
        self.properties: dict[str, Any] = schema.get("properties", {})
        self.validator = Draft202012Validator(schema)
        self.arg_model = arg_model

    def check(self, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """The keyword arguments to call the tool with; AnchorError(INVALID_INPUT) if refused.
        The SDK has parsed `arguments` as an object; check_plain_json bounds their depth before
        the schema's validator walks them."""
        arguments = arguments or {}
        self._check_names(arguments)
        check_plain_json(self.tool, arguments)
        first = next(iter(self.validator.iter_errors(arguments)), None)
        if first is not None:
            raise self._explain(first)
        try:
            model = self.arg_model.model_validate(arguments)
        except ValidationError as exc:
            raise self._explain_model(exc) from None
        return dict(model.model_dump_one_level())

    def _check_names(self, arguments: dict[str, Any]) -> None:
        if self.schema.get("additionalProperties", True) is not False:
            return
        for name in arguments:
            if name in self.properties:
                continue
            shown = quoted(name)
            suggestion = process.extractOne(
                name, list(self.properties), scorer=fuzz.ratio, score_cutoff=SUGGESTION_CUTOFF
            )
            hint = f"Did you mean `{suggestion[0]}`? " if suggestion else ""
            known = ", ".join(self.properties) or "none"
            raise AnchorError(
                INVALID_INPUT,
                f"{self.tool}: unknown argument {shown}. {hint}This tool takes: {known}.",
                field=str(name)[:200],
                **({"did_you_mean": suggestion[0]} if suggestion else {}),
            )

    def _describe(self, top: str) -> str:
        description = self.properties.get(top, {}).get("description", "")
        return f"({top}: {description})" if description else ""

    def _explain(self, error: SchemaError) -> AnchorError:
        path = list(error.absolute_path)
        kind, expected, got = error.validator, error.validator_value, error.instance
        if kind == "required":
            missing = next(
                (name for name in expected if isinstance(got, dict) and name not in got), "?"
            )
            where = field_path([*path, missing])
            top = str(path[0]) if path else missing
            return refuse(self.tool, where, "is required and missing.", self._describe(top))
        field = field_path(path) or "arguments"
        top = str(path[0]) if path else ""
        about = self._describe(top)
        if kind == "anyOf" and all("type" in branch for branch in expected):
            kind = "type"
            expected = [branch["type"] for branch in expected]
        elif kind in ("anyOf", "oneOf") and error.context:
            return self._explain(best_match(error.context))
        if kind == "type":
            wanted = expected if isinstance(expected, list) else [expected]
            names = " or ".join(JSON_TYPE_NAMES.get(str(t), str(t)) for t in wanted)
            extra = ""
            if isinstance(got, str) and wanted == ["array"] and "." in got:
                keys = json.dumps(data_keys(got)[:MAX_SUGGESTED_KEYS], ensure_ascii=False)
                extra = (
                    f" A field is a list of keys from the top of data: {keys}, since a key "
                    "may itself hold a dot."
                )
            elif isinstance(got, str) and "string" not in wanted:
                extra = " Send the value itself, not a string holding it."
            return refuse(self.tool, field, f"must be {names}, not {quoted(got)}.{extra}", about)
        if kind in BOUNDS:
            bound = BOUNDS[str(kind)]
            return refuse(self.tool, field, f"must be {bound} {expected} (got {quoted(got)}).")
        if kind in ("maxItems", "minItems", "maxLength", "minLength"):
            bound = "at most" if str(kind).startswith("max") else "at least"
            items = str(kind).endswith("Items")
            size = len(got)  # the schema checks an array's items, a string's length
            said = (
                f"have {bound} {expected} items" if items else f"be {bound} {expected} characters"
            )
            return refuse(self.tool, field, f"must {said} (got {size:,}).", about)
        if kind == "enum" or kind == "const":
            choices = expected if isinstance(expected, list) else [expected]
            listed = ", ".join(quoted(c) for c in choices[:20])
            return refuse(self.tool, field, f"must be one of {listed} (got {quoted(got)}).")
        if kind == "additionalProperties" and isinstance(got, dict):
            allowed = set(error.schema.get("properties", {}))
            unknown = sorted(str(k) for k in got if k not in allowed)[:5]
            return refuse(
                self.tool,
                field,
                f"has unknown keys {', '.join(quoted(k) for k in unknown)}.",
                f"Allowed: {', '.join(sorted(allowed)) or 'none'}.",
            )
        return refuse(self.tool, field, f"is not valid here ({kind}).", about)

    def _explain_model(self, exc: ValidationError) -> AnchorError:
        # The schema passed, so this is a constraint only the model knows; say it briefly.
        first = exc.errors(include_url=False, include_input=False)[0]
        field = field_path(list(first.get("loc", ()))) or "arguments"
        reason = str(first.get("msg", "is not valid"))[:200]
        top = field.split(".")[0].split("[")[0]
        return refuse(self.tool, field, f"is not valid: {reason}.", self._describe(top))


def plain_json_refusal(request_id: Any, method: Any, params: Any) -> dict[str, Any] | None:
    """The JSON-RPC reply refusing a tools/call whose arguments are not plain JSON values,
    made on the message as parsed, before the SDK turns NaN into null or refuses a lone
    surrogate as malformed: the same INVALID_INPUT envelope as for any bad argument."""
    arguments = params.get("arguments") if isinstance(params, dict) else None
    if method != "tools/call" or not isinstance(arguments, dict):
        return None
    try:
        check_plain_json(str(params.get("name"))[:100], arguments)
    except AnchorError as exc:
        envelope = {"ok": False, "error": exc.as_dict()}
        content = [{"type": "text", "text": json.dumps(envelope, ensure_ascii=False)}]
        result = {"content": content, "structuredContent": envelope, "isError": True}
        return {"jsonrpc": "2.0", "id": request_id, "result": result}
    return None
