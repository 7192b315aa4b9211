"""One production server for a whole test module, and tokens for it without a subprocess each.

Starting gunicorn (deploy checks, migrations, static files, then the workers) costs seconds,
and `manage.py anchor_member add` plus `anchor_token create` cost a Django start-up each: most
of a test's time went there, not to the behaviour it checks. Tests that need no fresh server
share one per module (`module_server`), each making what it uses under names of its own.

On PostgreSQL the server shares pytest's test database, which pytest-django flushes after every
test, so users and tokens are made again for each test, in this process, by the services the
operator commands call. On SQLite the server's file lasts the module: a token is made once,
by the same services in one `manage.py shell` run against that file, and kept. The operator
commands themselves are tested in test_commands.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.http.test_live_server import ON_POSTGRES, LiveServer, serve
from tests.http.tokens import make_token


@dataclass
class SharedServer(LiveServer):
    """A LiveServer whose tokens are cheap: see the module docstring."""

    _tokens: dict[tuple[str, str], str] = field(default_factory=dict)

    def token_for(self, username: str, workspace: str) -> str:
        if ON_POSTGRES:
            return make_token(username, workspace)
        key = (username, workspace)
        if key not in self._tokens:
            script = (
                "from tests.http.tokens import make_token; "
                f"print(make_token({username!r}, {workspace!r}))"
            )
            self._tokens[key] = self.manage("shell", "--no-imports", "-c", script).strip()
        return self._tokens[key]


def serve_shared(directory: Path, workers: int, **extra_env: str) -> Iterator[SharedServer]:
    """test_live_server.serve, yielding a SharedServer: for a test that needs its own."""
    for started in serve(directory, workers=workers, **extra_env):
        yield SharedServer(started.url, started.env, started.log)


def module_server(workers: int, **extra_env: str) -> Callable[..., Iterator[SharedServer]]:
    """A module-scoped fixture: the production server with `workers` and `extra_env`."""

    @pytest.fixture(scope="module")
    def fixture(tmp_path_factory, django_db_setup) -> Iterator[SharedServer]:
        # django_db_setup: on PostgreSQL the server is pointed at the test database, which
        # must exist (and carry its test name) before it starts.
        yield from serve_shared(tmp_path_factory.mktemp("server"), workers, **extra_env)

    return fixture
