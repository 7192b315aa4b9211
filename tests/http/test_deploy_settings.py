"""Behind the TLS proxy the server is deployment-grade: `check --deploy` is clean, responses carry
HSTS, the session and CSRF cookies are Secure, and plain http is redirected. Without the proxy
one warning (anchor.W010) says what is missing, and a weakened HSTS setting is reported.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
from django.test import Client

from tests.e2e.server import REPO_ROOT, base_env
from tests.http.live_servers import THROUGH_PROXY, start
from tests.http.test_live_server import ON_POSTGRES, LiveServer

# The README's production environment (the database aside, which the checks do not read).
PRODUCTION = {
    "SECRET_KEY": "deploy-settings-test-" + "k" * 40,
    "ALLOWED_HOSTS": "anchor.example.com,127.0.0.1",
    "ANCHOR_BEHIND_TLS_PROXY": "true",
}
ONE_YEAR = 365 * 24 * 60 * 60


def check_deploy(tmp_path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO_ROOT,
        env=base_env(ANCHOR_DB_PATH=str(tmp_path / "anchor.db"), **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def check_ids(done: subprocess.CompletedProcess[str]) -> set[str]:
    return set(re.findall(r"\(([a-z_]+\.[WE]\d+)\)", done.stdout + done.stderr))


@pytest.mark.backend_free  # `check --deploy` reads settings, never the database
def test_check_deploy_is_clean_with_the_production_environment(tmp_path):
    done = check_deploy(tmp_path, **PRODUCTION)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout, done.stdout


@pytest.mark.backend_free  # `check --deploy` reads settings, never the database
def test_without_the_proxy_one_warning_names_the_setting(tmp_path):
    done = check_deploy(tmp_path, **{**PRODUCTION, "ANCHOR_BEHIND_TLS_PROXY": "false"})
    assert done.returncode != 0
    assert check_ids(done) == {"anchor.W010"}, done.stderr
    assert "ANCHOR_BEHIND_TLS_PROXY=true" in done.stderr


@pytest.mark.backend_free  # `check --deploy` reads settings, never the database
@pytest.mark.parametrize(
    ("setting", "warning"),
    [("ANCHOR_HSTS_SECONDS", "security.W004"), ("ANCHOR_HSTS_INCLUDE_SUBDOMAINS", "security.W005")],
)
def test_weakened_hsts_is_reported(tmp_path, setting, warning):
    done = check_deploy(tmp_path, **PRODUCTION, **{setting: "0"})
    assert done.returncode != 0
    assert check_ids(done) == {warning}, done.stderr


@pytest.mark.backend_free  # `check --deploy` reads settings, never the database
def test_the_test_switch_for_loopback_metadata_documents_is_reported(tmp_path):
    done = check_deploy(tmp_path, **PRODUCTION, ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK="true")
    assert done.returncode != 0
    assert check_ids(done) == {"anchor.W011"}, done.stderr
    assert "ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK" in done.stderr


@pytest.mark.backend_free  # `check --deploy` reads settings, never the database
def test_a_bad_hsts_value_is_refused_naming_the_variable(tmp_path):
    done = check_deploy(tmp_path, **PRODUCTION, ANCHOR_HSTS_SECONDS="a year")
    assert done.returncode != 0
    assert "ANCHOR_HSTS_SECONDS='a year'" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.django_db
def test_without_the_proxy_nothing_claims_tls():
    login = Client().get("/admin/login/")
    assert login.status_code == 200
    assert "Strict-Transport-Security" not in login.headers
    assert not login.cookies["csrftoken"]["secure"]


@pytest.fixture
def live_behind_proxy(tmp_path) -> Iterator[LiveServer]:
    yield from start(tmp_path, ANCHOR_BEHIND_TLS_PROXY="true")


def set_cookies(response: httpx.Response) -> dict[str, str]:
    """Each Set-Cookie by name, whole (httpx's jar would hide Secure cookies over plain http)."""
    return {header.split("=", 1)[0]: header for header in response.headers.get_list("set-cookie")}


@pytest.mark.slow
@pytest.mark.django_db(transaction=ON_POSTGRES)
def test_behind_the_proxy_responses_carry_hsts_and_secure_cookies(live_behind_proxy):
    live = live_behind_proxy
    live.manage("anchor_member", "add", "priya", "team-a", "--create-user")
    set_password = (
        "from django.contrib.auth import get_user_model; "
        "u = get_user_model().objects.get(username='priya'); "
        "u.set_password('a long passphrase 42'); u.is_staff = True; u.save()"
    )
    live.manage("shell", "-c", set_password)
    origin = live.url.replace("http://", "https://")

    plain = httpx.get(f"{live.url}/admin/login/")
    assert plain.status_code == 301 and plain.headers["location"].startswith("https://")

    login = httpx.get(f"{live.url}/admin/login/", headers=THROUGH_PROXY)
    assert login.status_code == 200
    assert login.headers["Strict-Transport-Security"] == (f"max-age={ONE_YEAR}; includeSubDomains")
    csrf_cookie = set_cookies(login)["csrftoken"]
    assert "; Secure" in csrf_cookie, csrf_cookie
    csrf = csrf_cookie.split("=", 1)[1].split(";", 1)[0]

    signed_in = httpx.post(
        f"{live.url}/admin/login/?next=/admin/",
        data={"username": "priya", "password": "a long passphrase 42", "csrfmiddlewaretoken": csrf},
        headers={**THROUGH_PROXY, "Origin": origin, "Cookie": f"csrftoken={csrf}"},
    )
    assert signed_in.status_code == 302, signed_in.text[:500]
    session_cookie = set_cookies(signed_in)["sessionid"]
    assert "; Secure" in session_cookie and "; HttpOnly" in session_cookie, session_cookie
