"""Team mode on SQLite: a database file made read-only under the running server refuses
writes in JSON at every door, serves reads, and once writable again the very next write
succeeds, with no restart.

Against the production server, run (as tests/reliability/test_storage_faults does over stdio)
without the capabilities that let root ignore file modes.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.http.shared_server import SharedServer
from tests.http.test_client_departure import Client, create_people
from tests.http.test_database_faults import call, initialize
from tests.http.test_live_server import ON_POSTGRES, serve
from tests.reliability.test_storage_faults import as_ordinary_user, set_mode

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(ON_POSTGRES, reason="a SQLite file's own fault"),
]
READ_ONLY = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH


@pytest.fixture
def server(tmp_path) -> Iterator[SharedServer]:
    for started in serve(tmp_path, workers=1, command_prefix=as_ordinary_user()):
        yield SharedServer(started.url, started.env, started.log)


def test_a_read_only_sqlite_file_refuses_in_json_and_the_next_write_after_it_succeeds(
    server: SharedServer,
):
    database = Path(server.env["ANCHOR_DB_PATH"])
    token = server.token_for("alice", "team-a")
    client = Client(server, token)
    people = create_people(client, "read-only file")

    set_mode(database, READ_ONLY)
    try:
        status, refused = call(
            client, "resolve_record", {"query": "Refused", "collection_id": people}
        )
        assert status == 200 and refused["error"]["code"] == "STORAGE_ERROR", refused
        assert refused["error"]["details"] == {"cause": "read_only"}, refused
        status, found = call(client, "search_records", {"collection_id": people})
        assert status == 200 and found["ok"], found
        start = initialize(server, token)
        assert start.status_code == 503, start.text
        body = start.json()
        assert body["id"] == "start-1" and body["error"]["data"] == {"cause": "read_only"}, body
        registered = httpx.post(
            f"{server.url}/oauth/register/",
            json={"client_name": "read-only", "redirect_uris": ["http://127.0.0.1:9/cb"]},
            timeout=30,
        )
        assert registered.status_code == 503, registered.text
        assert registered.json()["cause"] == "read_only", registered.text
    finally:
        set_mode(database, 0o644)

    status, healed = call(client, "resolve_record", {"query": "Healed", "collection_id": people})
    assert status == 200 and healed["ok"], healed
    assert initialize(server, token).status_code == 200
