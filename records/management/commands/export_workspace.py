"""Write one workspace (collections, records with every version, links, aliases, self
mappings, audit events) to a JSON Lines file that import_workspace restores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from records.transfer import TransferError, count_rows, export_workspace


class Command(BaseCommand):
    help = "Export a workspace to a JSON Lines file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="File to write, e.g. anchor-export.jsonl")
        parser.add_argument(
            "--workspace",
            default=None,
            help="Workspace to export (default: ANCHOR_WORKSPACE_ID, usually 'local').",
        )
        parser.add_argument("--force", action="store_true", help="Overwrite an existing file.")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"])
        workspace = options["workspace"] or settings.ANCHOR_WORKSPACE_ID
        if path.exists() and not options["force"]:
            raise CommandError(f"{path} exists; pass --force to overwrite it.")
        total = count_rows(workspace)
        bar = tqdm(total=total, unit="rows", disable=None if options["verbosity"] else True)
        partial = path.with_name(path.name + ".partial")
        try:
            with open(partial, "w", encoding="utf-8") as out:
                written = export_workspace(workspace, out, progress=bar.update)
        except TransferError as exc:
            partial.unlink(missing_ok=True)
            raise CommandError(str(exc)) from exc
        finally:
            bar.close()
        partial.replace(path)  # never leave a half-written export under the real name
        if options["verbosity"]:
            self.stdout.write(
                self.style.SUCCESS(f"Exported {written} rows of {workspace!r} to {path}.")
            )
