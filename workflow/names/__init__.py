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

On a miss a snapshot is the cached one or the stored row brought forward by the names log
(only the changed records' entries replaced), else the records read whole. The log proves its
own completeness (one row for every move between two revisions), so nothing is ever guessed:
a gap, or more changes than patching pays for, reads the next source.

Matching (match.py) scans every name with rapidfuzz; similarity (rule.py) is a ranking
heuristic, never evidence of identity. delta.py asks whether the names written since a review
can change its answer.
"""
