"""SQL for reading one nested field of a record's data, the same way on both backends.

A step into anything but an object is "missing" on both: SQLite's $."k" never indexes arrays,
and on PostgreSQL each parent is checked to be an object (#> would read "0" as an index)."""

from __future__ import annotations

from records.selectors.sql import Sql, compose, vendor

SQLITE_TYPES = {
    "null": ("null",),
    "boolean": ("true", "false"),
    "number": ("integer", "real"),
    "string": ("text",),
    "array": ("array",),
    "object": ("object",),
}


class DataField:
    def __init__(self, keys: list[str], column: str = "r.data") -> None:
        self.keys = keys
        self.column = column
        self.sqlite = vendor() == "sqlite"

    def sqlite_path(self) -> str:
        # Keys were validated free of double quotes, backslashes and control characters.
        return "$" + "".join(f'."{key}"' for key in self.keys)

    def value(self) -> Sql:
        """SQLite: the SQL value (json_extract); PostgreSQL: the jsonb value or NULL."""
        if self.sqlite:
            return Sql(f"json_extract({self.column}, %s)", (self.sqlite_path(),))
        if len(self.keys) == 1:
            return Sql(f"({self.column} -> %s)", (self.keys[0],))
        guards = " AND ".join(
            f"jsonb_typeof({self.column} #> %s::text[]) = 'object'" for _ in self.keys[1:]
        )
        params = tuple(self.keys[:depth] for depth in range(1, len(self.keys)))
        return Sql(
            f"(CASE WHEN {guards} THEN {self.column} #> %s::text[] END)", (*params, self.keys)
        )

    def kind(self) -> Sql:
        """The stored value's JSON type name (SQLite json_type, PostgreSQL jsonb_typeof)."""
        if self.sqlite:
            return Sql(f"json_type({self.column}, %s)", (self.sqlite_path(),))
        return self.value().wrap("jsonb_typeof({})")

    def type_is(self, *kinds: str) -> Sql:
        names = [name for kind in kinds for name in SQLITE_TYPES[kind]] if self.sqlite else kinds
        return self.kind().wrap("{} IN (" + ", ".join(f"'{name}'" for name in names) + ")")

    def present(self) -> Sql:
        """True for any stored value, JSON null included."""
        return (self.kind() if self.sqlite else self.value()).wrap("{} IS NOT NULL")

    def absent(self) -> Sql:
        return (self.kind() if self.sqlite else self.value()).wrap("{} IS NULL")

    def number(self) -> Sql:
        """The numeric value; only meaningful where type_is("number") holds."""
        if self.sqlite:
            return self.value()
        # PostgreSQL may evaluate the cast before a sibling type check, so it guards itself.
        value = self.value()
        return compose("CASE WHEN jsonb_typeof({}) = 'number' THEN ({})::numeric END", value, value)

    def string(self) -> Sql:
        """The string value, compared by code point on both backends."""
        if self.sqlite:
            return self.value()
        return self.value().wrap("(({}) #>> '{{}}') COLLATE \"C\"")

    def json_text(self) -> Sql:
        """A JSON rendering that tells 1 from 1.0 and "1" from 1; NULL when missing."""
        if not self.sqlite:
            return self.value().wrap("({})::text")
        kind, value = self.kind(), self.value()
        return compose(
            "CASE WHEN {} IN ('object', 'array') THEN anchor_canonical_json({}) "
            # json_extract gives 1 and 0 for true and false: keep them booleans.
            "WHEN {} IN ('true', 'false') THEN {} WHEN {} IS NOT NULL THEN json_quote({}) END",
            *(kind, value, kind, kind, kind, value),
        )
