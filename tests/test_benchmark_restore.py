"""The benchmark's restore rows: stores written through the export format restore whole, and
every row is printed with the ratio. Nothing is timed."""

from __future__ import annotations

import io

from anchor_site.devtools.benchmarks.measure import Sizes
from anchor_site.devtools.benchmarks.store import restore
from records import transfer
from records.models import AuditEvent, Record, RecordVersion, Relationship


def test_a_generated_store_is_a_valid_export_that_restores_whole(db, tmp_path):
    store = restore.Store("restore-test", 30, seed=1)
    path = tmp_path / "store.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        written = transfer.write_export(store.workspace_id, store.tables(), out)
    workspace, loaded = transfer.import_workspace(transfer.check_file(path))
    assert loaded == written
    assert Record.objects.filter(workspace_id=workspace).count() == 30
    assert RecordVersion.objects.filter(record__workspace_id=workspace).count() == 60
    assert Relationship.objects.filter(workspace_id=workspace).count() == 29
    assert AuditEvent.objects.filter(workspace_id=workspace).count() == 89
    again = io.StringIO()
    transfer.export_workspace(workspace, again)
    rows = sorted(again.getvalue().splitlines()[1:-1])  # the export orders each kind by its key
    assert rows == sorted(path.read_text().splitlines()[1:-1])


def test_every_restore_row_is_printed_with_its_ratio(db):
    rows = restore.run(Sizes(records=4_000))  # 20 and 200 records
    small, large = rows[-2:]
    assert small.what.startswith("restore, 20 records (") and small.value
    assert large.what.startswith("restore, 200 records (") and large.ratio is not None
    assert large.passed is not None and large.target == "<= 12 x the 20-record restore"
    assert "load" in small.note and "load" in large.note
