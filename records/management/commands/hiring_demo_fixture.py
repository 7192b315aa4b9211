"""Write records/fixtures/hiring_demo.json by running the hiring demo through the services, so the
fixture is what a real write produces and cannot drift; the build is rolled back afterwards."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

from django.core import serializers
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from records import services
from records.models import (
    AuditEvent,
    Collection,
    CollectionAlias,
    Record,
    RecordAlias,
    RecordVersion,
    Relationship,
    Workspace,
)
from records.services import CollectionFields, WriteContext

WORKSPACE = "local"
SEED = WriteContext(
    workspace_id=WORKSPACE,
    actor_id="seed:hiring_demo",
    decision_reason="Hiring demo seed data.",
)
# The fixture must be byte-stable so a change to it reads as a reviewable diff: a fixed clock
# and identifiers derived from this namespace stand in for now() and random UUIDs.
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
ID_NAMESPACE = uuid.UUID("5b0f3c1e-6a5d-4f7e-9a43-4d1c2b8e7a10")

COLLECTIONS = {
    "people": (
        "People we are hiring or who take part in hiring: candidates and interviewers.",
        "One person, candidate or colleague.",
        ["email", "role", "team"],
        "Applications point at their applicant; interviews and feedback point at people.",
    ),
    "openings": (
        "Open roles we are hiring for.",
        "One open role at one level.",
        ["level", "team", "status"],
        "Applications point at the opening they are for.",
    ),
    "applications": (
        "A person's application to one opening.",
        "One candidate applying to one opening.",
        ["stage", "source"],
        "Link to the person (applicant) and the opening (opening).",
    ),
    "interviews": (
        "Interviews held for an application.",
        "One interview round of one application.",
        ["kind", "scheduled_for"],
        "Link to the application (for_application) and the interviewer (interviewer).",
    ),
    "feedback": (
        "An interviewer's assessment of one interview.",
        "One interviewer's written assessment of one interview.",
        ["author", "recommendation", "summary"],
        "Link to the interview (for_interview) and its author (author).",
    ),
}


class Clock:
    """A clock that moves one minute per reading, from START."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def build_demo() -> None:
    def collection(name: str) -> Collection:
        purpose, meaning, typical, guidance = COLLECTIONS[name]
        fields = CollectionFields.validated(
            name=name,
            purpose=purpose,
            record_meaning=meaning,
            typical_fields=typical,
            relationship_guidance=guidance,
        )
        return services.collection_create(ctx=SEED, fields=fields)

    def record(where: Collection, title: str, **data: Any) -> Record:
        return services.record_create(ctx=SEED, collection_id=where.pk, title=title, data=data)

    def link(source: Record, kind: str, target: Record, ctx: WriteContext = SEED) -> None:
        services.relationship_create(
            ctx=ctx, source_id=source.pk, relationship_type=kind, target_id=target.pk
        )

    services.workspace_ensure(WORKSPACE)
    people, openings, applications, interviews, feedback = (
        collection(name) for name in COLLECTIONS
    )
    services.collection_alias_add(ctx=SEED, collection_id=people.pk, alias="candidates")
    kirat = record(people, "Kirat", email="kirat@example.com", role="candidate")
    abhishek = record(people, "Abhishek", email="abhishek@example.com", role="candidate")
    priya = record(people, "Priya", role="interviewer", team="backend")
    rahul = record(people, "Rahul", role="interviewer", team="frontend")
    services.record_alias_add(
        ctx=SEED, record_id=priya.pk, alias="Priya Raman", expected_version=priya.version
    )
    backend = record(openings, "Junior Backend", level="junior", team="backend", status="open")
    frontend = record(openings, "Senior Frontend", level="senior", team="frontend", status="open")
    kirat_backend = record(applications, "Kirat - Junior Backend", stage="applied")
    kirat_frontend = record(applications, "Kirat - Senior Frontend", stage="applied")
    abhishek_backend = record(applications, "Abhishek - Junior Backend", stage="applied")
    for application, person, opening in (
        (kirat_backend, kirat, backend),
        (kirat_frontend, kirat, frontend),
        (abhishek_backend, abhishek, backend),
    ):
        link(application, "applicant", person)
        link(application, "opening", opening)
    services.record_update(
        ctx=SEED,
        record_id=kirat_backend.pk,
        changes={"stage": "interview"},
        expected_version=kirat_backend.version,
    )
    coding = record(interviews, "Kirat - Junior Backend - coding interview", kind="coding")
    design = record(interviews, "Kirat - Junior Backend - system design", kind="system design")
    for interview, interviewer in ((coding, priya), (coding, rahul), (design, priya)):
        link(interview, "interviewer", interviewer)
    link(coding, "for_application", kirat_backend)
    link(design, "for_application", kirat_backend)
    # The feedback arrives through an agent, the way it would in use: its reason and the
    # clarification it reports are what a person later confirms or disputes in the admin.
    agent = WriteContext(
        workspace_id=WORKSPACE,
        actor_id="local-agent",
        decision_reason="The user asked to record Priya's feedback on Kirat's backend coding "
        "interview; the interview was resolved through Kirat's Junior Backend application.",
        clarification="The user wrote 'Kriat'; asked, they confirmed they meant Kirat, the "
        "Junior Backend applicant.",
    )
    for author, recommendation, summary in (
        (priya, "hire", "Clean, tested solution; explained trade-offs of the queue design."),
        (rahul, "lean hire", "Solid fundamentals; needed a hint on the pagination edge case."),
    ):
        ctx = agent if author is priya else SEED
        note = services.record_create(
            ctx=ctx,
            collection_id=feedback.pk,
            title=f"{author.title}'s feedback on Kirat's backend coding interview",
            data={"author": author.title, "recommendation": recommendation, "summary": summary},
        )
        link(note, "for_interview", coding, ctx)
        link(note, "author", author, ctx)


# Load order, and the stable order each model's rows are written in.
FIXTURE_MODELS: list[tuple[Any, dict[str, str], list[str]]] = [
    (Collection, {"workspace_id": WORKSPACE}, ["created_at", "pk"]),
    (CollectionAlias, {"workspace_id": WORKSPACE}, ["created_at", "pk"]),
    (Record, {"workspace_id": WORKSPACE}, ["created_at", "pk"]),
    (RecordVersion, {"record__workspace_id": WORKSPACE}, ["recorded_at", "pk"]),
    (RecordAlias, {"workspace_id": WORKSPACE}, ["created_at", "pk"]),
    (Relationship, {"workspace_id": WORKSPACE}, ["created_at", "pk"]),
    (AuditEvent, {"workspace_id": WORKSPACE}, ["pk"]),
]


def fixture_objects() -> list[Any]:
    """Rows in load order, auto-numbered keys renumbered from 1. Revision counters and the
    search index are left out on purpose: the triggers build them as the rows load."""
    objects: list[Any] = list(Workspace.objects.filter(pk=WORKSPACE))
    for model, scope, ordering in FIXTURE_MODELS:
        rows = list(model.objects.filter(**scope).order_by(*ordering))
        if model._meta.pk.get_internal_type() in ("AutoField", "BigAutoField"):
            for number, row in enumerate(rows, start=1):
                row.pk = number
        objects += rows
    return objects


FEED_KEY = re.compile(r',\n\s*"feed_key": "[0-9a-f]*"')


def stable_ids(text: str, objects: list[Any]) -> str:
    """Swap each random UUID key for one derived from its model and position."""
    seen: dict[str, int] = {}
    for obj in objects:
        if isinstance(obj.pk, str) and len(obj.pk) == 36:
            label = obj._meta.model_name
            seen[label] = seen.get(label, 0) + 1
            stable = str(uuid.uuid5(ID_NAMESPACE, f"{label}:{seen[label]}"))
            text = text.replace(obj.pk, stable)
    return text


def render_fixture() -> str:
    with transaction.atomic():
        with mock.patch("django.utils.timezone.now", Clock()):
            build_demo()
        objects = fixture_objects()
        text = serializers.serialize("json", objects, indent=2)
        transaction.set_rollback(True)  # the demo was only needed to be written out
    return without_secrets(stable_ids(text, objects)) + "\n"


def without_secrets(text: str) -> str:
    """Leave out each workspace's change-feed key: a secret, drawn afresh where the fixture is
    loaded (its model default) rather than shared by every database that loads it."""
    return FEED_KEY.sub("", text)


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
