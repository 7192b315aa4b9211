"""A migrated SQLite file for each server a test starts, copied instead of migrated again.

Migrating a new file takes about three seconds of a server's first start, and well over a
hundred tests start a server on a file of their own. Each test process migrates one template
the first time a test asks, and every later test gets a copy of it made with SQLite's backup
API (a consistent copy whatever journal mode the template was left in).

Tests of the first start itself (a missing file is created and migrated, a bad path is named)
do not use this: they pass a path that does not exist yet, as a new install would.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


@cache
def _template() -> Path:
    """This process's migrated template, made on first use and kept until the process ends."""
    directory = Path(tempfile.mkdtemp(prefix="anchor-template-"))
    path = directory / "template.db"
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "DJANGO_SETTINGS_MODULE": "anchor_site.settings",
        "ANCHOR_DB_PATH": str(path),
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "--verbosity", "0"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"migrating the template database failed:\n{done.stderr}")
    return path


def copy_sqlite(source_path: Path, target_path: Path) -> None:
    """Overwrite target with source through SQLite's backup API (consistent in any journal mode)."""
    source = sqlite3.connect(source_path)
    target = sqlite3.connect(target_path)
    try:
        source.backup(target)
    finally:
        target.close()
        source.close()


def migrated_copy(path: Path) -> str:
    """A migrated, empty database at `path` (which must not exist yet); its path as a string."""
    copy_sqlite(_template(), path)
    return str(path)
