"""The pool's settings and the cause its 503 names, without a server (the live tests are in
tests/http/test_database_faults.py and tests/http/test_connection_pool.py)."""

from __future__ import annotations

import psycopg
import pytest
from django.db import OperationalError
from psycopg_pool import PoolTimeout

from anchor_site import db_pool, env
from anchor_site.db_pool import ObservedConnection, why_no_connection


@pytest.fixture
def fresh_outcome():
    ObservedConnection.latest_error = None
    yield
    ObservedConnection.latest_error = None


def from_django(driver_error: Exception) -> OperationalError:
    try:
        raise OperationalError(str(driver_error)) from driver_error
    except OperationalError as exc:
        return exc


def test_the_pool_checks_connections_and_observes_connects(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://anchor@db.internal:5432/memory")
    monkeypatch.setenv("ANCHOR_DB_CONN_MAX_AGE", "0")
    config = env.database_from_env(env.read())
    # Django hands psycopg_pool its check_connection exactly when health checks are on.
    assert config["CONN_HEALTH_CHECKS"] is True
    assert config["OPTIONS"]["pool"]["connection_class"] is ObservedConnection


def test_a_pool_timeout_with_the_database_answering_is_capacity(fresh_outcome):
    cause, reason = why_no_connection(from_django(PoolTimeout("couldn't get a connection")))
    assert cause == db_pool.AT_CAPACITY and "at capacity" in reason


def test_a_pool_timeout_after_a_refused_connect_is_the_database(fresh_outcome):
    with pytest.raises(psycopg.OperationalError):
        ObservedConnection.connect("postgresql://anchor@127.0.0.1:1/anchor", connect_timeout=5)
    cause, reason = why_no_connection(from_django(PoolTimeout("couldn't get a connection")))
    assert cause == "unreachable" and "cannot reach its database" in reason
    assert "at capacity" not in reason


def test_without_a_pool_the_connect_error_itself_is_judged(fresh_outcome):
    refused = psycopg.OperationalError("connection failed: FATAL:  sorry, too many clients already")
    cause, reason = why_no_connection(from_django(refused))
    assert cause == "too_many_connections" and "max_connections" in reason
