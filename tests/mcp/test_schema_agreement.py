"""The published input schema and the server's argument check agree, for every tool.

Calls generated from each tool's schema as tools/list publishes it: every call the schema
accepts passes the server's check, and every call it refuses (a wrong type, a missing required
key, an unknown key, an item past a bound) the server refuses as INVALID_INPUT naming the field.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator

from records.errors import INVALID_INPUT, AnchorError
from workflow.mcp import sdk
from workflow.mcp.calls import checker_for

WRONG_VALUES: list[Any] = [None, True, 7, 1.5, "text", [1], {"x": 1}]


def served_tools() -> list[Any]:
    return list(sdk.tool_table().values())


TOOL_NAMES = sorted(tool.name for tool in served_tools())


def tool_named(name: str) -> Any:
    tool = sdk.served_tool(name)
    assert tool is not None
    return tool


@pytest.mark.parametrize("name", TOOL_NAMES)
@settings(
    max_examples=15,
    deadline=None,
    # filter_too_much: open objects (a batch_read item's own arguments) are slow to generate.
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.filter_too_much,
    ],
)
@given(data=st.data())
def test_every_call_the_schema_accepts_passes_the_check(name, data):
    tool = tool_named(name)
    arguments = data.draw(from_schema(copy.deepcopy(tool.parameters)))
    checker_for(tool).check(arguments)  # raises AnchorError if the two disagree


def invalid_variants(schema: dict[str, Any], valid: dict[str, Any]) -> list[dict[str, Any]]:
    """Mutations of one valid call that the published schema itself refuses."""
    validator = Draft202012Validator(schema)
    variants = []
    for key in schema.get("required", []):
        missing = copy.deepcopy(valid)
        missing.pop(key, None)
        variants.append(missing)
    if schema.get("additionalProperties") is False:
        variants.append({**valid, "no_such_argument": 1})
    for key in schema.get("properties", {}):
        for wrong in WRONG_VALUES:
            variants.append({**valid, key: wrong})
    return [v for v in variants if not validator.is_valid(v)]


@pytest.mark.parametrize("name", TOOL_NAMES)
@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_every_call_the_schema_refuses_the_server_refuses_naming_the_field(name, data):
    tool = tool_named(name)
    valid = data.draw(from_schema(copy.deepcopy(tool.parameters)))
    variants = invalid_variants(copy.deepcopy(tool.parameters), valid)
    for arguments in variants:
        with pytest.raises(AnchorError) as refused:
            checker_for(tool).check(arguments)
        assert refused.value.code == INVALID_INPUT
        field = refused.value.details.get("field", "")
        assert field, f"{name}: refusal of {arguments!r} names no field"


def test_nested_shapes_are_published(db):
    search = tool_named("search_records").parameters
    condition = search["$defs"]["Condition"]
    assert condition["additionalProperties"] is False
    assert "between" in condition["properties"]["op"]["enum"]
    assert set(condition["required"]) == {"field", "op"}
    metric = tool_named("aggregate").parameters["$defs"]["Metric"]
    assert metric["properties"]["op"]["enum"] == ["count", "sum", "avg", "min", "max"]
    operation = tool_named("prepare_write").parameters["properties"]["operation"]
    assert "create_record" in operation["enum"] and "link_records" in operation["enum"]
