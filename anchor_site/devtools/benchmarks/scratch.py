"""A throwaway PostgreSQL database for one benchmark run."""

import os
from urllib.parse import urlsplit, urlunsplit


class ScratchDatabase:
    """A database created beside DATABASE_URL's for one run, and dropped after it."""

    def __init__(self, url: str) -> None:
        self.url = url
        parts = urlsplit(url)
        self.base = parts.path.lstrip("/")
        self.name = f"{self.base}_scratch_{os.getpid()}"
        self.scratch_url = urlunsplit(parts._replace(path=f"/{self.name}"))

    def _execute(self, sql: str) -> None:
        import psycopg

        try:
            conn = psycopg.connect(self.url, autocommit=True)
        except psycopg.OperationalError:
            # The named database need not exist (pytest-django only makes test_<name>):
            # CREATE and DROP DATABASE work from the server's maintenance database too.
            parts = urlsplit(self.url)
            conn = psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True)
        with conn:
            conn.execute(sql)

    def create(self) -> str:
        self._execute(f'DROP DATABASE IF EXISTS "{self.name}"')
        self._execute(f'CREATE DATABASE "{self.name}"')
        return self.scratch_url

    def drop(self) -> None:
        self._execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
