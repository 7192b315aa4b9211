"""Seed data through records.services into the database the environment names.

Run as `python -m tests.e2e.seed` with the server's environment, or through `seed_as` by a test
process whose own database the server shares (PostgreSQL, tests/e2e/server.py). Without
arguments it seeds a small hiring demo; `--collections NAME...` creates just those
collections. Prints the seeded IDs as JSON on stdout.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anchor_site.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", verbosity=0, stdout=sys.stderr)
    ids = seed_as(settings.ANCHOR_WORKSPACE_ID, settings.ANCHOR_ACTOR_ID, sys.argv[1:])
    sys.stdout.write(json.dumps(ids) + "\n")


def seed_as(workspace_id: str, actor_id: str, arguments: list[str]) -> dict[str, str]:
    """What the command line asks for, written as that workspace's actor; the seeded IDs."""
    from records.services import WriteContext
    from tests.conftest import make_collection

    ctx = WriteContext(
        workspace_id=workspace_id, actor_id=actor_id, decision_reason="end-to-end test seed"
    )
    if arguments[:1] == ["--collections"]:
        return {name: make_collection(ctx, name, f"Records of {name}").pk for name in arguments[1:]}
    if arguments[:1] == ["--namesakes"]:
        return seed_namesakes(ctx, seed_hiring(ctx))
    return seed_hiring(ctx)


def seed_hiring(ctx) -> dict[str, str]:
    from tests.conftest import link, make_collection, make_record

    people = make_collection(ctx, "people", "People we are hiring or working with")
    openings = make_collection(ctx, "openings", "Open roles we are hiring for")
    kirat = make_record(ctx, people, "Kirat", email="kirat@example.com")
    abhishek = make_record(ctx, people, "Abhishek")
    backend = make_record(ctx, openings, "Junior Backend", level="junior")
    link(ctx, kirat, "applied_to", backend)
    return {
        "people": people.pk,
        "openings": openings.pk,
        "kirat": kirat.pk,
        "abhishek": abhishek.pk,
        "backend": backend.pk,
    }


def seed_namesakes(ctx, ids: dict[str, str]) -> dict[str, str]:
    """Two Rahuls that differ by team and a link, and two Sams that read the same."""
    from records.models import Collection, Record
    from tests.conftest import link, make_record

    people = Collection.objects.get(pk=ids["people"])
    infra = make_record(ctx, people, "Rahul", city="Pune", team="infra")
    design = make_record(ctx, people, "Rahul", city="Pune", team="design")
    link(ctx, infra, "applied_to", Record.objects.get(pk=ids["backend"]))
    sams = [make_record(ctx, people, "Sam", team="infra") for _ in range(2)]
    return {**ids, "rahul_infra": infra.pk, "rahul_design": design.pk, "sam": sams[0].pk}


if __name__ == "__main__":
    main()
