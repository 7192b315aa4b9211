"""Admin test fixtures: a signed-in superuser over the shared hiring demo; the two teams."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests import shared_data
from tests.admin.teams import Team, seed_team

# The real-browser fixtures, for every browser test file in this folder.
from tests.admin.test_browser import browser, browser_page, shots, sync_api  # noqa: F401
from tests.shared_data import SharedDemos


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


def _seed_teams() -> tuple[Team, Team]:
    return (
        seed_team(get_user_model(), "alpha", "team-a"),
        seed_team(get_user_model(), "bravo", "team-b"),
    )


shared_data.register("teams", _seed_teams)


@pytest.fixture
def teams(db, shared_demos: SharedDemos) -> tuple[Team, Team]:
    """team-a and team-b, each seeded with one of everything and a staff member of its own.

    Built once and shared when the test rolls back (tests/shared_data.py), else built here.
    """
    return shared_demos.for_this_test("teams") or _seed_teams()
