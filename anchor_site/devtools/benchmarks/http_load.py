"""Team mode under load: the production server on PostgreSQL, N clients over streamable HTTP.

`manage.py benchmark --http` (with DATABASE_URL naming PostgreSQL) creates a scratch database
beside the configured one and re-runs itself as a worker against it. The worker migrates,
seeds a workspace (a collection of a few thousand people and one well-linked record), creates
one user and personal token per client with the operator commands (`anchor_member add
--create-user`, `anchor_token create`), and starts gunicorn exactly as the README does
(anchor_site/http/gunicorn_conf.py, WEB_CONCURRENCY workers).

Each client is an httpx AsyncClient speaking raw JSON-RPC over POST /mcp with its own token
and session (initialize, notifications/initialized, then a loop). One iteration is the guarded
write an agent makes for a new record, resolve_record (a fresh title: no_match) ->
prepare_write create_record citing the resolution -> commit_write, plus two reads,
search_records and get_record_context of the seeded hub, plus a no-op (get_server_instructions)
timed apart as the same-run reference: what the transport, authentication and session alone
cost at that load. Every tools/call is timed; each N runs for a fixed wall time.

The per-token rate limit (ANCHOR_HTTP_RATE_LIMIT, 600 a minute) is turned off for the run:
it would cap every client at 10 calls/s and measure the limiter, not the server.

With profiling on, the highest N runs once more with py-spy (`uv tool run py-spy` when it is
not on PATH) sampling every gunicorn worker; the top functions by inclusive samples are
reported, with PostgreSQL's own per-database counters (sessions opened, active time) read
around the same run.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

from django.conf import settings

from anchor_site.devtools import DEV_SETTINGS_MODULE
from anchor_site.devtools.benchmarks.measure import Row
from anchor_site.devtools.benchmarks.spy import py_spy, summarize

AREA = "http"
CLIENTS = (1, 5, 10, 25)
TARGET_MS = 100.0
PROTOCOL_VERSION = "2025-06-18"
# The calls an iteration makes, in order; NOOP is timed apart as the reference.
WRITE_TOOLS = ("resolve_record", "prepare_write", "commit_write")
READ_TOOLS = ("search_records", "get_record_context")
NOOP = "get_server_instructions"
USER_PREFIX = "bench-http-"


@dataclass(frozen=True)
class Plan:
    """What one run does; the command builds it from its options."""

    clients: tuple[int, ...] = CLIENTS
    seconds: float = 20.0
    records: int = 5_000
    workers: int = 2
    profile: bool = True
    profile_out: str = ""  # where to keep py-spy's raw collapsed stacks, if anywhere

    @classmethod
    def quick(cls) -> Plan:
        return cls(seconds=5.0, records=2_000)


def is_postgres_url(url: str) -> bool:
    import dj_database_url

    try:
        engine = dj_database_url.parse(url)["ENGINE"]
    except Exception:  # an unknown scheme is simply not PostgreSQL
        return False
    return "postgresql" in engine or "postgis" in engine


def load_average() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "n/a"
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


# --- the parent: a scratch database and a worker on it ----------------------------------------


def run(plan: Plan, *, progress: bool) -> dict[str, Any]:
    """Run the worker against a scratch database; its report (rows and notes)."""
    from anchor_site.devtools.benchmarks.scratch import ScratchDatabase

    scratch = ScratchDatabase(os.environ["DATABASE_URL"])
    with tempfile.TemporaryDirectory(prefix="anchor-bench-http-") as tmp:
        results = Path(tmp) / "report.json"
        env = dict(
            os.environ, DATABASE_URL=scratch.create(), DJANGO_SETTINGS_MODULE=DEV_SETTINGS_MODULE
        )
        try:
            done = subprocess.run(
                [
                    sys.executable,
                    str(Path(settings.BASE_DIR) / "manage.py"),
                    "benchmark",
                    "--http-worker",
                    str(results),
                    "--http-plan",
                    json.dumps(asdict(plan)),
                ],
                cwd=settings.BASE_DIR,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=None if progress else subprocess.DEVNULL,
                check=False,
            )
        finally:
            scratch.drop()
        report: dict[str, Any] = (
            json.loads(results.read_text()) if results.exists() else {"rows": [], "lines": []}
        )
    if done.returncode != 0:
        report["rows"].append(
            Row(AREA, "HTTP load worker", None, "", note=f"exit {done.returncode}").as_dict()
        )
    return report


# --- the worker: Django on the scratch database -------------------------------------------------


@dataclass
class Seeded:
    collection_id: str
    hub_id: str
    words: list[str]
    tokens: list[str]


# The guarded-writes rows: http_writes.measure, passed in because that module builds on this one.
Writes = Callable[[str, "Seeded", int, float], list[Row]]


def work(plan: Plan, results: Path, say: Callable[[str], None], writes: Writes) -> None:
    rows: list[Row] = []
    lines: list[str] = []

    def save() -> None:
        results.write_text(json.dumps({"rows": [r.as_dict() for r in rows], "lines": lines}))

    save()
    try:
        seeded = seed(plan, say)
        with (
            tempfile.TemporaryDirectory(prefix="anchor-bench-gunicorn-") as tmp,
            serve(Path(tmp), plan.workers, say) as server,
        ):
            measure(server, seeded, plan, rows, lines, save, say, writes)
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        rows.append(Row(AREA, "HTTP load", None, "", note=f"error: {type(exc).__name__}: {exc}"))
        save()


def measure(
    server: Server,
    seeded: Seeded,
    plan: Plan,
    rows: list[Row],
    lines: list[str],
    save: Callable[[], None],
    say: Callable[[str], None],
    writes: Writes,
) -> None:
    lines.append(
        f"server: gunicorn -c anchor_site/http/gunicorn_conf.py, WEB_CONCURRENCY="
        f"{plan.workers}, ANCHOR_HTTP_RATE_LIMIT=off; {plan.records:,} seeded "
        f"records; {plan.seconds:g} s per N; {os.cpu_count()} CPUs"
    )
    say("[http] warming up ...")
    warm = min(plan.workers * 2, len(seeded.tokens))
    asyncio.run(drive(server.url, seeded, warm, min(3.0, plan.seconds)))
    crossing = None
    last: Load | None = None
    for count in plan.clients:
        say(f"[http] {count} clients for {plan.seconds:g} s ...")
        load = asyncio.run(drive(server.url, seeded, count, plan.seconds))
        row = load_row(load)
        rows.append(row)
        say(f"[http]   {row.what}: p50 {row.value} p95 {row.p95}; {row.note}")
        if crossing is None and row.p95 is not None and row.p95 >= TARGET_MS:
            crossing = count
        last = load
        save()
    if last is not None:
        rows.extend(tool_rows(last))
    save()
    say(f"[http] guarded writes only, {max(plan.clients)} clients, {plan.seconds:g} s ...")
    rows.extend(writes(server.url, seeded, max(plan.clients), plan.seconds))
    lines.append(
        f"p95 first passes {TARGET_MS:g} ms at N={crossing}"
        if crossing is not None
        else f"p95 stayed under {TARGET_MS:g} ms up to N={max(plan.clients)}"
    )
    save()
    if plan.profile:
        lines.extend(profile(server, seeded, max(plan.clients), plan.seconds, plan, say))
    server.check_log(lines)
    save()


def seed(plan: Plan, say: Callable[[str], None]) -> Seeded:
    from django.core.management import call_command
    from django.db import connection

    from anchor_site.devtools.benchmarks import data

    say("[http] migrating and seeding ...")
    call_command("migrate", interactive=False, verbosity=0, stdout=sys.stderr)
    ctx = data.context()
    people = data.collection(ctx, "bench people")
    names = data.person_names(plan.records)
    data.bulk_insert(people.pk, data.people(names))
    hub = data.linked_record(ctx)
    say(f"[http] {max(plan.clients)} users and tokens ...")
    tokens = []
    for index in range(max(plan.clients)):
        username = f"{USER_PREFIX}{index:02d}"
        call_command(
            "anchor_member", "add", username, data.WORKSPACE, "--create-user", stdout=StringIO()
        )
        out = StringIO()
        quiet = StringIO()  # "Created token ..." goes to stderr
        call_command("anchor_token", "create", username, "--name", "x", stdout=out, stderr=quiet)
        tokens.append(out.getvalue().strip())
    connection.close()
    # Search words: the seeded last names' first syllables, so every search finds something.
    words = sorted({name.split()[-1][:3].lower() for name in names[:200]})
    return Seeded(people.pk, hub.record_id, words, tokens)


# --- the server ---------------------------------------------------------------------------------


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def check_log(self, lines: list[str]) -> None:
        text = self.log.read_text(errors="replace")
        tracebacks = text.count("Traceback")
        if not tracebacks:
            return
        # The exception line that closes each traceback: "psycopg.OperationalError: ...".
        raised: Counter[str] = Counter(
            line.strip()[:200]
            for line in text.splitlines()
            if re.match(r"^[\w.]+(Error|Exception|Cancelled|Timeout)\b", line)
        )
        lines.append(f"server log: {tracebacks} tracebacks")
        lines += [f"  {n} x {what}" for what, n in raised.most_common(5)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def serve(tmp: Path, workers: int, say: Callable[[str], None]) -> Iterator[Server]:
    """gunicorn as the README runs it, on the scratch database; stopped on the way out."""
    import httpx

    port = free_port()
    env = {
        name: os.environ[name]
        for name in ("PATH", "HOME", "DATABASE_URL", "LANG")
        if name in os.environ
    }
    env.update(
        DJANGO_SETTINGS_MODULE="anchor_site.settings",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        ANCHOR_HTTP_BIND=f"127.0.0.1:{port}",
        WEB_CONCURRENCY=str(workers),
        ANCHOR_STATIC_ROOT=str(tmp / "static"),
        ANCHOR_HTTP_RATE_LIMIT="off",
        ANCHOR_LOG_LEVEL="WARNING",
        # The no-op reference (get_server_instructions) is outside the default core profile.
        ANCHOR_TOOLS="full",
    )
    log = tmp / "server.log"
    say(f"[http] starting gunicorn, WEB_CONCURRENCY={workers} ...")
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "anchor_site/http/gunicorn_conf.py"],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=sink,
            stderr=sink,
            start_new_session=True,  # its own process group, so nothing outlives the run
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {process.returncode}:\n{log.read_text()}")
            try:
                if httpx.get(f"{url}/mcp", timeout=2).status_code == 405:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"gunicorn did not start within 120 s:\n{log.read_text()}")
            time.sleep(0.3)
        yield Server(url, process, log)
    finally:
        _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=30)
    with suppress(ProcessLookupError, PermissionError):  # workers the master left behind
        os.killpg(process.pid, signal.SIGKILL)
    if process.poll() is None:
        process.wait()


# --- the clients --------------------------------------------------------------------------------


@dataclass
class Load:
    clients: int
    seconds: float  # wall time from the first call to the last reply
    samples: dict[str, list[float]] = field(default_factory=dict)  # tool -> seconds
    errors: Counter[str] = field(default_factory=Counter)
    load_average: str = ""
    committed_titles: list[str] = field(default_factory=list)

    def timed(self) -> list[float]:
        return [s for tool, found in self.samples.items() if tool != NOOP for s in found]


class CallFailed(Exception):
    pass


class Client:
    """One agent: its own token, HTTP connection and MCP session."""

    def __init__(self, http: Any, url: str, token: str) -> None:
        self.http = http
        self.url = f"{url}/mcp"
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        self.next_id = 1

    async def post(self, message: dict[str, Any]) -> Any:
        response = await self.http.post(self.url, content=json.dumps(message), headers=self.headers)
        if response.status_code == 202 and "id" not in message:
            return None
        if response.status_code != 200:
            raise CallFailed(f"HTTP {response.status_code}")
        reply = response.json()
        if "error" in reply:
            raise CallFailed(f"JSON-RPC {reply['error'].get('code')}")
        if "Mcp-Session-Id" in response.headers:
            self.headers["Mcp-Session-Id"] = response.headers["Mcp-Session-Id"]
        return reply.get("result")

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        request_id = self.next_id
        self.next_id += 1
        return await self.post(
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        )

    async def open(self) -> None:
        await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "anchor-http-benchmark", "version": "1"},
            },
        )
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def close(self) -> None:
        if "Mcp-Session-Id" in self.headers:
            await self.http.delete(self.url, headers=self.headers)

    async def call(self, load: Load, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool's result; timed into load. A refusal counts as an error and raises."""
        started = time.perf_counter()
        try:
            result = await self.request("tools/call", {"name": name, "arguments": arguments})
        except CallFailed as exc:
            load.errors[f"{name}: {exc}"] += 1
            raise
        except Exception as exc:  # transport failures: timeouts, resets
            load.errors[f"{name}: {type(exc).__name__}"] += 1
            raise CallFailed(str(exc)) from exc
        load.samples.setdefault(name, []).append(time.perf_counter() - started)
        envelope = result.get("structuredContent") or json.loads(result["content"][0]["text"])
        if not envelope.get("ok"):
            code = (envelope.get("error") or {}).get("code", "?")
            load.errors[f"{name}: {code}"] += 1
            raise CallFailed(code)
        found: dict[str, Any] = envelope["result"]
        return found


def new_title() -> str:
    return f"{uuid.uuid4().hex[:10]} {uuid.uuid4().hex[:10]}"  # unlike every stored name


async def guarded_create(
    client: Client, load: Load, seeded: Seeded, tag: str, title: str | None = None
) -> bool:
    """The guarded write of a new record (resolve, prepare, commit); False when the review
    did not find the name new (nothing was prepared). A commit is kept in
    load.committed_titles so the run can check afterwards that it was stored."""
    title = title or new_title()
    review = await client.call(
        load, "resolve_record", {"query": title, "collection_id": seeded.collection_id}
    )
    if review.get("status") != "no_match":
        load.errors[f"resolve_record: status {review.get('status')}"] += 1
        return False
    prepared = await client.call(
        load,
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {
                "collection_id": seeded.collection_id,
                "title": title,
                "data": {"status": "open", "source": tag},
            },
            "review_ids": [review["resolution_id"]],
            "decision_reason": "benchmark: a new person",
        },
    )
    committed = await client.call(load, "commit_write", {"action_id": prepared["action_id"]})
    if committed.get("status") != "committed":
        load.errors[f"commit_write: status {committed.get('status')}"] += 1
    else:
        load.committed_titles.append(title)
    return True


async def iteration(client: Client, load: Load, seeded: Seeded, tag: str, index: int) -> None:
    if not await guarded_create(client, load, seeded, tag):
        return
    word = seeded.words[index % len(seeded.words)]
    await client.call(
        load,
        "search_records",
        {"collection_id": seeded.collection_id, "query": word, "limit": 10},
    )
    await client.call(
        load,
        "get_record_context",
        {"record_id": seeded.hub_id, "relationship_limit": 20, "event_limit": 10},
    )
    await client.call(load, NOOP, {})


Step = Callable[[Client, Load, Seeded, str, int], Awaitable[None]]


async def drive(
    url: str,
    seeded: Seeded,
    count: int,
    seconds: float,
    step: Step = iteration,
    beside: Callable[[], Awaitable[Any]] | None = None,
) -> Load:
    """`count` clients looping `step` for `seconds` of wall time, each on its own token and
    session; `beside`, when given, runs alongside them (started once they all are)."""
    import httpx

    load = Load(count, 0.0)
    timeout = httpx.Timeout(60.0)
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    https = [httpx.AsyncClient(timeout=timeout, limits=limits) for _ in range(count)]
    clients = [Client(http, url, seeded.tokens[i]) for i, http in enumerate(https)]
    try:
        await asyncio.gather(*(client.open() for client in clients))
        started = time.perf_counter()
        deadline = started + seconds

        async def loop(number: int, client: Client) -> None:
            index = 0
            while time.perf_counter() < deadline:
                with suppress(CallFailed):  # counted; go on with the next iteration
                    await step(client, load, seeded, f"c{number}", number * 100_000 + index)
                index += 1

        extra = [beside()] if beside is not None else []
        await asyncio.gather(*(loop(i, c) for i, c in enumerate(clients)), *extra)
        load.seconds = time.perf_counter() - started
        load.load_average = load_average()
        await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)
    finally:
        await asyncio.gather(*(http.aclose() for http in https), return_exceptions=True)
    return load


# --- rows ---------------------------------------------------------------------------------------


def median_ms(values: list[float]) -> float | None:
    return statistics.median(values) * 1000 if values else None


def p95_ms(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000


def errors_text(load: Load) -> str:
    total = sum(load.errors.values())
    if not total:
        return "0 errors"
    shown = ", ".join(f"{what} x{n}" for what, n in load.errors.most_common(4))
    return f"{total} ERRORS ({shown})"


def load_row(load: Load) -> Row:
    timed = load.timed()
    p95 = p95_ms(timed)
    noop = load.samples.get(NOOP, [])
    rate = len(timed) / load.seconds if load.seconds else 0.0
    writes = len(load.samples.get("commit_write", [])) / load.seconds if load.seconds else 0.0
    return Row(
        AREA,
        f"HTTP load, {load.clients} client{'s' if load.clients > 1 else ''}: tools/call "
        "(resolve, prepare, commit, search, context)",
        median_ms(timed),
        "ms",
        p95=p95,
        target=f"p95 < {TARGET_MS:g} ms",
        passed=None if p95 is None else p95 < TARGET_MS and not load.errors,
        reference=median_ms(noop),
        reference_what=f"{NOOP} (no-op) in the same loop",
        note=(
            f"{rate:,.0f} calls/s ({writes:,.1f} guarded writes/s), {len(timed):,} calls in "
            f"{load.seconds:.1f} s, {errors_text(load)}; load average {load.load_average}"
        ),
    )


def tool_rows(load: Load) -> list[Row]:
    rows = []
    for tool in (*WRITE_TOOLS, *READ_TOOLS):
        found = load.samples.get(tool, [])
        rows.append(
            Row(
                AREA,
                f"  {tool} at {load.clients} clients",
                median_ms(found),
                "ms",
                p95=p95_ms(found),
                note=f"{len(found):,} calls",
            )
        )
    return rows


# --- the profile ------------------------------------------------------------------------------


def _pg_counters() -> tuple[int, float, int]:
    """(sessions opened, active milliseconds, transactions committed) of this database."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute(
            "SELECT sessions, active_time, xact_commit FROM pg_stat_database "
            "WHERE datname = current_database()"
        )
        sessions, active, commits = cursor.fetchone()
    connection.close()
    return int(sessions), float(active), int(commits)


def profile(
    server: Server,
    seeded: Seeded,
    count: int,
    seconds: float,
    plan: Plan,
    say: Callable[[str], None],
) -> list[str]:
    spy = py_spy()
    if spy is None:
        return ["profile: py-spy is not available (not on PATH, and `uv tool run` failed)"]
    out = server.log.parent / "profile.txt"
    say(f"[http] profiling {count} clients for {seconds:g} s with py-spy ...")
    before = _pg_counters()
    recorder = subprocess.Popen(
        [
            *spy,
            "record",
            "--pid",
            str(server.process.pid),
            "--subprocesses",
            "--nonblocking",
            "--rate",
            "100",
            "--format",
            "raw",
            "--output",
            str(out),
            "--duration",
            str(int(seconds) + 2),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    time.sleep(1.5)  # py-spy attaches to every worker first
    load = asyncio.run(drive(server.url, seeded, count, seconds))
    try:
        _, spy_err = recorder.communicate(timeout=seconds + 30)
    except subprocess.TimeoutExpired:
        recorder.kill()
        _, spy_err = recorder.communicate()
    after = _pg_counters()
    calls = len(load.timed()) + len(load.samples.get(NOOP, []))
    lines = [
        f"profile: {count} clients, {seconds:g} s under py-spy: "
        f"{calls / load.seconds:,.0f} calls/s (all tools, no-op included), {errors_text(load)}"
    ]
    sessions, active, commits = (a - b for a, b in zip(after, before, strict=True))
    if calls:
        lines.append(
            f"  PostgreSQL: {sessions:,} connections opened for {calls:,} calls "
            f"({sessions / calls:.2f} per call), {active / calls:.2f} ms active time per call, "
            f"{commits / calls:.1f} transactions per call"
        )
    if not out.exists():
        lines.append(f"  py-spy wrote no profile: {spy_err.decode(errors='replace')[-300:]}")
        return lines
    if plan.profile_out:
        shutil.copyfile(out, plan.profile_out)
        lines.append(f"  raw collapsed stacks: {plan.profile_out}")
    lines.extend(summarize(out.read_text()))
    return lines
