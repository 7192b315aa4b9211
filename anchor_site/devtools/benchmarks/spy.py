"""py-spy: finding it, and summarising its collapsed stacks."""

import shutil
import subprocess
from collections import Counter


def py_spy() -> list[str] | None:
    found = shutil.which("py-spy")
    if found:
        return [found]
    uv = shutil.which("uv")
    if uv:
        probe = subprocess.run(
            [uv, "tool", "run", "py-spy", "--version"], capture_output=True, check=False
        )
        if probe.returncode == 0:
            return [uv, "tool", "run", "py-spy"]
    return None


# Frames that stand for well-known costs: (label, "function (file)" as py-spy names it).
MARKERS = (
    ("waiting for PostgreSQL's replies", "Connection.wait (psycopg/connection.py)"),
    ("SQL statements, sent and waited for", "CursorWrapper._execute (django/db/backends/utils.py)"),
    (
        "taking a connection (from the pool, or opened when ANCHOR_DB_POOL_SIZE=0)",
        "BaseDatabaseWrapper.connect (django/db/backends/base/base.py)",
    ),
    ("token authentication", "access_token_find (records/selectors/memberships.py)"),
    ("workspace from membership", "scope_for_user (anchor_site/http/workspace.py)"),
    ("MCP session lookup", "AnchorMCPView._owned_session (anchor_site/http/views.py)"),
    ("tool bodies (run_tool)", "run_tool (workflow/mcp/envelope.py)"),
    ("  resolve_record", "resolve_record (workflow/resolution.py)"),
    ("  prepare_write", "prepare_write (workflow/actions.py)"),
    ("  commit_write", "commit_write (workflow/actions.py)"),
    ("  search_records", "ReadTools.search_records (workflow/mcp/tools/reads.py)"),
    ("  get_record_context", "record_context (records/selectors/context.py)"),
    ("  prepare_import", "prepare_import (workflow/actions.py)"),
    ("  commit_import", "commit_import (workflow/actions.py)"),
    ("  batch_read", "batch_read (workflow/batch_read.py)"),
    (
        "transaction commits (the durable write itself)",
        "BaseDatabaseWrapper._commit (django/db/backends/base/base.py)",
    ),
    ("event loops waiting for work", "EpollSelector.select (selectors.py)"),
    ("threads handing work over (Condition.wait)", "Condition.wait (threading.py)"),
)
# Inclusive figures are listed for these only: the project's code and the libraries it drives
# (thread, asgiref and middleware entry frames are in nearly every sample and say nothing).
LISTED = (
    "anchor_site/",
    "workflow/",
    "records/",
    "psycopg/",
    "django/db/",
    "mcp",
    "rest_framework/",
)


def _frame_name(frame: str) -> str:
    """'Class.func (pkg/mod.py:12)' -> 'Class.func (pkg/mod.py)'."""
    name, _, where = frame.partition(" (")
    return f"{name} ({where.rstrip(')').rsplit(':', 1)[0]})"


def summarize(raw: str, top: int = 20, *, whose: str = "the workers'") -> list[str]:
    """Shares of the samples inside each marker, top listed functions by inclusive samples
    (each counted once per stack) and top functions by own samples."""
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    marked: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        frames = [
            _frame_name(f) for f in stack.split(";") if " (" in f and not f.startswith("process ")
        ]
        if not frames:
            continue
        count = int(count_text)
        total += count
        unique = set(frames)
        for frame in unique:
            inclusive[frame] += count
        own[frames[-1]] += count
        for label, marker in MARKERS:
            if marker in unique:
                marked[label] += count
    if not total:
        return ["  py-spy recorded no samples"]
    lines = [
        f"  py-spy: {total:,} samples of {whose} active threads (idle ones left out); share inside:"
    ]
    lines += [
        f"    {100 * marked[label] / total:5.1f}%  {label}" for label, _ in MARKERS if marked[label]
    ]
    lines.append("  top functions by inclusive samples (cumulative), project and its libraries:")
    listed = [(f, n) for f, n in inclusive.most_common() if f.split(" (", 1)[1].startswith(LISTED)]
    lines += [f"    {100 * n / total:5.1f}%  {frame}" for frame, n in listed[:top]]
    lines.append("  top functions by own samples:")
    lines += [f"    {100 * n / total:5.1f}%  {frame}" for frame, n in own.most_common(8)]
    return lines
