"""Identifiers: UUIDs kept as canonical strings so triggers and Python build identical keys."""

from __future__ import annotations

import uuid


def new_id() -> str:
    return str(uuid.uuid4())


def is_valid_id(value: object) -> bool:
    if not isinstance(value, str) or len(value) != 36:
        return False
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False
