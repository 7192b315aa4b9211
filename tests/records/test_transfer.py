"""export_workspace / import_workspace: a round trip through a fresh database loses nothing."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction

from records import services, transfer
from records.meaning.embeddings import missing_record_ids
from records.models import (
    AuditEvent,
    Record,
    RecordAlias,
    RecordVersion,
    Relationship,
    RevisionCounter,
)
from records.services import WriteContext
from records.transfer import check_file, export_workspace, import_workspace
from tests.conftest import WORKSPACE, make_collection, make_record
from tests.e2e.server import postgres_url
from tests.migrated_schema import migrated_copy

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
    kinds = {line.split('"model": "')[1].split('"')[0] for line in lines[1:-1]}
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


def test_replace_discards_what_the_file_lacks_and_only_in_its_workspace(
    history, ctx, other_ctx, tmp_path
):
    path = tmp_path / "export.jsonl"
    call_command("export_workspace", str(path), verbosity=0)
    later = make_record(ctx, history.people, "Priya")
    services.record_update(ctx=ctx, record_id=later.pk, changes={"x": 1}, expected_version=1)
    elsewhere = make_record(other_ctx, make_collection(other_ctx, "notes"), "Kept")
    call_command("import_workspace", str(path), "--replace", verbosity=0)
    assert not Record.objects.filter(pk=later.pk).exists()
    assert not RecordVersion.objects.filter(record_id=later.pk).exists()
    assert not AuditEvent.objects.filter(record_id=later.pk).exists()
    assert Record.objects.filter(pk=history.kirat.pk, version=3).exists()
    assert Record.objects.get(pk=elsewhere.pk).title == "Kept"
    assert RecordVersion.objects.filter(record_id=elsewhere.pk).count() == 1
    assert AuditEvent.objects.filter(workspace_id=other_ctx.workspace_id).count() == 2


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


def rewrite_footer(lines: list[str], **rows: int) -> list[str]:
    """The body as given with a footer that matches it: a file forged to pass the checksum."""
    import hashlib

    body = lines[:-1]
    footer = json.loads(lines[-1])["footer"]
    footer["rows"].update(rows)
    footer["sha256"] = hashlib.sha256("".join(body).encode()).hexdigest()
    return [*body, json.dumps({"footer": footer}) + "\n"]


INTRUDER = '{"model": "auth.user", "pk": 999, "fields": {"username": "intruder"}}\n'


def damaged(lines: list[str]) -> dict[str, list[str] | str]:
    text = "".join(lines)
    versions = [i for i, line in enumerate(lines) if '"records.recordversion"' in line]
    swapped = list(lines)
    swapped[versions[0]], swapped[versions[1]] = swapped[versions[1]], swapped[versions[0]]
    record = next(i for i, line in enumerate(lines) if '"records.record"' in line)
    return {
        "cut at a quarter": lines[: len(lines) // 4],
        "cut at a half": lines[: len(lines) // 2],
        "cut before the footer": lines[:-1],
        "cut mid-line": text[: len(text) * 3 // 5],
        "cut mid-footer": text[:-20],
        "header only": lines[:1],
        "empty": "",
        "not text": "\x00\xff\xfe garbage\n",
        "a value altered": text.replace("Pune", "Puna"),
        "two rows swapped": swapped,
        "footer counts altered": rewrite_footer(lines, **{"records.record": 99}),
        "a record left out": rewrite_footer(lines[:record] + lines[record + 1 :]),
        "a row of another kind": rewrite_footer([*lines[:2], INTRUDER, *lines[2:]]),
        "a row twice": rewrite_footer([*lines[: record + 1], *lines[record:]]),
        "a row made unreadable": rewrite_footer(
            [*lines[:2], '{"model": "records.nothing"}\n', *lines[2:]]
        ),
    }


REFUSALS = {
    "cut at a quarter": "no footer",
    "cut at a half": "no footer",
    "cut before the footer": "no footer",
    "cut mid-line": "no footer",
    "cut mid-footer": "no footer",
    "header only": "no footer",
    "empty": "not an Anchor workspace export",
    "not text": "not an Anchor workspace export",
    "a value altered": "does not match its footer's checksum",
    "two rows swapped": "does not match its footer's checksum",
    "footer counts altered": "do not match the footer's counts",
    "a record left out": "which the file does not hold",
    "a row of another kind": "line 3 is a kind of row no export holds (auth.user)",
    "a row twice": "rows do not fit this database",
    "a row made unreadable": "line 3 is not an export row",
}


def test_a_file_cut_short_or_altered_is_refused_in_one_line_and_writes_nothing(history, tmp_path):
    path = tmp_path / "export.jsonl"
    call_command("export_workspace", str(path), verbosity=0)
    lines = path.read_text().splitlines(keepends=True)
    before = (
        sorted(Record.objects.values_list("id", "version")),
        RecordVersion.objects.count(),
        AuditEvent.objects.count(),
        dict(RevisionCounter.objects.values_list("key", "value")),
    )
    cases = damaged(lines)
    assert set(cases) == set(REFUSALS)
    for name, content in cases.items():
        broken = tmp_path / "broken.jsonl"
        broken.write_text(content if isinstance(content, str) else "".join(content))
        with pytest.raises(CommandError) as refused:
            call_command("import_workspace", str(broken), "--replace", verbosity=0)
        message = str(refused.value)
        assert REFUSALS[name] in message and "\n" not in message, (name, message)
        after = (
            sorted(Record.objects.values_list("id", "version")),
            RecordVersion.objects.count(),
            AuditEvent.objects.count(),
            dict(RevisionCounter.objects.values_list("key", "value")),
        )
        assert after == before, name


@pytest.mark.sqlite  # the command in a process of its own, on a file; once is enough
def test_the_command_refuses_a_broken_file_without_a_traceback(history, tmp_path):
    path = tmp_path / "export.jsonl"
    call_command("export_workspace", str(path), verbosity=0)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    fresh = Path(migrated_copy(tmp_path / "fresh.db"))
    refused = manage(fresh, "import_workspace", str(path))
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines() == [
        "CommandError: the file has no footer: it was cut short, or written before exports "
        "had one; take the export again with export_workspace."
    ]
    with sqlite3.connect(fresh) as db:
        assert db.execute("SELECT count(*) FROM records_record").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM records_workspace").fetchone() == (0,)


def busy_source(tmp_path: Path) -> tuple[dict[str, str], Callable[[], None]]:
    """Environment naming a database apart from this test's, for the writers and exports; and
    how to drop it."""
    env = {"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "anchor_site.settings"}
    if connection.vendor == "sqlite":
        return {**env, "ANCHOR_DB_PATH": migrated_copy(tmp_path / "busy.db")}, lambda: None
    import psycopg

    settings = connection.settings_dict
    name = f"{settings['NAME']}_busy"
    admin_url = postgres_url({**settings, "NAME": "postgres"})

    def drop() -> None:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    drop()
    connection.close()  # a template database may have no other session
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{settings["NAME"]}"')
    return {**env, "DATABASE_URL": postgres_url({**settings, "NAME": name})}, drop


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_exports_taken_while_writers_run_all_restore_whole(tmp_path):
    env, drop = busy_source(tmp_path)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tests.records.busy_export", str(tmp_path), "10"],
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        drop()
    assert done.returncode == 0, done.stderr
    sizes = []
    for index in range(10):
        path = tmp_path / f"export-{index}.jsonl"
        with transaction.atomic():  # each restore into the same empty database, then undone
            workspace, _ = import_workspace(check_file(path))
            held = Record.objects.filter(workspace_id=workspace)
            records = dict(held.values_list("id", "version"))
            versions = RecordVersion.objects.filter(record__workspace_id=workspace)
            assert sorted(versions.values_list("record_id", "version")) == sorted(
                (record, n) for record, version in records.items() for n in range(1, version + 1)
            ), "every record holds each of its versions, and no version is without its record"
            events = AuditEvent.objects.filter(workspace_id=workspace).exclude(record_id="")
            assert set(events.values_list("record_id", flat=True)) == set(records)
            links = Relationship.objects.filter(workspace_id=workspace)
            assert {*links.values_list("source_id", flat=True)} <= set(records)
            again = StringIO()
            export_workspace(workspace, again)
            assert again.getvalue() == path.read_text(), "the restore is the file, row for row"
            sizes.append(len(records))
            transaction.set_rollback(True)
    assert len(set(sizes)) > 1, f"the writers wrote between the exports: {sizes}"


@pytest.mark.postgres
def test_a_postgres_restore_moves_each_counter_once_and_leaves_triggers_on(history, ctx, tmp_path):
    kirat = history.kirat
    path = tmp_path / "export.jsonl"
    call_command("export_workspace", str(path), verbosity=0)
    counters = dict(RevisionCounter.objects.values_list("key", "value"))
    records = Record.objects.filter(workspace_id="local")
    aliases = RecordAlias.objects.filter(workspace_id="local").count()
    links = Relationship.objects.filter(workspace_id="local")
    degree = links.filter(source_id=kirat.pk).count() + links.filter(target_id=kirat.pk).count()
    call_command("import_workspace", str(path), "--replace", verbosity=0)
    after = dict(RevisionCounter.objects.values_list("key", "value"))
    # One move for the replaced rows, then one per restored row, as the triggers would.
    assert after["names:*"] == counters["names:*"] + 1 + records.count() + aliases
    assert after["meaning:records"] == counters["meaning:records"] + 1 + records.count()
    assert degree and after[f"links:{kirat.pk}"] == counters[f"links:{kirat.pk}"] + 1 + degree
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tgname FROM pg_trigger WHERE tgname = ANY(%s) AND tgenabled = 'O'",
            [[t for triggers in transfer.BULK_TRIGGERS.values() for t in triggers]],
        )
        assert len(cursor.fetchall()) == 5, "every trigger a restore turned off is on again"
    services.record_update(ctx=ctx, record_id=kirat.pk, changes={"x": 1}, expected_version=3)
    moved = dict(RevisionCounter.objects.values_list("key", "value"))
    assert moved["meaning:records"] == after["meaning:records"] + 1


@pytest.mark.postgres
def test_a_postgres_restore_leaves_the_planner_statistics_current(history, ctx, tmp_path):
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE records_record")
        make_record(ctx, history.people, "One more")  # the statistics are now one row behind
        path = tmp_path / "export.jsonl"
        call_command("export_workspace", str(path), verbosity=0)
        call_command("import_workspace", str(path), "--replace", verbosity=0)
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'records_record'")
        assert cursor.fetchone()[0] == Record.objects.count()


@pytest.mark.django_db(transaction=True)
def test_a_restore_is_embedded_for_search_by_meaning_before_the_command_returns(tmp_path):
    services.workspace_ensure(WORKSPACE)
    ctx = WriteContext(workspace_id=WORKSPACE, actor_id="a", decision_reason="t")
    notes = make_collection(ctx, "decisions", "Decisions we made and why")
    for title in ("OAuth design decision", "Database migration to PostgreSQL 16"):
        make_record(ctx, notes, title)
    path = tmp_path / "export.jsonl"
    call_command("export_workspace", str(path), verbosity=0)
    call_command("import_workspace", str(path), "--replace", verbosity=0)
    assert Record.objects.filter(workspace_id=WORKSPACE).count() == 2
    assert missing_record_ids(WORKSPACE) == []
