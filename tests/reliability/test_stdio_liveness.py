"""Hostile bytes on the pipe, and stopping mid-call: the server answers once, fast, and lives.

Every bad line gets exactly one prompt JSON-RPC error (with the request's id when
one can be read; -32700 for unparsable input, -32600 for JSON that is not a request, -32601 for
an unknown method), and the next request is served as if nothing happened. End of input or
SIGTERM during a call that is blocked or busy: the process is gone promptly, the
call's transaction is rolled back and its locks are free for the next writer.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.liveness import PROMPT_EXIT_S, PROMPT_REPLY_S
from tests.polling import wait_until
from tests.reliability import flows
from tests.reliability.harness import CALL_BEGAN, RawServer, running

NESTING = 10_000
HUGE = 8 * 1024 * 1024


def request(request_id: int, method: str, params: str) -> bytes:
    return f'{{"jsonrpc":"2.0","id":{request_id},"method":"{method}","params":{params}}}'.encode()


def call(request_id: int, tool: str, arguments: str) -> bytes:
    return request(request_id, "tools/call", f'{{"name":"{tool}","arguments":{arguments}}}')


# name -> (line, expected id, expected code)
BAD_LINES: dict[str, tuple[bytes, Any, int | str]] = {
    "truncated JSON": (b'{"jsonrpc": "2.0", "id": 3, "method": "tools/li', 3, -32700),
    "not JSON at all": (b"hello, server", None, -32700),
    # A well-formed call whose argument is not text: the tool's refusal names the field.
    "lone surrogate escape": (
        call(4, "search_records", '{"query": "caf\\ud800"}'),
        4,
        "INVALID_INPUT",
    ),
    "lone surrogate as raw bytes": (
        call(5, "search_records", '{"query": "cafX"}').replace(b"X", b"\xed\xa0\x80"),
        5,
        "INVALID_INPUT",
    ),
    "5,000-digit number": (call(6, "search_records", '{"limit": ' + "9" * 5000 + "}"), 6, -32700),
    "5,000-digit id": (
        b'{"jsonrpc":"2.0","id":' + b"7" * 5000 + b',"method":"ping"}',
        None,
        -32700,
    ),
    "nesting 10,000 deep": (
        call(8, "search_records", '{"query": ' + "[" * NESTING + "]" * NESTING + "}"),
        8,
        -32700,
    ),
    "nesting 10,000 deep, whole message": (b"[" * NESTING + b"]" * NESTING, None, -32700),
    "8 MiB string, whole message": (b'"' + b"x" * HUGE + b'"', None, -32600),
    "JSON that is not a request": (b'{"jsonrpc": "2.0", "id": 9}', 9, -32600),
    "unknown method": (request(10, "tools/destroy", "{}"), 10, -32601),
}


def still_serving(server: RawServer) -> list[dict[str, Any]]:
    """A ping and a real tool call both work; returns anything else that arrived meanwhile."""
    before = len(server.unsolicited)
    ping = server.reply_to(server.request("ping"), timeout=5)
    assert ping.get("result") == {}, ping
    assert server.ok("list_collections", {}, timeout=10) is not None
    return server.unsolicited[before:]


@pytest.mark.django_db(transaction=True)
def test_each_bad_line_gets_one_prompt_error_reply(server_env, tmp_path):
    timings = {}
    with running(server_env, tmp_path / "server.log") as server:
        for name, (line, expected_id, code) in BAD_LINES.items():
            server.send_bytes(line + b"\n")
            sent = time.monotonic()
            reply = server.read_message(timeout=5)
            elapsed = time.monotonic() - sent
            timings[name] = elapsed
            assert reply is not None, f"{name}: no reply"
            assert elapsed < PROMPT_REPLY_S, f"{name}: the reply took {elapsed:.2f}s"
            assert reply.get("id", "missing") == expected_id, f"{name}: {reply}"
            if isinstance(code, str):
                result = reply["result"]
                assert result["isError"] is True, f"{name}: {reply}"
                error = result["structuredContent"]["error"]
                assert error["code"] == code and error["details"]["field"] == "query", reply
            else:
                assert reply.get("error", {}).get("code") == code, f"{name}: {reply}"
                assert len(reply["error"]["message"]) < 300, f"{name}: the error echoes the input"
            extra = still_serving(server)
            assert not extra, f"{name}: more than one reply: {extra[:3]}"

        # An 8 MiB argument is a well-formed request: the tool refuses it, once, quickly, and
        # without sending the 8 MiB back.
        request_id = server.send_call("resolve_record", {"query": "y" * HUGE})
        sent = time.monotonic()
        reply = server.reply_to(request_id, timeout=5)
        timings["8 MiB argument"] = time.monotonic() - sent
        assert timings["8 MiB argument"] < PROMPT_REPLY_S, timings
        text = str(reply)
        assert len(text) < 2000 and "INVALID_INPUT" in text, text[:500]
        assert not still_serving(server)
        assert server.close() == 0
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log, log[-3000:]
    print("\n" + "\n".join(f"{name}: {seconds * 1000:.0f} ms" for name, seconds in timings.items()))


# --- stopping mid-call -----------------------------------------------------------------------


def stop(server: RawServer, how: str) -> float:
    """End input or send SIGTERM; the seconds until the process has exited."""
    started = time.monotonic()
    if how == "SIGTERM":
        server.terminate()
    else:
        assert server.process.stdin is not None
        server.process.stdin.close()
    status = server.process.wait(timeout=30)
    elapsed = time.monotonic() - started
    assert status == 0, f"exit status {status} after {how}"
    return elapsed


def wait_for_log(path: Path, marker: bytes) -> None:
    wait_until(lambda: marker in path.read_bytes(), f"{marker!r} in {path.name}")


def blocked_writing_output(server: RawServer) -> bool:
    """Whether one of the server's threads sleeps in a write to a full pipe (Linux: its wait
    channel is the kernel's pipe_write). Unread bytes cannot say so: a pipe is full when its
    pages are, and a 3 KiB reply takes a page of its own."""
    for task in Path(f"/proc/{server.process.pid}/task").iterdir():
        try:
            if "pipe_write" in (task / "wchan").read_text():
                return True
        except OSError:  # the thread has just ended
            continue
    return False


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("how", ["end of input", "SIGTERM"])
def test_stopping_during_a_call_blocked_on_a_lock(how, database, server_env, store, tmp_path):
    """The commit waits on a lock another process holds; stopping must not wait with it."""
    with running(server_env, tmp_path / "setup.log") as setup:
        collection_id = flows.create_collection(setup, "locks")
        created = flows.create_record(setup, collection_id, "contested record", {"n": 0})
        record = created["result"]["result"]["record"]
        review = setup.ok("resolve_record", {"query": record["record_id"]})
        prepared = setup.ok(
            "prepare_write",
            {
                "operation": "update_record",
                "arguments": {
                    "record_id": record["record_id"],
                    "changes": {"n": 1},
                    "expected_version": 1,  # a new record's first version
                },
                "review_ids": [review["resolution_id"]],
                "decision_reason": "liveness test",
            },
        )
    action_id = prepared["action_id"]
    log = tmp_path / "blocked.log"
    with store.hold_write_lock(record["record_id"]):
        server = RawServer(server_env, log)
        try:
            server.initialize()
            server.send_call("commit_write", {"action_id": action_id})
            if store.vendor == "postgresql":
                wait_until(lambda: store.lock_waiters() >= 1, "the commit to wait on the lock")
            else:
                # SQLite's busy wait shows nowhere: the call has reached its handler, and
                # takes the write lock first thing, within milliseconds.
                wait_for_log(log, CALL_BEGAN)
            assert server.process.poll() is None
            elapsed = stop(server, how)
        finally:
            server.kill()
        assert elapsed < PROMPT_EXIT_S, f"took {elapsed:.2f}s to exit after {how}"
        if store.vendor == "postgresql":
            # Its own locks (the action row, the counters) went with it, while ours is held.
            assert store.free_to_write(action_id), "the stopped server still holds locks"
    assert store.free_to_write(action_id), "the stopped server still holds locks"
    assert store.action_state(action_id) == "prepared", "the abandoned commit was applied"
    with running(server_env, tmp_path / "after.log") as after:
        done = after.ok("commit_write", {"action_id": action_id})
    assert done["status"] == "committed" and "replayed" not in done
    assert not store.integrity_problems()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("how", ["end of input", "SIGTERM"])
def test_stopping_during_a_large_commit(how, server_env, store, tmp_path):
    """Stopped while writing 100 rows: gone promptly, all or nothing, locks free."""
    with running(server_env, tmp_path / "setup.log") as setup:
        collection_id = flows.create_collection(setup, "imports")
        _, arguments, links = flows.prepare_import(setup, collection_id, "stopped", 100)
    log = tmp_path / "busy.log"
    server = RawServer(server_env, log)
    try:
        server.initialize()
        server.send_call("commit_import", arguments)
        wait_for_log(log, CALL_BEGAN)
        # Not a wait for anything: a point some way into writing the 100 rows (about half a
        # second's work), where the stop is what the test is about.
        time.sleep(0.2)
        elapsed = stop(server, how)
    finally:
        server.kill()
    assert elapsed < PROMPT_EXIT_S, f"took {elapsed:.2f}s to exit after {how}"
    assert store.free_to_write(arguments["action_id"]), "the stopped server still holds locks"
    assert not store.integrity_problems()
    written = store.written_by_action(arguments["action_id"])
    state = store.action_state(arguments["action_id"])
    expected = 100 if state == "committed" else 0
    assert written["records"] == expected and written["relationship_events"] == (
        len(links) if expected else 0
    ), (state, written)
    print(f"\n{how}: exited in {elapsed:.2f}s, import {state}")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("how", ["end of input", "SIGTERM"])
def test_a_client_that_stops_reading_cannot_keep_the_server_alive(how, server_env, tmp_path):
    """Replies pile up unread until the pipe is full; stopping still ends the process."""
    server = RawServer(server_env, tmp_path / "unread.log")
    try:
        server.initialize()
        # About 3 KiB each: far more than a pipe holds, and nobody reads them.
        for _ in range(60):
            server.send_call("get_server_instructions", {})
        wait_until(lambda: blocked_writing_output(server), "the server to block on its output")
        elapsed = stop(server, how)
    finally:
        server.kill()
    assert elapsed < PROMPT_EXIT_S, f"took {elapsed:.2f}s to exit after {how}"
