"""Name normalisation: the one rule used for uniqueness, exact matching and similarity."""

from __future__ import annotations

import unicodedata


def normalize_name(value: str) -> str:
    """NFKC, casefold, collapse whitespace: "  Zoë   MÜLLER" and "zoë müller" are one name."""
    folded = unicodedata.normalize("NFKC", value).casefold()
    return " ".join(unicodedata.normalize("NFKC", folded).split())
