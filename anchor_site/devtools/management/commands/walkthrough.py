"""Run the scripted walkthrough against a temporary database, printing every step; your own
database (anchor.db or DATABASE_URL) is never opened."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from anchor_site.devtools import walkthrough as script

INDENTS = {script.HEADING: "\n", script.CALL: "  ", script.ANSWER: "      "}
STYLES = {script.HEADING: "MIGRATE_HEADING", script.CALL: "MIGRATE_LABEL", script.PASSED: "SUCCESS"}


class Command(BaseCommand):
    help = (
        "Run the scripted walkthrough (Kriat -> Kirat, reuse of Feedback, an additional "
        "assessment, idempotent retry, removal of a wrong link, retrieval after restart) "
        "against a temporary SQLite database through a real MCP stdio client. Never touches "
        "your own database."
    )
    # It opens no database: the servers it starts get an environment naming the temporary file.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--keep",
            action="store_true",
            help="Keep the temporary database (and the servers' log) and print where it is.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        keep: bool = options["keep"]
        self.verbosity: int = options["verbosity"]
        workdir = Path(tempfile.mkdtemp(prefix="anchor-walkthrough-"))
        db_path = workdir / "walkthrough.db"
        log_path = workdir / "servers.log"
        if self.verbosity >= 1:
            self.stdout.write(
                "Anchor walkthrough: a scripted agent with prescribed user answers, against a "
                "temporary database (never your own)."
            )
        try:
            with log_path.open("w", encoding="utf-8") as server_log:
                run = script.run_walkthrough(
                    base_dir=Path(settings.BASE_DIR),
                    db_path=db_path,
                    server_log=server_log,
                    say=self.emit,
                )
        except script.WalkthroughFailed as failure:
            raise CommandError(self.failure_message(failure, log_path, keep)) from failure
        finally:
            if not keep:
                shutil.rmtree(workdir, ignore_errors=True)

        if self.verbosity >= 1:
            self.stdout.write(
                self.style.SUCCESS(
                    f"\nWalkthrough passed: all {len(script.STEPS)} steps behaved as scripted "
                    f"in {run.elapsed:.1f}s ({run.calls} tool calls, {run.servers} server "
                    "processes)."
                )
            )
        if keep:  # asked for explicitly, so shown even at --verbosity 0
            self.stdout.write(
                f"Kept the database: {db_path}\nServers' log: {log_path}\n"
                f"Open it by setting ANCHOR_DB_PATH={db_path} for mcp_serve or the admin."
            )

    def emit(self, kind: str, text: str) -> None:
        """Show one line of the walkthrough; verbosity 1 tells the story, 2 adds details."""
        if self.verbosity >= (2 if kind == script.DETAIL else 1):
            line = INDENTS.get(kind, "  ") + text
            self.stdout.write(getattr(self.style, STYLES[kind])(line) if kind in STYLES else line)

    def failure_message(self, failure: script.WalkthroughFailed, log_path: Path, keep: bool) -> str:
        message = f"Walkthrough failed at {failure.step}: {failure.message}"
        if log_path.exists() and (tail := log_path.read_text(errors="replace").strip()[-1500:]):
            message += f"\nServers' log (end):\n{tail}"
        if keep:
            return message + f"\nThe temporary database is kept in {log_path.parent}."
        return message + "\nRun again with --keep to inspect the temporary database."
