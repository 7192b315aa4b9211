"""`manage.py benchmark --quick` on tiny sizes prints a table with every row.

Figures on a shared machine say nothing about correctness, so nothing here checks a timing:
only that every area ran, printed its row and reported a verdict.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from anchor_site.devtools.management.commands.benchmark import Command as benchmark_command

# The suite runs with the production settings, which leave the developer tools out, so the
# command is called as an object; from a shell it is
# `DJANGO_SETTINGS_MODULE=anchor_site.settings_dev python manage.py benchmark`.

# The smallest sizes that still run every row: a ledger of 1,001 records is the fewest with a
# hub of 1,000 links; the workspace the round-trip rows use already holds more audit events
# than one, so --events=1 adds none; --calls and --repeat at 1 leave the floors the areas set
# (five writes, five rounds of a guarded create) in place.
LEDGER_RECORDS = 1001

ROWS = [
    "tools/list + instructions, full profile",
    "tools/list + instructions, default core profile",
    "mcp_serve start to initialize result",
    "resident memory of an idle mcp_serve",
    "resident memory after caching",
    "resolve_record,",
    "first resolve_record after a rename",
    "first resolve_record in a fresh mcp_serve",
    "import review, 100 rows against",
    "import review at the cap, 100 rows x",
    "long history: ",
    "stdio round trip, get_record_context (20 links, 10 events)",
    "seven reads: 1 batch_read call, against the single calls",
    "three updates: 3 calls",
    "prepare + commit update_record, one client",
    "guarded create (resolve, prepare, commit), 100-name collection",
    "guarded create, 300-name collection",
    "prepare_import + commit_import, 100 rows + 100 links",
    "embed ",
    "load a workspace's vectors after a change",
    "search by meaning (mode meaning), first page of 20",
    "record_create, then search by meaning",
    "memory of the cached vectors",
    "recall@10",
    "generate ",
    "full-text search, one word",
    "filtered page sorted by a number field",
    f"generate {LEDGER_RECORDS:,} ledger records",
    "3-hop traversal from a hub of 1,000 links",
    "aggregate count grouped by a field",
    "aggregate sum + avg grouped by month",
    "aggregate sum + avg, no group_by",
    "aggregate count by a field with a where filter",
    "aggregate grouped by linked record, team collection",
    "aggregate grouped by linked record, whole ledger",
    f"restored {LEDGER_RECORDS:,} records, no ANALYZE: aggregate grouped by linked record",
    f"restored {LEDGER_RECORDS:,} records, no ANALYZE: get_collection_history",
    "restore, 100 records (",
    f"restore, {LEDGER_RECORDS:,} records (",
    f"PRAGMA optimize after a {LEDGER_RECORDS:,}-record restore",
    "agenda step (complete / next), 100 bound items",
    "agenda_sync_records of 100 bound records",
    "opposite-order batches of 10 link_records",
    "write blocked past its lock limit",
]


@pytest.mark.tooling
@pytest.mark.slow
@pytest.mark.sqlite  # --backend=sqlite: its own SQLite file, whatever the backend of this run
def test_quick_run_prints_every_row():
    out = StringIO()
    call_command(
        benchmark_command(),
        "--quick",
        "--backend=sqlite",
        f"--records={LEDGER_RECORDS}",
        "--events=1",
        "--names=300",
        "--calls=1",
        "--repeat=1",
        stdout=out,
        verbosity=0,
    )
    table = out.getvalue()
    assert "== sqlite ==" in table
    assert "existing database (1 starts)" in table  # --repeat bounds the starts too
    # The agendas and locks rows run in a store of --records records restored from an export.
    assert f"store of {LEDGER_RECORDS:,} records restored from an export" in table
    for row in ROWS:
        assert row in table, f"row {row!r} is missing from:\n{table}"
    assert "ERROR" not in table
    assert "<= 12 x the 100-record restore" in table  # the larger restore against the smaller
    for line in table.splitlines():
        if line.startswith(tuple(ROWS)):
            assert line.rstrip().endswith(("PASS", "MISS", "-")), line


@pytest.mark.tooling
@pytest.mark.slow
@pytest.mark.postgres
def test_quick_run_on_postgresql_uses_a_scratch_database():
    out = StringIO()
    call_command(
        benchmark_command(),
        "--quick",
        "--backend=postgresql",
        "--only=resolution,imports,restore",
        "--names=300",
        f"--records={LEDGER_RECORDS}",
        "--repeat=1",
        stdout=out,
        verbosity=0,
    )
    table = out.getvalue()
    assert "== postgresql ==" in table and "import review, 100 rows against" in table
    # The restored store's own databases were made and dropped beside the scratch one.
    assert "no ANALYZE: aggregate grouped by linked record" in table
    assert "0 pg_stats rows on the records tables" in table
    assert "ERROR" not in table


def test_unknown_area_is_refused():
    with pytest.raises(CommandError, match="not an area"):
        call_command(benchmark_command(), "--only=nonsense", stdout=StringIO())


@pytest.mark.tooling
@pytest.mark.slow
@pytest.mark.postgres
def test_http_load_drives_the_production_server_with_one_client():
    out = StringIO()
    call_command(
        benchmark_command(),
        "--http",
        "--clients=1",
        "--seconds=2",
        "--records=200",
        "--no-profile",
        stdout=out,
        verbosity=0,
    )
    table = out.getvalue()
    assert "WEB_CONCURRENCY=2" in table
    assert "HTTP load, 1 client: tools/call" in table, table
    assert "calls/s" in table and " 0 errors" in table, table
    assert "resolve_record at 1 clients" in table and "commit_write at 1 clients" in table
    assert "p95 first passes" in table or "p95 stayed under" in table
    assert "guarded writes into one collection, 1 clients" in table, table
    assert "lost writes 0; false stale refusals 0" in table, table
    assert "true duplicates refused 3 of 3 concurrent pairs" in table, table
    assert "ERROR" not in table and "Traceback" not in table, table


def test_http_load_refuses_without_postgresql(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "sqlite:///tmp/anchor.db")
    with pytest.raises(CommandError, match="PostgreSQL"):
        call_command(benchmark_command(), "--http", stdout=StringIO())
    monkeypatch.delenv("DATABASE_URL")
    with pytest.raises(CommandError, match="needs DATABASE_URL"):
        call_command(benchmark_command(), "--http", stdout=StringIO())
