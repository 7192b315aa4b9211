"""`manage.py walkthrough`: the seed's scripted scenario, end to end through real stdio servers.

The command starts its own `mcp_serve` subprocesses on its own temporary SQLite file, so these
tests need no database set-up and never touch the test database: whatever the backend, they
test SQLite, so they run in the SQLite run.
"""

from __future__ import annotations

import sqlite3
import tempfile
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from anchor_site.devtools import walkthrough
from anchor_site.devtools.management.commands.walkthrough import Command as walkthrough_command

pytestmark = pytest.mark.sqlite

# The suite runs with the production settings, which leave the developer tools out, so the
# command is called as an object; from a shell it is
# `DJANGO_SETTINGS_MODULE=anchor_site.settings_dev python manage.py walkthrough`.

STEP_LINES = [
    'Step 1/6: "Feedback for Kriat\'s backend coding interview"',
    "Step 2/6: reuse the existing Feedback collection",
    "Step 3/6: record an additional assessment",
    "Step 4/6: retry the same commit",
    "Step 5/6: remove a deliberately wrong link",
    "Step 6/6: retrieve the assessment after a server restart",
]
# The key answer of each step, as the command prints it.
KEY_ANSWERS = [
    "-> needs_clarification, nothing selected; suggests 'Kirat'",
    'user (scripted): "yes, Kirat"',
    "-> resolved: Kirat - Junior Backend (linked to Kirat)",
    "-> resolved: Kirat - Junior Backend - coding interview",
    "'feedback' exists (exact name match",
    "-> no_match",
    "-> committed: assessment --for_interview--> coding interview",
    "-> committed, replayed=true",
    "-> 1 record with this title",
    "-> committed: assessment --for_interview--> system design interview",
    "-> 2 outgoing links; the wrong one is relationship",
    "-> context now shows one link: assessment --for_interview--> coding interview",
    "[server 1 stopped",
    "[server 2: `manage.py mcp_serve` started",
    "-> replayed=true after the restart too",
]


@pytest.fixture
def own_tempdir(tmp_path, monkeypatch) -> Path:
    """The command's temporary directory is created here, so a test can see what it leaves."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


@pytest.mark.slow
def test_walkthrough_prints_every_step_and_passes(own_tempdir):
    out = StringIO()

    call_command(walkthrough_command(), "--keep", stdout=out)

    text = out.getvalue()
    for number, heading in enumerate(STEP_LINES, start=1):
        assert heading in text, f"missing heading of step {number}:\n{text}"
        assert f"ok step {number} passed" in text, f"step {number} did not pass:\n{text}"
    for answer in KEY_ANSWERS:
        assert answer in text, f"missing {answer!r} in:\n{text}"
    assert "Walkthrough passed: all 6 steps behaved as scripted" in text
    assert text.index("[server 1 stopped") < text.index("Step 6/6")

    # --keep leaves the temporary database, and it really holds what the servers wrote.
    kept = [line for line in text.splitlines() if line.startswith("Kept the database: ")]
    assert len(kept) == 1, text
    db_path = Path(kept[0].removeprefix("Kept the database: "))
    assert db_path.parent.parent == own_tempdir
    with sqlite3.connect(db_path) as db:
        (created,) = db.execute(
            "SELECT count(*) FROM records_record WHERE title = ?", [walkthrough.NEW_TITLE]
        ).fetchone()
        (links,) = db.execute(
            "SELECT count(*) FROM records_relationship r JOIN records_record s "
            "ON s.id = r.source_id WHERE s.title = ?",
            [walkthrough.NEW_TITLE],
        ).fetchone()
    assert (created, links) == (1, 1), "one assessment with exactly its one right link"


@pytest.mark.slow
def test_a_step_that_does_not_behave_as_scripted_fails_the_command(own_tempdir, monkeypatch):
    # Asking for the correct spelling resolves at once, so the scripted clarification of the
    # misspelt name cannot happen: step 1 must fail, clearly, and nothing may be left behind.
    monkeypatch.setattr(walkthrough, "TYPO", "Kirat")
    out = StringIO()

    with pytest.raises(CommandError) as failure:
        call_command(walkthrough_command(), stdout=out)

    message = str(failure.value)
    assert message.startswith("Walkthrough failed at step 1"), message
    assert "should need clarification" in message and "'resolved'" in message, message
    assert "--keep" in message
    assert "ok step 1 passed" not in out.getvalue()
    assert list(own_tempdir.iterdir()) == [], "the temporary database must be removed"


def test_quiet_run_prints_nothing_but_what_keep_asks_for(own_tempdir, monkeypatch):
    """--verbosity 0 stays silent; the steps never run here (the set-up is stubbed)."""

    def finished(**kwargs):
        return walkthrough.Walkthrough(
            base_dir=kwargs["base_dir"],
            db_path=kwargs["db_path"],
            say=kwargs["say"],
            server_log=kwargs["server_log"],
        )

    monkeypatch.setattr(walkthrough, "run_walkthrough", finished)
    out = StringIO()

    call_command(walkthrough_command(), verbosity=0, stdout=out)

    assert out.getvalue() == ""
    assert list(own_tempdir.iterdir()) == []
