"""Drive mcp_serve processes over a raw pipe with deadlines, and inspect their database directly.

The official client hides what these tests are about: how many replies a line gets, how fast,
and what happens to a process that is killed. So each server is a subprocess with its stdout
read through select() and a byte buffer, never a blocking readline(). The database is read
through a plain DB-API connection (sqlite3 or psycopg), not Django, so a check sees exactly
what is on disk and holds no lock the servers could wait on.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.e2e.server import PROTOCOL_VERSION, REPO_ROOT, SERVE
from tests.envelope import expect_ok

# Far above a healthy call here (most take milliseconds); only a hung server reaches it.
CALL_TIMEOUT = 90.0
# The SDK's log line (stderr) as a tools/call reaches its handler.
CALL_BEGAN = b"Processing request of type CallToolRequest"


class ServerGone(Exception):
    """The process closed stdout (exited or was killed) before the awaited reply."""


class RawServer:
    """One `manage.py mcp_serve` process and its protocol pipe."""

    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        self.log_path = log_path
        self._log = open(log_path, "ab")  # noqa: SIM115 - closed in close()/kill()
        self.process = subprocess.Popen(
            SERVE,
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
        )
        self._buffer = b""
        self._next_id = 100
        self.unsolicited: list[dict[str, Any]] = []  # notifications and stray replies, in order

    # --- bytes in, messages out ----------------------------------------------------------------

    def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def read_message(self, timeout: float) -> dict[str, Any] | None:
        """The next stdout line as JSON, or None if none arrives in time. Raises ServerGone."""
        line = self._read_line(timeout)
        if line is None:
            return None
        message = json.loads(line)  # a stray non-JSON line on stdout fails the test here
        assert message.get("jsonrpc") == "2.0", f"not a JSON-RPC message: {line[:300]!r}"
        return message

    def _read_line(self, timeout: float) -> bytes | None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise ServerGone(f"stdout closed; exit status {self.process.poll()}")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def replies_within(self, seconds: float) -> list[dict[str, Any]]:
        """Every message that arrives in the next `seconds`."""
        deadline = time.monotonic() + seconds
        out = []
        while (message := self.read_message(max(0.0, deadline - time.monotonic()))) is not None:
            out.append(message)
        return out

    def reply_to(self, request_id: Any, timeout: float = CALL_TIMEOUT) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self.read_message(max(0.0, deadline - time.monotonic()))
            if message is None:
                raise TimeoutError(f"no reply to request {request_id} within {timeout}s")
            if message.get("id") == request_id and "method" not in message:
                return message
            self.unsolicited.append(message)

    # --- protocol ------------------------------------------------------------------------------

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def request(self, method: str, params: dict[str, Any] | None = None) -> int:
        request_id = self.new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def initialize(self) -> dict[str, Any]:
        request_id = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "anchor-reliability", "version": "1"},
            },
        )
        reply = self.reply_to(request_id)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.initialize_result: dict[str, Any] = reply["result"]
        return reply["result"]

    def send_call(self, name: str, arguments: Any) -> int:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def call(self, name: str, arguments: Any, timeout: float = CALL_TIMEOUT) -> dict[str, Any]:
        """The tools/call result (content, structuredContent, isError) as sent."""
        reply = self.reply_to(self.send_call(name, arguments), timeout)
        assert "result" in reply, f"{name}: JSON-RPC error {reply.get('error')}"
        return reply["result"]

    def envelope(self, name: str, arguments: Any, timeout: float = CALL_TIMEOUT) -> dict[str, Any]:
        return envelope_of(self.call(name, arguments, timeout))

    def ok(self, name: str, arguments: Any, timeout: float = CALL_TIMEOUT) -> Any:
        return expect_ok(self.envelope(name, arguments, timeout), name)

    # --- ending --------------------------------------------------------------------------------

    def close(self, timeout: float = 10) -> int:
        """End of input, then wait for the exit status."""
        try:
            if self.process.stdin and not self.process.stdin.closed:
                self.process.stdin.close()
        except BrokenPipeError:
            pass
        try:
            return self.process.wait(timeout=timeout)
        finally:
            self.kill()

    def terminate(self) -> None:
        self.process.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        for stream in (self.process.stdin, self.process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except BrokenPipeError:
                pass
        self._log.close()

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")


def envelope_of(result: dict[str, Any]) -> dict[str, Any]:
    envelope = result["structuredContent"]
    assert json.loads(result["content"][0]["text"]) == envelope
    assert result["isError"] is (not envelope["ok"]), f"isError disagrees with ok: {result}"
    return envelope


@contextmanager
def running(env: dict[str, str], log_path: Path) -> Iterator[RawServer]:
    server = RawServer(env, log_path)
    try:
        server.initialize()
        yield server
    finally:
        server.kill()


# --- the database, read directly ---------------------------------------------------------------


class Store:
    """A read connection to the servers' database: SQLite file or PostgreSQL URL."""

    def __init__(self, database: dict[str, str]) -> None:
        self.vendor = "postgresql" if "DATABASE_URL" in database else "sqlite"
        if self.vendor == "sqlite":
            self.path = database["ANCHOR_DB_PATH"]
            self.conn: Any = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        else:
            import psycopg

            self.url = database["DATABASE_URL"]
            self.conn = psycopg.connect(self.url, autocommit=True)

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if self.vendor == "postgresql":
            sql = sql.replace("?", "%s")
        cursor = self.conn.execute(sql, params)
        return list(cursor.fetchall())

    def value(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        return self.rows(sql, params)[0][0]

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def hold_write_lock(self, record_id: str) -> Iterator[None]:
        """Another writer mid-transaction: SQLite's write lock, or a PostgreSQL row lock."""
        if self.vendor == "sqlite":
            holder: Any = sqlite3.connect(self.path, timeout=5, isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")
        else:
            import psycopg

            holder = psycopg.connect(self.url)
            holder.execute("SELECT 1 FROM records_record WHERE id = %s FOR UPDATE", (record_id,))
        try:
            yield
        finally:
            holder.rollback() if self.vendor == "postgresql" else holder.execute("ROLLBACK")
            holder.close()

    def lock_waiters(self) -> int:
        """PostgreSQL: statements of this database waiting on a lock."""
        return self.value(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND state = 'active'"
        )

    def free_to_write(self, action_id: str, within: float = 1.0) -> bool:
        """Whether a new writer gets the locks a commit of action_id takes, within `within`s."""
        deadline = time.monotonic() + within
        while True:
            try:
                self._take_commit_locks(action_id)
                return True
            except Exception:
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.05)

    def _take_commit_locks(self, action_id: str) -> None:
        if self.vendor == "sqlite":
            sqlite_probe = sqlite3.connect(self.path, timeout=0.1, isolation_level=None)
            try:
                sqlite_probe.execute("BEGIN IMMEDIATE")
                sqlite_probe.execute("ROLLBACK")
            finally:
                sqlite_probe.close()
            return
        import psycopg

        with psycopg.connect(self.url) as probe:
            probe.execute("SET lock_timeout = '100ms'")
            probe.execute(
                "SELECT 1 FROM workflow_preparedaction WHERE id = %s FOR UPDATE", (action_id,)
            )
            probe.execute("SELECT 1 FROM records_revisioncounter FOR UPDATE")
            probe.rollback()

    def integrity_problems(self) -> list[str]:
        """What a crash could break: the file itself, foreign keys, versions, index, audit."""
        problems: list[str] = []
        if self.vendor == "sqlite":
            verdict = [row[0] for row in self.rows("PRAGMA integrity_check")]
            if verdict != ["ok"]:
                problems.append(f"integrity_check: {verdict[:5]}")
            broken = self.rows("PRAGMA foreign_key_check")
            if broken:
                problems.append(f"foreign_key_check: {broken[:5]}")
            try:
                self.conn.execute(
                    "INSERT INTO records_record_fts(records_record_fts) VALUES('integrity-check')"
                )
            except sqlite3.DatabaseError as exc:
                problems.append(f"fts integrity-check: {exc}")
            index = "records_record_fts_key"
            index_key = "record_id"
        else:
            index, index_key = "records_record_search", "record_id"
        checks = {
            # Every version of every record was saved beside it.
            "records whose version rows do not match their version": """
                SELECT count(*) FROM records_record r WHERE r.version <>
                  (SELECT count(*) FROM records_recordversion v WHERE v.record_id = r.id)""",
            "records without a creation audit event": """
                SELECT count(*) FROM records_record r WHERE NOT EXISTS (
                  SELECT 1 FROM records_auditevent a
                  WHERE a.entity_id = r.id AND a.kind = 'record.created')""",
            "records missing from the full-text index": f"""
                SELECT count(*) FROM records_record r WHERE NOT EXISTS (
                  SELECT 1 FROM {index} i WHERE i.{index_key} = r.id)""",
            "index rows for records that do not exist": f"""
                SELECT count(*) FROM {index} i WHERE NOT EXISTS (
                  SELECT 1 FROM records_record r WHERE r.id = i.{index_key})""",
            "relationships without a creation audit event": """
                SELECT count(*) FROM records_relationship l WHERE NOT EXISTS (
                  SELECT 1 FROM records_auditevent a
                  WHERE a.entity_id = l.id AND a.kind = 'relationship.created')""",
            "committed actions without a stored result": """
                SELECT count(*) FROM workflow_preparedaction
                WHERE state = 'committed' AND result IS NULL""",
        }
        for label, sql in checks.items():
            count = self.value(sql)
            if count:
                problems.append(f"{count} {label}")
        return problems

    def action_state(self, action_id: str) -> str:
        return self.value("SELECT state FROM workflow_preparedaction WHERE id = ?", (action_id,))

    def written_by_action(self, action_id: str) -> dict[str, int]:
        """Rows an action's commit created, found through their audit events."""
        counts = dict(
            self.rows(
                "SELECT kind, count(*) FROM records_auditevent WHERE action_id = ? GROUP BY kind",
                (action_id,),
            )
        )
        return {
            "records": self.value(
                """SELECT count(*) FROM records_record WHERE id IN (
                   SELECT entity_id FROM records_auditevent
                   WHERE action_id = ? AND kind = 'record.created')""",
                (action_id,),
            ),
            "relationships": self.value(
                """SELECT count(*) FROM records_relationship WHERE id IN (
                   SELECT entity_id FROM records_auditevent
                   WHERE action_id = ? AND kind = 'relationship.created')""",
                (action_id,),
            ),
            "record_events": counts.get("record.created", 0),
            "relationship_events": counts.get("relationship.created", 0),
        }
