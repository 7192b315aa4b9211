"""Every title and alias in a scope, held in memory and matched with one rule on both backends.

A scope is a collection, or the whole workspace. Its names live in four places: the records and
their aliases (the truth); the scope's `names:` revision counter (records.counters), moved by a
database trigger in the same transaction as any write that changes a name in the scope, and
the names log (records.name_log), one row per move naming the record that moved it; a stored
copy (workflow.models.StoredNameList, for scopes of 2,000 records or more) at one revision,
whose storing prunes the log up to it; and this process's cache (records.scope_cache) of
immutable snapshots (view.py).

`cache.scope_names` reads the counter first, then answers with a snapshot at exactly that
revision (or a newer stored one), never an older one: a write racing the read leaves the
snapshot behind the database, never ahead of the counter a review ticket records. A snapshot
never changes once made, so a thread may keep matching with one while another replaces it.

On a miss the snapshot comes from the first source that can say it: the cached snapshot plus
the names log since its revision (the changed records' current entries, read in one statement,
replace theirs: `ScopeNames.patched`); the stored row plus the log, the same way; the records,
read whole (and the row stored again). The log proves its own completeness: one row for every
move between two revisions, else the next source is used (a gap after pruning, a load that went
around the triggers, more changes than MAX_CHANGED_SHARE of the scope). Nothing is guessed.

A snapshot is a shared base (names joined in one string for C-speed exact and whole-word
finds, record IDs packed 16 bytes each, displays held empty where the name title-cased gives
them) plus two small parts of its own: the base entries of records replaced since (`dead`) and
the entries written since (`tail`). A patch copies only those; once they outgrow a fifth of the
base, the next read starts afresh.

Matching (match.py) scans every name with rapidfuzz; similarity (rule.py) is a ranking
heuristic, never evidence of identity. delta.py asks whether the names written since a review
can change its answer.
"""
