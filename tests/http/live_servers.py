"""The production server started with chosen settings, for tests of its doors.

`serve` in test_live_server starts the documented configuration; these start it with extra
environment (a small rate limit, one worker so one process counts) and, behind the TLS proxy,
probe it as the proxy would (X-Forwarded-Proto: https), since plain http is then redirected.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from django.db import connection

from tests.e2e.server import REPO_ROOT, base_env, postgres_url
from tests.http.test_live_server import GUNICORN, ON_POSTGRES, LiveServer, free_port
from tests.migrated_schema import migrated_copy

THROUGH_PROXY = {"X-Forwarded-Proto": "https"}
READY = "/.well-known/oauth-protected-resource/mcp"


def start(tmp_path: Path, **extra_env: str) -> Iterator[LiveServer]:
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
        WEB_CONCURRENCY="1",
        **extra_env,
    )
    probe = THROUGH_PROXY if extra_env.get("ANCHOR_BEHIND_TLS_PROXY") == "true" else {}
    log = tmp_path / "server.log"
    with open(log, "w") as sink:
        process = subprocess.Popen(GUNICORN, cwd=REPO_ROOT, env=env, stdout=sink, stderr=sink)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                pytest.fail(f"the server exited with {process.returncode}:\n{log.read_text()}")
            try:
                # Not under /mcp or /oauth/: the probe must not spend loopback's rate limit.
                if httpx.get(f"{url}{READY}", headers=probe, timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the server did not start within 180 s:\n{log.read_text()}")
            time.sleep(0.3)
        yield LiveServer(url, env, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def client_from(address: str, **headers: str) -> httpx.Client:
    """An HTTP client whose connections come from `address` (any 127.x.y.z is this machine)."""
    return httpx.Client(
        transport=httpx.HTTPTransport(local_address=address), headers=headers, timeout=30
    )
