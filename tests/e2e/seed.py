"""Seed a small hiring demo through records.services into the database the env names.

Run as `python -m tests.e2e.seed` with the server's environment: the server's database is a
file or PostgreSQL database of its own, not the one pytest-django gave the test process. Prints
the seeded IDs as JSON on stdout.
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

    from records.services import WriteContext
    from tests.conftest import link, make_collection, make_record

    call_command("migrate", verbosity=0, stdout=sys.stderr)
    ctx = WriteContext(
        workspace_id=settings.ANCHOR_WORKSPACE_ID,
        actor_id=settings.ANCHOR_ACTOR_ID,
        decision_reason="end-to-end test seed",
    )
    people = make_collection(ctx, "people", "People we are hiring or working with")
    openings = make_collection(ctx, "openings", "Open roles we are hiring for")
    kirat = make_record(ctx, people, "Kirat", email="kirat@example.com")
    abhishek = make_record(ctx, people, "Abhishek")
    backend = make_record(ctx, openings, "Junior Backend", level="junior")
    link(ctx, kirat, "applied_to", backend)
    ids = {
        "people": people.pk,
        "openings": openings.pk,
        "kirat": kirat.pk,
        "abhishek": abhishek.pk,
        "backend": backend.pk,
    }
    sys.stdout.write(json.dumps(ids) + "\n")


if __name__ == "__main__":
    main()
