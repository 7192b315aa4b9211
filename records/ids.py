"""Identifiers: UUIDs kept as canonical strings so triggers and Python build identical keys."""

from __future__ import annotations

import re
import uuid

# The canonical form, as str(uuid4()) writes it: lowercase hex in five hyphenated groups.
_CANONICAL = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def new_id() -> str:
    return str(uuid.uuid4())


def is_valid_id(value: object) -> bool:
    return isinstance(value, str) and _CANONICAL.fullmatch(value) is not None
