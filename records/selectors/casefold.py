"""Casefolded substring match on titles, identical to Python's str.casefold on both backends.

SQLite's lower() and LIKE fold ASCII only, so SQLite calls a deterministic function registered on
the connection (str.casefold itself) inside the scan; no rows travel to Python. PostgreSQL's
lower() applies Unicode simple lowercase mapping under a UTF-8 locale; full casefolding differs
from it on about 200 characters (ß→ss, ſ→s, final sigma, Cherokee, ligatures), which a guarded
replace() chain and one short translate() close exactly (checked over every code point in the
tests). A PostgreSQL database whose lower() is ASCII-only gets a full translate table instead:
correct, but about 400x slower per row. Both are sequential scans: a substring cannot use a
B-tree index, and scans stop at the page limit.
"""

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
    multi, residual, single = _tables()
    # The replace chain runs only on titles holding one of its characters.
    chain = Sql(column)
    for char, folded in multi.items():
        chain = chain.wrap("replace({}, %s, %s)", char, folded)
    # None of these characters is special in a bracket expression.
    pattern = "[" + "".join(multi) + "]"
    unfolded = Sql(f"CASE WHEN {column} ~ %s THEN {chain.text} ELSE {column} END")
    unfolded = Sql(unfolded.text, (pattern, *chain.params))
    if _postgres_lower_is_unicode():
        sources, targets = "".join(residual), "".join(residual.values())
        return unfolded.wrap("translate(lower({}), %s, %s)", sources, targets)
    sources, targets = "".join(single), "".join(single.values())
    return unfolded.wrap("translate({}, %s, %s)", sources, targets)


def _postgres_lower_is_unicode() -> bool:
    return _probe_lower(connection.alias, str(connection.settings_dict.get("NAME")))


@cache
def _probe_lower(alias: str, database: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT lower(%s)", ["ÀΣĲ"])
        return cursor.fetchone()[0] == "àσĳ"
