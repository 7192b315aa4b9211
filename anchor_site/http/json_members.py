"""How many members (object keys and array elements) a JSON body holds, counted before parsing:
parsing costs per member (200,000 keys took a hundred times as long as the same bytes in one
string), so /mcp refuses a body with more members than any tool call needs.
"""

from __future__ import annotations

import re

MAX_MEMBERS = 50_000
_STRING = re.compile(rb'"[^"]*"')


def _separators(body: bytes) -> int:
    # Each member but a container's first follows a comma: an upper bound on the members.
    return body.count(b",") + body.count(b"[") + body.count(b"{")


def too_many_members(body: bytes) -> bool:
    # Exact but for commas and brackets inside strings: most bodies are settled here.
    if _separators(body) <= MAX_MEMBERS:
        return False
    # Without its escaped backslashes and quotes (read in pairs from the left, as a parser
    # does), every string is two quotes with none between: all found in C, none in Python.
    plain = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    # A member brings at most two strings (a key and its value): more strings than twice the
    # limit settle it without reading them.
    if plain.count(b'"') // 2 > 2 * MAX_MEMBERS:
        return True
    return _separators(_STRING.sub(b"", plain)) > MAX_MEMBERS
