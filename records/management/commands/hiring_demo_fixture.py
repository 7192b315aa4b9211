"""Write records/fixtures/hiring_demo.json by running the hiring demo (hiring_demo_script.json
beside this module) through the services, so the fixture is what a real write produces and
cannot drift; the build is rolled back afterwards."""

from __future__ import annotations

import itertools
import json
import re
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

from django.core import serializers
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import models, transaction

from records import services
from records.models import Collection, Record, RecordVersion, Workspace
from records.services import CollectionFields, WriteContext
from records.transfer import MODELS

WORKSPACE = "local"
SCRIPT = Path(__file__).with_name("hiring_demo_script.json")
# The fixture must be byte-stable so a change to it reads as a reviewable diff: a fixed clock
# and identifiers derived from this namespace stand in for now() and random UUIDs.
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
ID_NAMESPACE = uuid.UUID("5b0f3c1e-6a5d-4f7e-9a43-4d1c2b8e7a10")


def build_demo() -> None:
    """Run the script: its collections, then each step's service call (hiring_demo_script.json
    says how a step names its records and collections)."""
    script = json.loads(SCRIPT.read_text(encoding="utf-8"))
    actors = {
        name: WriteContext(workspace_id=WORKSPACE, **fields)
        for name, fields in script["actors"].items()
    }
    services.workspace_ensure(WORKSPACE)
    collections = {
        name: services.collection_create(
            ctx=actors["seed"], fields=CollectionFields.validated(name=name, **fields)
        )
        for name, fields in script["collections"].items()
    }
    records: dict[str, Record] = {}
    for step in script["steps"]:
        args = {key: value for key, value in step.items() if key not in ("do", "as")}
        if "collection" in args:
            args["collection_id"] = collections[args.pop("collection")].pk
        for end in ("source", "target"):
            if end in args:
                args[f"{end}_id"] = records[args.pop(end)].pk
        if "record" in args:
            record = records[args.pop("record")]
            args.update(record_id=record.pk, expected_version=record.version)
        written = getattr(services, step["do"])(ctx=actors[step.get("as", "seed")], **args)
        if isinstance(written, Record):
            records[written.title] = written


def fixture_objects() -> list[models.Model]:
    """The workspace and its rows in load order (an export's), each kind in the order written,
    auto-numbered keys renumbered from 1. Revision counters and the search index are left out
    on purpose: the triggers build them as the rows load."""
    objects: list[models.Model] = list(Workspace.objects.filter(pk=WORKSPACE))
    for model, path in MODELS.items():
        written = "recorded_at" if model is RecordVersion else "created_at"
        rows = list(model._default_manager.filter(**{path: WORKSPACE}).order_by(written, "pk"))
        if model._meta.pk.get_internal_type() in ("AutoField", "BigAutoField"):
            for number, row in enumerate(rows, start=1):
                row.pk = number
        objects += rows
    return objects


FEED_KEY = re.compile(r',\n\s*"feed_key": "[0-9a-f]*"')


def stable_ids(text: str, objects: list[models.Model]) -> str:
    """Swap each random UUID key for one derived from its model and position."""
    seen: Counter[str | None] = Counter()
    for obj in objects:
        if isinstance(obj.pk, str) and len(obj.pk) == 36:
            label = obj._meta.model_name
            seen[label] += 1
            stable = str(uuid.uuid5(ID_NAMESPACE, f"{label}:{seen[label]}"))
            text = text.replace(obj.pk, stable)
    return text


def render_fixture() -> str:
    """The demo written out, without each workspace's change-feed key: a secret, drawn afresh
    where the fixture is loaded (its model default) rather than shared by every database."""
    minutes = (START + timedelta(minutes=n) for n in itertools.count(1))
    with transaction.atomic():
        with mock.patch("django.utils.timezone.now", side_effect=minutes):
            build_demo()
        objects = fixture_objects()
        text = serializers.serialize("json", objects, indent=2)
        transaction.set_rollback(True)  # the demo was only needed to be written out
    return FEED_KEY.sub("", stable_ids(text, objects)) + "\n"


class Command(BaseCommand):
    help = (
        "Build the hiring demo through the services and print it as a fixture (or write it "
        "with --output). Nothing is kept in the database."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", type=Path, help="Write the fixture to this file.")

    def handle(self, *args: Any, output: Path | None = None, **options: Any) -> None:
        if Collection.objects.filter(workspace_id=WORKSPACE).exists():
            raise CommandError(
                f"Workspace {WORKSPACE!r} already holds collections, so the demo would collide "
                "with them. Run against an empty database, e.g. ANCHOR_DB_PATH=/tmp/empty.db "
                "python manage.py migrate && ... hiring_demo_fixture."
            )
        text = render_fixture()
        if output is None:
            self.stdout.write(text, ending="")
            return
        output.write_text(text, encoding="utf-8")
        if options["verbosity"] >= 1:
            self.stdout.write(self.style.SUCCESS(f"Wrote {output}."))
