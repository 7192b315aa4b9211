"""Casefolded substring match on titles, identical to Python's str.casefold on both backends.

SQLite calls str.casefold registered on the connection (its lower() folds ASCII only).
PostgreSQL's lower() differs from full casefolding on about 200 characters (ß→ss, final sigma,
ligatures...), closed by a guarded replace() chain and translate() (checked over every folded
character in the tests); with an ASCII-only lower() it translates with the full table."""

from __future__ import annotations

from functools import cache

from django.db import connection

from records.selectors.sql import Sql, vendor

# Casefolding changes no code point above this one (Unicode 15; checked by a test).
LAST_FOLDED_CODE_POINT = 0x1FFFF


@cache
def _tables() -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """(multi, residual, single): multi-character folds, what lower() leaves, and all 1:1 folds."""
    multi: dict[str, str] = {}
    residual: dict[str, str] = {}
    single: dict[str, str] = {}
    for code_point in range(LAST_FOLDED_CODE_POINT + 1):
        if 0xD800 <= code_point <= 0xDFFF:
            continue
        char = chr(code_point)
        folded = char.casefold()
        if folded == char:
            continue
        if len(folded) > 1:
            multi[char] = folded
            continue
        single[char] = folded
        # What lower() leaves unfolded. Cherokee is here too: lower() maps its capitals to small
        # letters, which casefold maps back to capitals.
        lowered = char.lower()
        if lowered != folded:
            residual[lowered] = folded
    return multi, residual, single


def title_contains(query: str, column: str = "r.title") -> Sql:
    needle = query.casefold()
    if vendor() == "sqlite":
        return Sql(f"instr(anchor_casefold({column}), %s) > 0", (needle,))
    return _postgres_casefold(column).wrap("strpos({}, %s) > 0", needle)


def _postgres_casefold(column: str) -> Sql:
    """translate() costs ~25 µs per row, so it (and the replace chain) run only on titles that
    hold a character needing it; a regex class check costs under 1 µs."""
    multi, residual, single = _tables()
    chain = Sql(column)
    for char, folded in multi.items():
        chain = chain.wrap("replace({}, %s, %s)", char, folded)
    unfolded = _only_if_any(Sql(column), multi, chain)
    if _lower_is_unicode(connection.alias, str(connection.settings_dict.get("NAME"))):
        lowered = unfolded.wrap("lower({})")
        translated = lowered.wrap(
            "translate({}, %s, %s)", "".join(residual), "".join(residual.values())
        )
        return _only_if_any(lowered, residual, translated)
    # lower() folds ASCII correctly even here; only non-ASCII titles need the full table.
    translated = unfolded.wrap("translate({}, %s, %s)", "".join(single), "".join(single.values()))
    return Sql(
        f"CASE WHEN {unfolded.text} ~ '[^[:ascii:]]' THEN {translated.text} "
        f"ELSE lower({unfolded.text}) END",
        unfolded.params + translated.params + unfolded.params,
    )


def _only_if_any(value: Sql, chars: dict[str, str], changed: Sql) -> Sql:
    # No character in these tables is special inside a bracket expression (a test checks).
    pattern = "[" + "".join(chars) + "]"
    return Sql(
        f"CASE WHEN {value.text} ~ %s THEN {changed.text} ELSE {value.text} END",
        (*value.params, pattern, *changed.params, *value.params),
    )


@cache
def _lower_is_unicode(alias: str, database: str) -> bool:
    """Whether lower() folds beyond ASCII: asked once per database (the arguments key the cache)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT lower(%s)", ["ÀΣĲ"])
        lowered: str = cursor.fetchone()[0]
        return lowered == "àσĳ"
