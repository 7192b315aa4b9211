"""Connections to give up: one that met a storage fault, or one left read-only by a healed one.

A pooled connection that met a read-only, disk-full or lost-connection error is closed as it
goes back (anchor_site.db_pool); a kept one (stdio) by the tool call that met it. A connection
opened read-only (PostgreSQL's default_transaction_read_only, an unwritable SQLite file) stays
so after the database heals: the servers look before it serves a call and replace it. The look
is free: PostgreSQL reports the setting, and only a SQLite connection opened read-only is checked.
"""

from __future__ import annotations

import os
from typing import Any

from django.db import DatabaseError
from django.db.backends.base.base import BaseDatabaseWrapper

from records.storage_faults import CONNECTION_LOST, DISK_FULL, READ_ONLY, storage_fault

READ_ONLY_SETTING = "default_transaction_read_only"
# A pooled connection that met one of these is closed rather than handed out again.
GIVE_UP_ON = (READ_ONLY, DISK_FULL, CONNECTION_LOST)

# Whether a session read-only by default would start writable now: a setting from the database
# or role settings is compared with what those say now, most specific first (one from the
# server's configuration follows its reloads).
LEFT_READ_ONLY = """
SELECT s.source NOT IN (
           'default', 'configuration file', 'command line', 'environment variable', 'client')
       AND NOT coalesce((
           SELECT split_part(c, '=', 2)::bool
           FROM pg_db_role_setting r, unnest(r.setconfig) c
           WHERE starts_with(c, 'default_transaction_read_only=')
             AND r.setdatabase IN (
                 0, (SELECT oid FROM pg_database WHERE datname = current_database()))
             AND r.setrole IN (0, (SELECT oid FROM pg_roles WHERE rolname = session_user))
           ORDER BY r.setrole <> 0 DESC, r.setdatabase <> 0 DESC
           LIMIT 1), false)
FROM pg_settings s WHERE s.name = 'default_transaction_read_only'
"""


def postgres_left_read_only(raw: Any) -> bool:
    """A psycopg connection whose session is read-only though a new one would not be."""
    if raw.info.parameter_status(READ_ONLY_SETTING) != "on":
        return False
    row = raw.execute(LEFT_READ_ONLY).fetchone()
    if not raw.autocommit:
        raw.rollback()  # the look opened a transaction; leave the connection idle
    return bool(row and row[0])


def note_new_connection(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """connection_created receiver (records.apps), on every connect (a pool's hand-out too):
    a pooled connection left read-only is dropped with its idle siblings and another taken; a
    pooled one notes the faults it meets; a SQLite one notes whether it opened read-only."""
    pool = getattr(connection, "pool", None)
    if pool is not None:
        if postgres_left_read_only(connection.connection):
            connection.connection.close()
            connection.close()  # a closed connection goes back only to be dropped
            pool.drain()
            connection.connect()  # runs this receiver again, for the new connection
            return
        if _note_faults not in connection.execute_wrappers:
            # First, so a bound's own wrapper (pushed and popped around a call) stays on top.
            connection.execute_wrappers.insert(0, _note_faults)
    opened_read_only = False
    if connection.vendor == "sqlite":
        path = str(connection.settings_dict["NAME"])
        opened_read_only = os.path.exists(path) and not os.access(path, os.W_OK)
    connection.anchor_opened_read_only = opened_read_only  # type: ignore[attr-defined]


def left_read_only(connection: BaseDatabaseWrapper) -> bool:
    """The open connection is read-only though the database it reaches no longer is."""
    raw = connection.connection
    if raw is None:
        return False
    if connection.vendor == "postgresql":
        return postgres_left_read_only(raw)
    if getattr(connection, "anchor_opened_read_only", False):
        return os.access(str(connection.settings_dict["NAME"]), os.W_OK)
    return False


def _note_faults(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
    try:
        return execute(sql, params, many, context)
    except DatabaseError as exc:
        raw = context["connection"].connection
        if raw is not None and storage_fault(exc).cause in GIVE_UP_ON:
            raw.anchor_fault = True  # read by anchor_site.db_pool as it goes back
        raise
