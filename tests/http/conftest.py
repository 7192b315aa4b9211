"""Team-mode fixtures: users with memberships and tokens, and a JSON-RPC client for /mcp.

The in-process client goes through Django's full middleware and our view, with tools running
on the test's thread (and so inside its transaction), exactly as tests/mcp_client.py does for
the bare server object.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from records.services import access_token_create, workspace_membership_add
from tests.envelope import expect_ok, expect_refused

MCP_URL = "/mcp"
PROTOCOL_VERSION = "2025-06-18"
ACCEPT = "application/json, text/event-stream"
WRITE_SQL = ("INSERT", "UPDATE", "DELETE", "REPLACE")


@dataclass
class McpHttp:
    """One agent's connection: its token, optional workspace header, and MCP session."""

    client: Client
    token: str | None
    workspace: str | None = None
    session_id: str | None = None
    next_id: int = field(default=1)

    def headers(self, **extra: str) -> dict[str, str]:
        headers = {"Accept": ACCEPT}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.workspace:
            headers["X-Anchor-Workspace"] = self.workspace
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        headers.update(extra)
        return headers

    def post(self, message: Any, **headers: str) -> Any:
        return self.client.post(
            MCP_URL,
            data=json.dumps(message),
            content_type="application/json",
            headers=self.headers(**headers),
        )

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.next_id += 1
        return self.post(message)

    def initialize(self) -> dict[str, Any]:
        response = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "anchor-http-tests", "version": "1"},
            },
        )
        assert response.status_code == 200, response.content
        self.session_id = response.headers["Mcp-Session-Id"]
        done = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert done.status_code == 202, done.content
        return response.json()["result"]

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """The tool's {"ok": ...} envelope."""
        if self.session_id is None:
            self.initialize()
        response = self.request("tools/call", {"name": name, "arguments": arguments or {}})
        assert response.status_code == 200, response.content
        result = response.json()["result"]
        envelope = result["structuredContent"]
        assert result["isError"] is (not envelope["ok"]), f"{name}: isError disagrees: {result}"
        return envelope

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return expect_ok(self.call(name, arguments), name, arguments)

    def refused(self, name: str, arguments: dict[str, Any], code: str) -> dict[str, Any]:
        return expect_refused(self.call(name, arguments), name, code)


@dataclass
class Member:
    user: Any
    token: str

    def connect(self, workspace: str | None = None) -> McpHttp:
        return McpHttp(Client(), self.token, workspace=workspace)


def make_member(username: str, *workspaces: str) -> Member:
    user = get_user_model().objects.create_user(username=username)
    for workspace in workspaces:
        workspace_membership_add(user=user, workspace_id=workspace)
    _, raw = access_token_create(user=user, name=f"{username}'s laptop")
    return Member(user, raw)


def row_counts() -> dict[str, int]:
    """Rows in every table the project's models own, sessions included."""
    return {
        model._meta.label: model._base_manager.count()
        for model in apps.get_models()
        if model._meta.managed and not model._meta.proxy
    }


@contextmanager
def no_writes() -> Iterator[CaptureQueriesContext]:
    """Assert the block leaves every table as it was and sends no writing SQL."""
    before = row_counts()
    with CaptureQueriesContext(connection) as queries:
        yield queries
    writes = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].lstrip().upper().startswith(WRITE_SQL)
    ]
    assert not writes, f"a rejected request wrote: {writes}"
    assert row_counts() == before, "a rejected request changed the database"


@pytest.fixture(autouse=True)
def fresh_rate_limits() -> Iterator[None]:
    """Every test starts with no request counted (the counters live in a process-wide cache)."""
    caches["ratelimit"].clear()
    yield
    caches["ratelimit"].clear()


@pytest.fixture
def alice(db) -> Member:
    return make_member("alice", "team-a")


@pytest.fixture
def bob(db) -> Member:
    return make_member("bob", "team-b")


@pytest.fixture
def carol(db) -> Member:
    """In both workspaces: she must name one per request."""
    return make_member("carol", "team-a", "team-b")
