"""Restore a workspace written by export_workspace into this database, all or nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from records.meaning import embeddings, model
from records.transfer import TransferError, check_file, import_workspace


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
        bar = tqdm(unit="rows", disable=None if options["verbosity"] else True)
        try:
            checked = check_file(path)
            bar.total = sum(n for n in checked.rows.values() if isinstance(n, int))
            workspace, loaded = import_workspace(
                checked, replace=options["replace"], progress=bar.update
            )
        except TransferError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            bar.close()
        if options["verbosity"]:
            self.stdout.write(self.style.SUCCESS(f"Restored {loaded} rows into {workspace!r}."))
        if model.enabled():
            embeddings.catch_up_now(workspace)
