"""The two checks every test makes on a tool's reply envelope, whatever carried it.

Every tool answers `{"ok": true, "result": ...}` or `{"ok": false, "error": {"code": ...}}`.
The transports' drivers (in process, stdio, HTTP, the reliability harness) only fetch the
envelope; these functions judge it, so a refusal reads the same in every test's failure.
"""

from __future__ import annotations

from typing import Any


def _label(name: str, arguments: Any) -> str:
    return name if arguments is None else f"{name}({arguments})"


def _checked(envelope: Any, label: str) -> dict[str, Any]:
    assert isinstance(envelope, dict) and isinstance(envelope.get("ok"), bool), (
        f"{label} did not answer with a tool envelope: {envelope!r}"
    )
    return envelope


def expect_ok(envelope: Any, name: str, arguments: Any = None) -> Any:
    """The result of a call that must have succeeded; `arguments` only enrich the message."""
    label = _label(name, arguments)
    reply = _checked(envelope, label)
    assert reply["ok"], f"{label} was refused: {reply.get('error')}"
    return reply["result"]


def expect_refused(envelope: Any, name: str, code: str, arguments: Any = None) -> dict[str, Any]:
    """The error of a call that must have been refused with `code`."""
    label = _label(name, arguments)
    reply = _checked(envelope, label)
    assert not reply["ok"], f"{label} should have been refused with {code}: {reply}"
    error = reply["error"]
    assert error["code"] == code, f"{label} was refused with {error['code']}, not {code}: {error}"
    return error
