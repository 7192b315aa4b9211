"""What a dotted data path an agent sends means, as a list of keys. No Django here: the MCP
argument check imports it before Django is set up."""

from __future__ import annotations


def data_keys(dotted: str) -> list[str]:
    """The keys a dotted path such as "data.offer.ctc" means: paths start inside the record's
    data, so a leading "data" is the record's, not a key ("data.amount" is ["amount"])."""
    keys = dotted.split(".")
    return keys[1:] if len(keys) > 1 and keys[0] == "data" else keys
