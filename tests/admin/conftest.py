"""Admin test fixtures: a signed-in superuser over the shared hiring demo."""

from __future__ import annotations

import pytest
from django.test import Client

# The real-browser fixtures, for every browser test file in this folder.
from tests.admin.test_browser import browser, browser_page, shots, sync_api  # noqa: F401


@pytest.fixture
def reviewer(db, django_user_model):
    return django_user_model.objects.create_superuser(
        username="maya", email="maya@example.com", password="correct horse battery"
    )


@pytest.fixture
def admin_client_as_maya(reviewer) -> Client:
    client = Client()
    client.force_login(reviewer)
    return client


@pytest.fixture
def teams(db, django_user_model):
    """team-a and team-b, each seeded with one of everything and a staff member of its own."""
    from tests.admin.teams import seed_team

    return (
        seed_team(django_user_model, "alpha", "team-a"),
        seed_team(django_user_model, "bravo", "team-b"),
    )
