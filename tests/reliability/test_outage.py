"""PostgreSQL lost under a running mcp_serve: at most one call fails, clearly, and the next
succeeds; nothing acknowledged before the outage is lost.

The normal run cuts the server's connections from the database side (pg_terminate_backend on
this test's database only). The real restart of the local cluster is felt by every other user
of that server, so it runs only in the slow run and only with ANCHOR_RELIABILITY_RESTART_PG=1:

    ANCHOR_RELIABILITY_RESTART_PG=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/anchor_rel \
        uv run pytest tests/reliability -m slow -k outage
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from django.db import connection

from tests.polling import wait_until
from tests.reliability import flows
from tests.reliability.harness import RawServer, Store

pytestmark = pytest.mark.postgres


def cluster(action: str) -> None:
    versions = sorted(path.name for path in Path("/etc/postgresql").iterdir())
    for version in versions:
        subprocess.run(
            ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", action],
            check=True,
            capture_output=True,
            timeout=120,
        )


def wait_until_ready(timeout: float = 60) -> None:
    host = connection.settings_dict.get("HOST") or "127.0.0.1"
    port = str(connection.settings_dict.get("PORT") or 5432)
    probe = ["pg_isready", "-q", "-h", host, "-p", port]
    wait_until(lambda: subprocess.run(probe).returncode == 0, "PostgreSQL to come back", timeout)


def restart_the_cluster() -> None:
    try:
        cluster("restart")
    finally:
        wait_until_ready()  # never leave the shared server down


def drop_the_servers_connections() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        assert cursor.fetchone()[0] >= 1, "the server had no connection to drop"


@pytest.mark.django_db(transaction=True)
def test_dropped_connections_cost_at_most_one_call(database, server_env, tmp_path):
    survive_an_outage(drop_the_servers_connections, database, server_env, tmp_path)


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("ANCHOR_RELIABILITY_RESTART_PG") != "1",
    reason="restarts the shared PostgreSQL server; set ANCHOR_RELIABILITY_RESTART_PG=1",
)
@pytest.mark.django_db(transaction=True)
def test_a_restart_between_calls_costs_at_most_one_call(database, server_env, tmp_path):
    survive_an_outage(restart_the_cluster, database, server_env, tmp_path)


def survive_an_outage(
    outage: Callable[[], None], database: dict[str, str], server_env: dict[str, str], tmp_path
) -> None:
    log = tmp_path / "server.log"
    server = RawServer(server_env, log)
    acknowledged: list[str] = []
    try:
        server.initialize()
        collection_id = flows.create_collection(server, "outage")
        for index in range(3):
            title = f"before {uuid.uuid4().hex}"
            reply = flows.create_record(server, collection_id, title, {"index": index})
            assert reply["ok"], reply
            acknowledged.append(reply["result"]["result"]["record"]["record_id"])

        outage()
        connection.close()  # this test's own connection may have died with it

        failures = []
        for index in range(4):
            reply = server.envelope("get_record_context", {"record_id": acknowledged[index % 3]})
            if not reply["ok"]:
                failures.append(reply["error"])
                assert reply["error"]["code"] == "STORAGE_ERROR", reply
                assert "Retry" in reply["error"]["message"], reply
        assert len(failures) <= 1, f"more than one call failed after the outage: {failures}"
        assert reply["ok"], "the last call after the outage failed"

        after = flows.create_record(server, collection_id, f"after {uuid.uuid4().hex}", {})
        assert after["ok"], after
        acknowledged.append(after["result"]["result"]["record"]["record_id"])
        assert server.close() == 0
    finally:
        server.kill()

    store = Store(database)
    try:
        stored = {row[0] for row in store.rows("SELECT id FROM records_record")}
        assert set(acknowledged) <= stored, "an acknowledged write was lost in the outage"
        assert not store.integrity_problems()
    finally:
        store.close()
    print(f"\nfailed calls after the outage: {len(failures)}")
    assert "Traceback" not in log.read_text() or failures, log.read_text()[-3000:]
