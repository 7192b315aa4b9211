"""The README's team mode, end to end: the production command on 127.0.0.1, set up with the
operator commands, driven by the official MCP client over streamable HTTP.

On PostgreSQL the server shares pytest's test database (so the test commits); on SQLite it
gets a file of its own. Either way it starts exactly as documented: gunicorn with
anchor_site/http/gunicorn_conf.py, which checks, migrates and collects static files first.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.db import connection
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.e2e.server import REPO_ROOT, base_env, call_ok, postgres_url
from tests.migrated_schema import migrated_copy

ON_POSTGRES = connection.vendor == "postgresql"
# On PostgreSQL the server must see committed rows, and pytest-django picks rollback or flush
# from the fixtures named up front.
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=ON_POSTGRES)]
GUNICORN = [sys.executable, "-m", "gunicorn", "-c", "anchor_site/http/gunicorn_conf.py"]
MANAGE = [sys.executable, "manage.py"]


@dataclass
class LiveServer:
    url: str
    env: dict[str, str]
    log: Path

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [*MANAGE, *args],
            cwd=REPO_ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"manage.py {' '.join(args)} failed:\n{done.stderr}"
        return done.stdout

    def token_for(self, username: str, workspace: str) -> str:
        self.manage("anchor_member", "add", username, workspace, "--create-user")
        return self.manage("anchor_token", "create", username, "--name", "e2e").strip()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_serving(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited with {process.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"{url}/mcp", timeout=2).status_code == 405:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    pytest.fail(f"the server did not start within 90 s:\n{log.read_text()}")


@pytest.fixture
def live(tmp_path) -> Iterator[LiveServer]:
    yield from serve(tmp_path, workers=2)


@pytest.fixture
def live_one_worker(tmp_path) -> Iterator[LiveServer]:
    yield from serve(tmp_path, workers=1)


def serve(
    tmp_path: Path, workers: int, *, command_prefix: Sequence[str] = (), **extra_env: str
) -> Iterator[LiveServer]:
    if ON_POSTGRES:
        database = {"DATABASE_URL": postgres_url(connection.settings_dict)}
    else:
        database = {"ANCHOR_DB_PATH": migrated_copy(tmp_path / "anchor.db")}
    port = free_port()
    env = base_env(
        **database,
        SECRET_KEY="live-server-test-" + "k" * 40,
        ALLOWED_HOSTS="127.0.0.1",
        ANCHOR_STATIC_ROOT=str(tmp_path / "static"),
        ANCHOR_HTTP_BIND=f"127.0.0.1:{port}",
        WEB_CONCURRENCY=str(workers),
        **extra_env,
    )
    log = tmp_path / "server.log"
    with open(log, "w") as sink:
        process = subprocess.Popen(
            [*command_prefix, *GUNICORN], cwd=REPO_ROOT, env=env, stdout=sink, stderr=sink
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(url, process, log)
        yield LiveServer(url, env, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def guarded_write(session: ClientSession) -> dict[str, Any]:
    """discover -> prepare -> commit a collection; resolve -> prepare -> commit a record."""
    discovery = await call_ok(
        session, "discover_collections", {"name": "people", "purpose": "People we hire"}
    )
    prepared = await call_ok(
        session,
        "prepare_write",
        {
            "operation": "create_collection",
            "arguments": {
                "name": "people",
                "purpose": "People we hire",
                "record_meaning": "One person",
                "typical_fields": ["email", "team"],
                "relationship_guidance": "",
            },
            "review_ids": [discovery["discovery_id"]],
            "decision_reason": "the team tracks candidates",
        },
    )
    created = await call_ok(session, "commit_write", {"action_id": prepared["action_id"]})
    assert created["status"] == "committed", created
    people = created["result"]["collection"]["collection_id"]

    review = await call_ok(session, "resolve_record", {"query": "Priya", "collection_id": people})
    assert review["status"] == "no_match", review
    prepared = await call_ok(
        session,
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": people, "title": "Priya", "data": {"team": "infra"}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "new interviewer",
        },
    )
    committed = await call_ok(session, "commit_write", {"action_id": prepared["action_id"]})
    assert committed["status"] == "committed", committed
    replayed = await call_ok(session, "commit_write", {"action_id": prepared["action_id"]})
    assert replayed.get("replayed") is True, replayed
    record_id = committed["result"]["record"]["record_id"]
    # The commit names what it wrote; read it back as stored.
    context = await call_ok(session, "get_record_context", {"record_id": record_id})
    assert context["record"]["title"] == "Priya", context
    assert context["record"]["data"] == {"team": "infra"}, context
    return {**context["record"], "record_id": record_id}


async def agent(url: str, token: str, work):
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await work(session)


def test_a_guarded_write_over_streamable_http(live: LiveServer):
    alice = live.token_for("alice", "team-a")
    bob = live.token_for("bob", "team-b")

    record = asyncio.run(agent(live.url, alice, guarded_write))

    async def read_back(session: ClientSession) -> dict[str, Any]:
        resolved = await call_ok(session, "resolve_record", {"query": "Priya"})
        assert resolved["status"] == "resolved"
        assert resolved["selected_record_id"] == record["record_id"]
        return await call_ok(session, "get_record_history", {"record_id": record["record_id"]})

    history = asyncio.run(agent(live.url, alice, read_back))
    assert {event["actor_id"] for event in history["events"]} == {"user:alice"}

    async def look_from_team_b(session: ClientSession) -> None:
        found = await call_ok(session, "resolve_record", {"query": "Priya"})
        assert found["status"] == "no_match"
        context = (
            await session.call_tool("get_record_context", {"record_id": record["record_id"]})
        ).structuredContent
        assert context and context["error"]["code"] == "NOT_FOUND"

    asyncio.run(agent(live.url, bob, look_from_team_b))

    log = live.log.read_text()
    assert '"DELETE /mcp HTTP/1.1" 204' in log, "the client ended its session"
    assert "Traceback" not in log


def test_the_served_endpoint_refuses_and_the_admin_has_its_static_files(live: LiveServer):
    refused = httpx.post(
        f"{live.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert refused.status_code == 401
    assert refused.headers["WWW-Authenticate"] == (
        f'Bearer realm="anchor", resource_metadata="{live.url}/.well-known/'
        'oauth-protected-resource/mcp", scope="mcp"'
    )
    foreign = httpx.post(
        f"{live.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Origin": "http://evil.example"},
    )
    assert foreign.status_code == 403
    wrong_host = httpx.get(f"{live.url}/admin/login/", headers={"Host": "evil.example"})
    assert wrong_host.status_code == 400

    login = httpx.get(f"{live.url}/admin/login/")
    assert login.status_code == 200
    css = httpx.get(f"{live.url}/static/admin/css/base.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")


@pytest.mark.sqlite  # checks that its SQLite file is never created
def test_the_server_refuses_to_start_without_a_secret_key(tmp_path):
    env = base_env(
        ANCHOR_DB_PATH=str(tmp_path / "anchor.db"),
        ANCHOR_STATIC_ROOT=str(tmp_path / "static"),
        ANCHOR_HTTP_BIND=f"127.0.0.1:{free_port()}",
    )
    done = subprocess.run(
        GUNICORN, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert "anchor.E001" in done.stderr and "Refusing to serve" in done.stderr
    assert not (tmp_path / "anchor.db").exists(), "nothing is migrated before the checks pass"
