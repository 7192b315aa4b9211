"""The developer tools (benchmarks, walkthrough) are no part of the production settings.

A deployment's `manage.py` neither lists their commands nor imports their dev-only dependency
(tiktoken); the developer settings add the app, and its commands run there, as documented.
Checked the way a person meets it: `manage.py` in a subprocess under each settings module.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# The subprocesses run without DATABASE_URL, on SQLite, whatever the backend of this run.
pytestmark = pytest.mark.sqlite

REPO_ROOT = Path(__file__).resolve().parents[1]
DEV = "anchor_site.settings_dev"
PROBE = (
    "import sys, django; django.setup(); "
    "from django.conf import settings; from django.core.management import get_commands; "
    "commands = get_commands(); "
    "print('devtools' if 'anchor_site.devtools' in settings.INSTALLED_APPS else 'no devtools', "
    "'benchmark' in commands, 'walkthrough' in commands, 'tiktoken' in sys.modules)"
)


def run(*args: str, settings: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "PYTEST_XDIST_WORKER")}
    env["DJANGO_SETTINGS_MODULE"] = settings
    return subprocess.run(
        [sys.executable, *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_production_settings_leave_the_developer_tools_out():
    probe = run("-c", PROBE, settings="anchor_site.settings")
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == ["no", "devtools", "False", "False", "False"], probe.stdout
    unknown = run("manage.py", "benchmark", "--help", settings="anchor_site.settings")
    assert unknown.returncode != 0
    assert "Unknown command: 'benchmark'" in unknown.stderr, unknown.stderr


@pytest.mark.parametrize("command", ["benchmark", "walkthrough"])
def test_the_developer_settings_run_the_tools(command):
    probe = run("-c", PROBE, settings=DEV)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == ["devtools", "True", "True", "False"], probe.stdout
    shown = run("manage.py", command, "--help", settings=DEV)
    assert shown.returncode == 0, shown.stderr
    assert f"usage: manage.py {command}" in shown.stdout, shown.stdout
