"""Where the browser tests must run (ANCHOR_REQUIRE_BROWSER=1, as .ci/run sets), a missing
browser fails them; elsewhere it skips them. Run as CI runs them: pytest in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ONE_BROWSER_TEST = (
    "tests/admin/test_browser.py::test_person_edits_and_archives_a_record_in_a_real_browser"
)


def run_without_a_browser(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PYTEST_") and k not in ("DATABASE_URL", "ANCHOR_REQUIRE_BROWSER")
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-rsE"]
        + [ONE_BROWSER_TEST],
        cwd=REPO_ROOT,
        env={**base, "ANCHOR_CHROMIUM": str(tmp_path / "no-chromium"), **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow  # a pytest subprocess
def test_a_missing_browser_skips_the_browser_tests_by_default(tmp_path):
    done = run_without_a_browser(tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "1 skipped" in done.stdout and "no browser at" in done.stdout, done.stdout[-3000:]


@pytest.mark.slow  # a pytest subprocess
def test_a_missing_browser_fails_them_where_they_are_required(tmp_path):
    done = run_without_a_browser(tmp_path, ANCHOR_REQUIRE_BROWSER="1")
    assert done.returncode == 1, done.stdout[-3000:]
    assert "1 error" in done.stdout, done.stdout[-3000:]
    assert "ANCHOR_REQUIRE_BROWSER=1 requires the browser tests to run" in done.stdout
