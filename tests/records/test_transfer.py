"""export_workspace / import_workspace: a round trip through a fresh database loses nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from records import services
from records.models import AuditEvent, Record, RevisionCounter
from tests.migrated_sqlite import migrated_copy

REPO_ROOT = Path(__file__).resolve().parents[2]


def manage(db_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        "PATH": os.environ["PATH"],
        "DJANGO_SETTINGS_MODULE": "anchor_site.settings",
        "ANCHOR_DB_PATH": str(db_path),
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def history(hiring, ctx):
    services.record_update(
        ctx=ctx, record_id=hiring.kirat.pk, changes={"city": "Pune"}, expected_version=1
    )
    services.record_alias_add(ctx=ctx, record_id=hiring.kirat.pk, alias="KS", expected_version=2)
    services.record_archive(ctx=ctx, record_id=hiring.abhishek.pk, expected_version=1)
    services.self_mapping_set(ctx=ctx, record_id=hiring.kirat.pk, expected_version=3)
    services.collection_alias_add(ctx=ctx, collection_id=hiring.people.pk, alias="folks")
    return hiring


def test_round_trip_through_a_fresh_database_is_identical(history, tmp_path):
    first = tmp_path / "first.jsonl"
    call_command("export_workspace", str(first), verbosity=0)
    fresh = Path(migrated_copy(tmp_path / "fresh.db"))  # what `migrate` makes, without its run
    restored = manage(fresh, "import_workspace", str(first))
    assert restored.returncode == 0, restored.stderr
    second = tmp_path / "second.jsonl"
    exported = manage(fresh, "export_workspace", str(second))
    assert exported.returncode == 0, exported.stderr
    assert first.read_text() == second.read_text()
    lines = first.read_text().splitlines()
    kinds = {line.split('"model": "')[1].split('"')[0] for line in lines[1:]}
    assert {
        "records.record",
        "records.recordversion",
        "records.auditevent",
        "records.relationship",
        "records.recordalias",
        "records.collectionalias",
        "records.selfmapping",
        "records.collection",
    } <= kinds


def test_restore_rebuilds_counters_and_search_and_refuses_to_overwrite(history, tmp_path):
    path = tmp_path / "export.jsonl"
    call_command("export_workspace", str(path), verbosity=0)
    with pytest.raises(CommandError, match="exists; pass --force"):
        call_command("export_workspace", str(path), verbosity=0)
    with pytest.raises(CommandError, match="already holds data"):
        call_command("import_workspace", str(path), verbosity=0)
    counters = dict(RevisionCounter.objects.values_list("key", "value"))
    records = sorted(Record.objects.values_list("id", "title", "version", "data"))
    events = AuditEvent.objects.count()
    out = StringIO()
    call_command("import_workspace", str(path), "--replace", stdout=out)
    assert "Restored" in out.getvalue()
    assert sorted(Record.objects.values_list("id", "title", "version", "data")) == records
    assert AuditEvent.objects.count() == events
    # Triggers ran for every restored row, so every counter moved forward, none backward.
    after = dict(RevisionCounter.objects.values_list("key", "value"))
    assert all(after[key] > value for key, value in counters.items())


def test_bad_files_are_refused(db, tmp_path):
    bogus = tmp_path / "bogus.jsonl"
    bogus.write_text('{"hello": 1}\n')
    with pytest.raises(CommandError, match="not an Anchor workspace export"):
        call_command("import_workspace", str(bogus), verbosity=0)
    with pytest.raises(CommandError, match="is not a file"):
        call_command("import_workspace", str(tmp_path / "missing.jsonl"), verbosity=0)
    with pytest.raises(CommandError, match="does not exist"):
        call_command(
            "export_workspace", str(tmp_path / "x.jsonl"), "--workspace", "nope", verbosity=0
        )
    assert not (tmp_path / "x.jsonl").exists()
