"""Restore a workspace written by export_workspace into this database, all or nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from records.transfer import TransferError, import_workspace


class Command(BaseCommand):
    help = "Restore a workspace from a JSON Lines export into an empty workspace."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="The export file to read.")
        parser.add_argument(
            "--replace",
            action="store_true",
            help="Discard the workspace's current data (history included) and load the file.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"])
        if not path.is_file():
            raise CommandError(f"{path} is not a file.")
        with open(path, encoding="utf-8") as lines:
            total = sum(1 for _ in lines) - 1
        bar = tqdm(total=max(total, 0), unit="rows", disable=None if options["verbosity"] else True)
        try:
            with open(path, encoding="utf-8") as lines:
                workspace, loaded = import_workspace(
                    lines, replace=options["replace"], progress=bar.update
                )
        except TransferError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            bar.close()
        if options["verbosity"]:
            self.stdout.write(self.style.SUCCESS(f"Restored {loaded} rows into {workspace!r}."))
