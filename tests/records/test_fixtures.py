"""Every shipped fixture loads, leaves counters, index and history consistent, and matches
what the services produce today (so loaddata never rots and never drifts)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from records.models import AuditEvent, Collection, Record, Relationship, RevisionCounter, Workspace

FIXTURE = Path(__file__).resolve().parents[2] / "records" / "fixtures" / "hiring_demo.json"


def _search_index_rows() -> int:
    table = "records_record_fts" if connection.vendor == "sqlite" else "records_record_search"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 -- fixed table names
        return cursor.fetchone()[0]


def _search(word: str) -> set[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT k.record_id FROM records_record_fts f "
                "JOIN records_record_fts_key k ON k.id = f.rowid WHERE records_record_fts MATCH %s",
                [word],
            )
        else:
            cursor.execute(
                "SELECT record_id FROM records_record_search "
                "WHERE document @@ to_tsquery('simple', %s)",
                [word],
            )
        return {row[0] for row in cursor.fetchall()}


@pytest.mark.django_db
def test_hiring_demo_loads_with_counters_index_and_history_consistent():
    call_command("loaddata", "hiring_demo", stdout=StringIO())
    assert "feed_key" not in FIXTURE.read_text(encoding="utf-8"), "no shared secret in the file"
    assert len(Workspace.objects.get(pk="local").feed_key) == 64, "drawn where it is loaded"

    titles = set(Record.objects.values_list("title", flat=True))
    assert {"Kirat", "Abhishek", "Priya", "Rahul", "Junior Backend", "Senior Frontend"} <= titles
    assert set(Collection.objects.values_list("name", flat=True)) == {
        "people",
        "openings",
        "applications",
        "interviews",
        "feedback",
    }
    records = list(Record.objects.all())
    assert _search_index_rows() == len(records), "one search-index row per record"
    kirat = Record.objects.get(title="Kirat")
    assert kirat.pk in _search("kirat"), "the title is searchable after loaddata"
    assert _search("pagination"), "data values are searchable after loaddata"

    counters = dict(RevisionCounter.objects.values_list("key", "value"))
    for record in records:
        links = (
            Relationship.objects.filter(source=record).count()
            + Relationship.objects.filter(target=record).count()
        )
        assert counters.get(f"links:{record.pk}", 0) == links, f"links counter of {record}"
    for collection in Collection.objects.all():
        assert counters.get(f"names:{collection.pk}", 0) >= collection.records.count()
    assert counters["catalog"] >= Collection.objects.count()

    for record in records:
        latest = record.versions.order_by("-version").first()
        assert latest is not None and latest.version == record.version, record.title
        assert (latest.title, latest.data) == (record.title, record.data), record.title
        assert AuditEvent.objects.filter(record_id=record.pk, kind="record.created").exists()
    clarified = AuditEvent.objects.exclude(agent_reported_clarification="")
    assert clarified.filter(actor_id="local-agent").exists(), "the demo shows a clarification"


@pytest.mark.django_db
def test_hiring_demo_fixture_is_what_the_services_write_today():
    out = StringIO()
    call_command("hiring_demo_fixture", stdout=out)
    # Compared as JSON, not text: PostgreSQL's jsonb stores object keys in its own order.
    assert json.loads(out.getvalue()) == json.loads(FIXTURE.read_text(encoding="utf-8")), (
        "records/fixtures/hiring_demo.json is out of date; regenerate it with "
        "`python manage.py hiring_demo_fixture --output records/fixtures/hiring_demo.json` "
        "against an empty database"
    )
    assert not Collection.objects.exists(), "building the fixture leaves the database untouched"


@pytest.mark.django_db
def test_hiring_demo_fixture_refuses_a_workspace_that_has_collections():
    call_command("loaddata", "hiring_demo", stdout=StringIO())
    with pytest.raises(CommandError, match="already holds collections"):
        call_command("hiring_demo_fixture", stdout=StringIO())


@pytest.mark.postgres
@pytest.mark.django_db
def test_truncating_records_empties_the_full_text_index_too():
    """Django's flush truncates; without the statement trigger the index keeps gone records."""
    call_command("loaddata", "hiring_demo", stdout=StringIO())
    assert _search_index_rows() == Record.objects.count()

    call_command("flush", interactive=False, stdout=StringIO())

    assert _search_index_rows() == 0
    call_command("loaddata", "hiring_demo", stdout=StringIO())
    assert _search_index_rows() == Record.objects.count(), "a reload is indexed once"
