"""The cached output validator behaves exactly like jsonschema.validate, once per schema."""

from __future__ import annotations

import jsonschema
import pytest
from mcp.server.lowlevel import server as lowlevel_server

from workflow.mcp import sdk_speedups
from workflow.mcp.catalogue import ENVELOPE_SCHEMA


def test_the_sdk_server_uses_the_cached_validator():
    assert lowlevel_server.jsonschema.validate is sdk_speedups.cached_validate


def test_cached_validation_accepts_and_refuses_like_jsonschema():
    sdk_speedups.cached_validate({"ok": True, "result": {"a": 1}, "error": None}, ENVELOPE_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        sdk_speedups.cached_validate({"result": 1}, ENVELOPE_SCHEMA)  # "ok" is required
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"result": 1}, ENVELOPE_SCHEMA)
    with pytest.raises(jsonschema.SchemaError):
        sdk_speedups.cached_validate({}, {"type": "no-such-type"})


def test_each_schema_is_checked_once(monkeypatch):
    schema = {"type": "object", "required": ["ok"]}
    checks = []
    validator = jsonschema.validators.validator_for(schema)
    original = validator.check_schema

    def counted_check(cls, checked_schema):
        checks.append(1)
        return original(checked_schema)

    monkeypatch.setattr(validator, "check_schema", classmethod(counted_check))
    for _ in range(5):
        sdk_speedups.cached_validate({"ok": True}, schema)
    assert len(checks) == 1
