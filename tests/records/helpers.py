"""Helpers for the store's tests: a selector or service call that must raise AnchorError."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from records.errors import AnchorError


def refused(code: str, field: str | None, call: Callable[..., Any], **kwargs: Any) -> AnchorError:
    """`call(**kwargs)` raises AnchorError with `code`, its message naming `field` if given."""
    with pytest.raises(AnchorError) as caught:
        call(**kwargs)
    assert caught.value.code == code, caught.value.as_dict()
    if field is not None:
        assert field in caught.value.message, caught.value.message
    return caught.value
