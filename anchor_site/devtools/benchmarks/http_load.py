"""Team mode under load: gunicorn (as the README runs it) on a scratch PostgreSQL database, N
clients over streamable HTTP, each with its own token and session. An iteration is a guarded
create, a search, a context read, and a no-op timed apart as the reference (transport,
authentication and session alone). Then at the highest N, guarded writes only into one
collection, checked afterwards: no commit lost, no false STALE_REVIEW, and of two clients
committing one new title at once, exactly one stored. The per-token rate limit is off (it would
measure the limiter). With profiling on, the highest N runs again under py-spy.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection

from anchor_site.devtools.benchmarks import data, profile
from anchor_site.devtools.benchmarks.measure import Row, median_ms, p95_ms
from anchor_site.devtools.benchmarks.server import INITIALIZE, NOOP, create_action, envelope_of
from records import services
from records.models import Record

CLIENTS = (1, 5, 10, 25)
TARGET_MS = 100.0
WRITES_TARGET = 30.0  # guarded writes/s into one collection (25 clients, PostgreSQL)
DUPLICATE_PAIRS = 3
TOOLS = ("resolve_record", "prepare_write", "commit_write", "search_records", "get_record_context")


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


def load_average() -> str:
    try:
        return " ".join(f"{n:.2f}" for n in os.getloadavg())
    except OSError:
        return "n/a"


@dataclass
class Seeded:
    collection_id: str
    hub_id: str
    words: list[str]
    tokens: list[str]


def work(
    plan: Plan, say: Callable[[str], None], save: Callable[[list[Row], list[str]], None]
) -> None:
    rows: list[Row] = []
    most = max(plan.clients)
    lines = [
        f"server: gunicorn -c anchor_site/http/gunicorn_conf.py, WEB_CONCURRENCY={plan.workers}, "
        f"ANCHOR_HTTP_RATE_LIMIT=off; {plan.records:,} seeded records; {plan.seconds:g} s per N; "
        f"{os.cpu_count()} CPUs"
    ]
    try:
        seeded = seed(plan, say)
        with (
            tempfile.TemporaryDirectory(prefix="anchor-bench-gunicorn-") as tmp,
            serve(Path(tmp), plan.workers, say) as (url, process, log),
        ):

            def run(count: int, step: Step = iteration, beside: Any = None) -> Load:
                return asyncio.run(drive(url, seeded, count, plan.seconds, step, beside))

            say("[http] warming up ...")
            asyncio.run(drive(url, seeded, min(plan.workers * 2, most), min(3.0, plan.seconds)))
            crossing = None
            for count in plan.clients:
                say(f"[http] {count} clients for {plan.seconds:g} s ...")
                rows.append(load_row(load := run(count)))
                if crossing is None and (rows[-1].p95 or 0) >= TARGET_MS:
                    crossing = count
                save(rows, lines)
            rows += [tool_row(f"  {tool} at {load.clients} clients", load, tool) for tool in TOOLS]
            say(f"[http] guarded writes only, {most} clients, {plan.seconds:g} s ...")
            rows += writes_rows(url, seeded, most, run)
            lines.append(
                f"p95 first passes {TARGET_MS:g} ms at N={crossing}"
                if crossing is not None
                else f"p95 stayed under {TARGET_MS:g} ms up to N={most}"
            )
            save(rows, lines)
            if plan.profile:
                say(f"[http] profiling {most} clients for {plan.seconds:g} s with py-spy ...")
                lines += profiled(process.pid, plan, lambda: run(most))
            check_log(log, lines)
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        rows.append(Row("HTTP load", None, "", note=f"error: {type(exc).__name__}: {exc}"))
    save(rows, lines)


def seed(plan: Plan, say: Callable[[str], None]) -> Seeded:
    say("[http] migrating and seeding ...")
    call_command("migrate", interactive=False, verbosity=0, stdout=sys.stderr)
    ctx = data.context()
    people = data.collection(ctx, "bench people")
    names = data.person_names(plan.records)
    data.bulk_insert(people.pk, data.people(names))
    hub = data.linked_record(ctx)
    tokens = []
    for index in range(max(plan.clients)):
        user = get_user_model().objects.create_user(f"bench-http-{index:02d}")
        services.workspace_membership_add(user=user, workspace_id=data.WORKSPACE)
        tokens.append(services.access_token_create(user=user, name="x")[1])
    connection.close()
    # Search words: the seeded last names' first syllables, so every search finds something.
    words = sorted({name.split()[-1][:3].lower() for name in names[:200]})
    return Seeded(people.pk, hub.record_id, words, tokens)


@contextmanager
def serve(tmp: Path, workers: int, say: Callable[[str], None]) -> Iterator[tuple[str, Any, Path]]:
    """gunicorn as the README runs it, on the scratch database; stopped on the way out."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: os.environ[k] for k in ("PATH", "HOME", "DATABASE_URL", "LANG") if k in os.environ}
    env.update(
        DJANGO_SETTINGS_MODULE="anchor_site.settings",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        ANCHOR_HTTP_BIND=f"127.0.0.1:{port}",
        WEB_CONCURRENCY=str(workers),
        ANCHOR_STATIC_ROOT=str(tmp / "static"),
        ANCHOR_HTTP_RATE_LIMIT="off",
        ANCHOR_LOG_LEVEL="WARNING",
        ANCHOR_TOOLS="full",  # the no-op reference is outside the default core profile
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
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"gunicorn did not start ({process.poll()}):\n{log.read_text()}")
            with suppress(httpx.TransportError):
                if httpx.get(f"{url}/mcp", timeout=2).status_code == 405:
                    break
            time.sleep(0.3)
        yield url, process, log
    finally:
        if process.poll() is None:
            process.terminate()
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=30)
        with suppress(ProcessLookupError, PermissionError):  # workers the master left behind
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def check_log(log: Path, lines: list[str]) -> None:
    text = log.read_text(errors="replace")
    if tracebacks := text.count("Traceback"):
        # The exception line that closes each traceback: "psycopg.OperationalError: ...".
        raised = Counter(
            line.strip()[:200]
            for line in text.splitlines()
            if re.match(r"^[\w.]+(Error|Exception|Cancelled|Timeout)\b", line)
        )
        lines.append(f"server log: {tracebacks} tracebacks")
        lines += [f"  {n} x {what}" for what, n in raised.most_common(5)]


# --- the clients ---------------------------------------------------------------------------------


@dataclass
class Load:
    clients: int
    seconds: float = 0.0  # wall time from the first call to the last reply
    samples: defaultdict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter[str] = field(default_factory=Counter)
    load_average: str = ""
    committed_titles: list[str] = field(default_factory=list)

    def timed(self) -> list[float]:
        return [s for tool, found in self.samples.items() if tool != NOOP for s in found]

    def errors_text(self) -> str:
        shown = ", ".join(f"{what} x{n}" for what, n in self.errors.most_common(4))
        return f"{total} ERRORS ({shown})" if (total := self.errors.total()) else "0 errors"


class CallFailed(Exception):
    """A call that failed or was refused, counted in its Load."""


class Client:
    """One agent: its own token, HTTP connection and MCP session. JSON-RPC by hand, not the
    SDK's client: an HTTP failure ends the SDK's session, and here it is counted and the loop
    goes on."""

    def __init__(self, url: str, token: str) -> None:
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        self.http = httpx.AsyncClient(timeout=httpx.Timeout(60.0), limits=limits)
        self.url, self.next_id = f"{url}/mcp", 1
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
        }

    async def post(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """A request's result; without params, a notification."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            self.next_id += 1
            message |= {"id": self.next_id, "params": params}
        response = await self.http.post(self.url, json=message, headers=self.headers)
        if response.status_code == 202 and params is None:
            return None
        if response.status_code != 200:
            raise CallFailed(f"HTTP {response.status_code}")
        reply = response.json()
        if "error" in reply:
            raise CallFailed(f"JSON-RPC {reply['error'].get('code')}")
        if "Mcp-Session-Id" in response.headers:
            self.headers["Mcp-Session-Id"] = response.headers["Mcp-Session-Id"]
        return reply.get("result")

    async def open(self) -> None:
        await self.post("initialize", INITIALIZE)
        await self.post("notifications/initialized")

    async def close(self) -> None:
        try:
            if "Mcp-Session-Id" in self.headers:
                await self.http.delete(self.url, headers=self.headers)
        finally:
            await self.http.aclose()

    async def call(self, load: Load, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool's result, timed into load; a failure or refusal is counted and raises."""
        started = time.perf_counter()
        try:
            reply = await self.post("tools/call", {"name": name, "arguments": arguments})
        except CallFailed as exc:
            load.errors[f"{name}: {exc}"] += 1
            raise
        except Exception as exc:  # transport failures: timeouts, resets
            load.errors[f"{name}: {type(exc).__name__}"] += 1
            raise CallFailed(str(exc)) from exc
        load.samples[name].append(time.perf_counter() - started)
        envelope = envelope_of(reply)
        if not envelope.get("ok"):
            load.errors[f"{name}: {(code := (envelope.get('error') or {}).get('code', '?'))}"] += 1
            raise CallFailed(code)
        found: dict[str, Any] = envelope["result"]
        return found


def new_title() -> str:
    return f"{uuid.uuid4().hex[:10]} {uuid.uuid4().hex[:10]}"  # unlike every stored name


async def prepare_create(client: Client, load: Load, seeded: Seeded, title: str, tag: str) -> str:
    """prepare_write of a new record, citing a review that found its title new: the action's ID.
    A review that did not is counted and raises."""
    review = await client.call(
        load, "resolve_record", {"query": title, "collection_id": seeded.collection_id}
    )
    if review.get("status") != "no_match":
        load.errors[f"resolve_record: status {review.get('status')}"] += 1
        raise CallFailed(review.get("status"))
    action = create_action(seeded.collection_id, title, review["resolution_id"], source=tag)
    return str((await client.call(load, "prepare_write", action))["action_id"])


async def commit_status(client: Client, load: Load, action_id: str) -> str:
    """commit_write's status, or the code it was refused with."""
    try:
        return str((await client.call(load, "commit_write", {"action_id": action_id}))["status"])
    except CallFailed as exc:
        return str(exc)


async def write_step(client: Client, load: Load, seeded: Seeded, tag: str, index: int) -> None:
    """A guarded create; a commit is kept in load.committed_titles, to check it was stored."""
    title = new_title()
    action_id = await prepare_create(client, load, seeded, title, tag)
    committed = await client.call(load, "commit_write", {"action_id": action_id})
    if committed.get("status") == "committed":
        load.committed_titles.append(title)
    else:
        load.errors[f"commit_write: status {committed.get('status')}"] += 1


async def iteration(client: Client, load: Load, seeded: Seeded, tag: str, index: int) -> None:
    await write_step(client, load, seeded, tag, index)
    word = seeded.words[index % len(seeded.words)]
    await client.call(
        load, "search_records", {"collection_id": seeded.collection_id, "query": word, "limit": 10}
    )
    await client.call(
        load,
        "get_record_context",
        {"record_id": seeded.hub_id, "relationship_limit": 20, "event_limit": 10},
    )
    await client.call(load, NOOP, {})


async def noop_step(client: Client, load: Load, seeded: Seeded, tag: str, index: int) -> None:
    for _ in range(3):
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
    load = Load(count)
    clients = [Client(url, seeded.tokens[i]) for i in range(count)]
    try:
        await asyncio.gather(*(client.open() for client in clients))
        started = time.perf_counter()

        async def loop(number: int, client: Client) -> None:
            index = 0
            while time.perf_counter() < started + seconds:
                with suppress(CallFailed):  # counted; go on with the next iteration
                    await step(client, load, seeded, f"c{number}", number * 100_000 + index)
                index += 1

        await asyncio.gather(
            *(loop(i, c) for i, c in enumerate(clients)), *([beside()] if beside else [])
        )
        load.seconds = time.perf_counter() - started
        load.load_average = load_average()
    finally:
        await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)
    return load


async def duplicate_pairs(url: str, seeded: Seeded, outcomes: list[tuple[str, list[str]]]) -> None:
    """Pairs of clients that both find one new title new, then commit it at the same moment."""
    pair = [Client(url, seeded.tokens[i % len(seeded.tokens)]) for i in range(2)]
    own = Load(2)  # the pairs' calls are not the load's
    try:
        await asyncio.gather(*(client.open() for client in pair))
        for _ in range(DUPLICATE_PAIRS):
            await asyncio.sleep(0.5)  # into the load, not before it
            title = new_title()
            try:
                actions = await asyncio.gather(
                    *(prepare_create(c, own, seeded, title, "pair") for c in pair)
                )
            except CallFailed:
                outcomes.append((title, ["not prepared"]))
                continue
            commits = [commit_status(c, own, a) for c, a in zip(pair, actions, strict=True)]
            outcomes.append((title, sorted(await asyncio.gather(*commits))))
    finally:
        await asyncio.gather(*(client.close() for client in pair), return_exceptions=True)


# --- the rows ------------------------------------------------------------------------------------


def load_row(load: Load) -> Row:
    timed, p95 = load.timed(), p95_ms(load.timed())
    rate, writes = len(timed) / load.seconds, len(load.samples["commit_write"]) / load.seconds
    return Row(
        f"HTTP load, {load.clients} client{'s' if load.clients > 1 else ''}: tools/call "
        "(resolve, prepare, commit, search, context)",
        median_ms(timed),
        "ms",
        p95=p95,
        target=f"p95 < {TARGET_MS:g} ms",
        passed=None if p95 is None else p95 < TARGET_MS and not load.errors,
        reference=median_ms(load.samples[NOOP]),
        reference_what=f"{NOOP} (no-op) in the same loop",
        note=f"{rate:,.0f} calls/s ({writes:,.1f} guarded writes/s), {len(timed):,} calls in "
        f"{load.seconds:.1f} s, {load.errors_text()}; load average {load.load_average}",
    )


def tool_row(what: str, load: Load, tool: str) -> Row:
    found = load.samples[tool]
    return Row(what, median_ms(found), "ms", p95=p95_ms(found), note=f"{len(found):,} calls")


def writes_rows(url: str, seeded: Seeded, clients: int, run: Callable[..., Load]) -> list[Row]:
    """Guarded writes only, at `clients` clients, against three no-ops an iteration; then what
    the database holds of every title written."""
    noop = run(clients, noop_step)
    pairs: list[tuple[str, list[str]]] = []
    load = run(clients, write_step, lambda: duplicate_pairs(url, seeded, pairs))
    titles = [title for title, _ in pairs] + load.committed_titles
    written = Record.objects.filter(collection_id=seeded.collection_id, title__in=titles)
    stored = Counter(written.values_list("title", flat=True))
    connection.close()
    lost = sum(stored[title] != 1 for title in load.committed_titles)
    refused = sum(s == ["STALE_REVIEW", "committed"] and stored[t] == 1 for t, s in pairs)
    false_stale = sum(n for what, n in load.errors.items() if what.endswith("STALE_REVIEW"))
    writes = len(load.committed_titles) / load.seconds
    shown = "; ".join(f"{title[:6]}…: {', '.join(s)}" for title, s in pairs)
    clean = lost == 0 and not load.errors and refused == len(pairs) == DUPLICATE_PAIRS
    return [
        Row(
            f"guarded writes into one collection, {clients} clients (resolve, prepare, commit)",
            writes,
            "/s",
            target=f">= {WRITES_TARGET:g} /s, 0 lost, 0 false stale, duplicates refused",
            passed=writes >= WRITES_TARGET and clean,
            reference=len(noop.samples[NOOP]) / 3 / noop.seconds,
            reference_what="three no-op calls an iteration, same clients, same run",
            note=f"{len(load.committed_titles):,} commits in {load.seconds:.1f} s; lost writes "
            f"{lost}; false stale refusals {false_stale}; true duplicates refused {refused} of "
            f"{len(pairs)} concurrent pairs ({shown}); {load.errors_text()}; load average "
            f"{load.load_average}",
        ),
        tool_row(f"  commit_write, writes only, {clients} clients", load, "commit_write"),
    ]


def _pg_counters() -> tuple[int, float, int]:
    """(sessions opened, active milliseconds, transactions committed) of this database."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute(
            "SELECT sessions, active_time, xact_commit FROM pg_stat_database "
            "WHERE datname = current_database()"
        )
        sessions, active, commits = cursor.fetchone()
    connection.close()
    return int(sessions), float(active), int(commits)


def profiled(pid: int, plan: Plan, run: Callable[[], Load]) -> list[str]:
    """The highest N again under py-spy, PostgreSQL's own counters read around it."""
    if profile.py_spy() is None:
        return ["profile: py-spy is not available (not on PATH, and `uv tool run` failed)"]
    before = _pg_counters()
    with profile.spied(pid, subprocesses=True, keep=plan.profile_out) as spied:
        load = run()
    sessions, active, commits = (a - b for a, b in zip(_pg_counters(), before, strict=True))
    calls = len(load.timed()) + len(load.samples[NOOP])
    lines = [
        f"profile: {load.clients} clients, {plan.seconds:g} s under py-spy: "
        f"{calls / load.seconds:,.0f} calls/s (all tools, no-op included), {load.errors_text()}"
    ]
    if calls:
        lines.append(
            f"  PostgreSQL: {sessions:,} connections opened for {calls:,} calls "
            f"({sessions / calls:.2f} per call), {active / calls:.2f} ms active time per call, "
            f"{commits / calls:.1f} transactions per call"
        )
    return lines + spied
