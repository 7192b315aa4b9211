"""One workaround in the MCP SDK's server, in one place: validate tool output with a cached
validator.

mcp 1.x's low-level server checks every structured tool result with `jsonschema.validate`,
which rebuilds a validator and re-checks the schema against the meta-schema on every call:
about 2 ms of a 3 ms no-op round trip. The schemas are fixed for the life of the process, so
this builds each validator once; errors are raised exactly as `jsonschema.validate` raises them.
Remove it when the SDK caches validators itself.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import jsonschema
from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for

_validators: dict[int, tuple[Any, Any]] = {}
_lock = threading.Lock()


def cached_validate(instance: Any, schema: Any, *args: Any, **kwargs: Any) -> None:
    entry = _validators.get(id(schema))
    if entry is None or entry[0] is not schema:  # the schema object is kept, so ids stay unique
        cls = validator_for(schema)
        cls.check_schema(schema)
        entry = (schema, cls(schema))
        with _lock:
            _validators[id(schema)] = entry
    error = best_match(entry[1].iter_errors(instance))
    if error is not None:
        raise error


def install() -> None:
    from mcp.server.lowlevel import server as lowlevel_server

    lowlevel_server.jsonschema = SimpleNamespace(
        validate=cached_validate, ValidationError=jsonschema.ValidationError
    )
