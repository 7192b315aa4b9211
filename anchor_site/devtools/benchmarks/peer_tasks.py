"""Everyday agent tasks (peer_tasks.json) on Anchor beside the official memory server, each over
stdio through the official client on a store of its own: per task the calls, the cl100k tokens
a model reads and writes (tool list and instructions once, then arguments plus reply text), and
whether the store, read directly, ends right. The scripted user's answers cost nothing."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anchor_site.devtools.benchmarks.measure import Row
from anchor_site.devtools.benchmarks.process.tool_list import listed, tokens
from anchor_site.devtools.benchmarks.server import client_session
from workflow.mcp.calls import reply_text
from workflow.mcp.client import ClientSession, TextContent

PLAN = json.loads((Path(__file__).with_suffix(".json")).read_text())
MEMORY_SERVER = ["npx", "-y", "@modelcontextprotocol/server-memory"]
RATIO_TARGET = 1.5
FIXED_TARGET = 4_000
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# What its contract makes Anchor carry and a memory of names does not; the target holds the rest:
# - IDs ("UUIDs and UTC timestamps are server-generated"; tools take records, links, reviews and
#   actions by ID): each an argument writes, and each the first time a task's replies show it.
# - The contract ("Tool workflow and contracts"): {"ok": true, "result": ...}, a resolution's
#   status, prepare_write's operation, review_ids, decision_reason and clarification around the
#   arguments, expected_version, and the second round trip, commit_write(action_id) and status.
# - Identity evidence where a name is uncertain ("candidates including archives, reasons, linked
#   summaries"; "ask which Rahul, showing a project/role"): needs_clarification's candidates.
# - History a memory of names does not keep (get_record_context's "recent audit events";
#   "`created_by` and event `actor_id`"): events, a record's times and author.
# Not counted: previews, next steps, an ID repeated, other keys, a committed create's review.
CARRIED_NOTE = "carried (CARRIED in peer_tasks.py): IDs, the contract, identity evidence, history"
CARRIED = {"ok", "status", "operation", "review_ids", "decision_reason", "clarification"}
CARRIED |= {"expected_version", "action_id", "events", "created_at", "updated_at", "created_by"}
# A plain mcp_serve: the default profile, on a SQLite file of the run's own.
ANCHOR_ENV = {"ANCHOR_TOOLS": "", "DATABASE_URL": "", "ANCHOR_ACTOR_ID": "user:agent"}


# --- a side's conversation: steps run, calls counted ---------------------------------------------


def pick(value: Any, path: str) -> Any:
    """`a.b.0` walks keys and list positions; `key[field=value]` picks the list item that has it."""
    for part in path.split("."):
        key, _, where = part.partition("[")
        if key:
            value = value[int(key)] if isinstance(value, list) else value[key]
        if where:
            name, _, wanted = where.rstrip("]").partition("=")
            value = next(item for item in value if str(item[name]) == wanted)
    return value


def fill(value: Any, saved: dict[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("$"):
        return saved[value[1:]]
    if isinstance(value, dict):
        return {key: fill(item, saved) for key, item in value.items()}
    if isinstance(value, list):
        return [fill(item, saved) for item in value]
    return value


@dataclass
class Agent:
    """One side's session. Each call costs its arguments and its reply's text; `spent` holds
    (tool, tokens, of which its contract makes it carry) per call."""

    session: ClientSession
    saved: dict[str, Any] = field(default_factory=dict)  # what the conversation knows
    seen: set[str] = field(default_factory=set)  # the IDs this task has read or written
    spent: list[tuple[str, int, int]] = field(default_factory=list)
    said: list[str] = field(default_factory=list)

    async def run(self, steps: list[dict[str, Any]]) -> None:
        for step in steps:
            if "call" not in step:  # the scripted user's answer
                continue
            arguments = fill(step["args"], self.saved)
            reply = await self.session.call_tool(step["call"], arguments)
            text = "".join(part.text for part in reply.content if isinstance(part, TextContent))
            spent = tokens(reply_text(arguments)) + tokens(text)
            self.said.append(text.lower())
            if not text.startswith('{"ok":'):  # the memory server's: nothing it must carry
                self.spent.append((step["call"], spent, 0))
                continue
            found = json.loads(text)
            answer = found.get("result", found)
            rest = self.uncarried(arguments, in_reply=False), self.uncarried(answer, in_reply=True)
            self.spent.append(
                (step["call"], spent, spent - sum(tokens(reply_text(r)) for r in rest))
            )
            if step.get("save") and found["ok"] is False:
                raise ValueError(f"{step['call']} refused: {found['error']}")
            self.saved |= {name: pick(answer, at) for name, at in step.get("save", {}).items()}

    def uncarried(self, value: Any, *, in_reply: bool, counts_ids: bool = True) -> Any:
        """`value` without what its contract makes Anchor carry (CARRIED)."""
        if isinstance(value, list):
            return [
                self.uncarried(item, in_reply=in_reply, counts_ids=counts_ids) for item in value
            ]
        if isinstance(value, dict):
            uncertain = value.get("status") == "needs_clarification"
            carried = {k for k in value if k in CARRIED or (uncertain and k == "candidates")}
            self.seen.update(UUID.findall(reply_text([value[k] for k in carried])))
            kept = {k: v for k, v in value.items() if k not in carried}
            return {
                k: self.uncarried(v, in_reply=in_reply, counts_ids=counts_ids and k != "review")
                for k, v in kept.items()
            }
        if not (isinstance(value, str) and UUID.fullmatch(value)):
            return value
        known = value in self.seen
        self.seen.add(value)
        return value if not counts_ids or (in_reply and known) else ""

    def next_task(self) -> Agent:
        return Agent(self.session, self.saved)


# --- the stores, read directly: (name, kind, facts) and (from, type, to) -------------------------


@dataclass(frozen=True)
class Store:
    entities: tuple[tuple[str, str], ...]  # (name, its facts as lower-case text)
    links: frozenset[tuple[str, str, str]]

    def facts(self, name: str) -> list[str]:
        return [text for title, text in self.entities if title == name]


def anchor_store(path: Path) -> Store:
    with closing(sqlite3.connect(path)) as db:
        rows = db.execute(
            "SELECT id, title, data FROM records_record WHERE archived_at IS NULL ORDER BY 2, 1"
        ).fetchall()
        links = db.execute(
            "SELECT source_id, relationship_type, target_id FROM records_relationship"
        ).fetchall()
    title = {row[0]: row[1] for row in rows}
    return Store(
        tuple((name, data.lower()) for _id, name, data in rows),
        frozenset((title[s], t, title[d]) for s, t, d in links if s in title and d in title),
    )


def memory_store(path: Path) -> Store:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return Store(
        tuple(
            (e["name"], " | ".join(e["observations"]).lower())
            for e in sorted(lines, key=lambda e: e.get("name", ""))
            if e["type"] == "entity"
        ),
        frozenset(
            (r["from"], r["relationType"], r["to"]) for r in lines if r["type"] == "relation"
        ),
    )


def problem(check: dict[str, Any], before: Store, after: Store, said: str) -> str:
    """What is wrong with the outcome for one check, or ""."""
    if "holds" in check:  # exactly `count` entities of the name, one holding every word
        name, *words = check["holds"]
        found, count = after.facts(name), check.get("count", 1)
        if len(found) == count and (not count or any(all(w in t for w in words) for t in found)):
            return ""
        return f"{name}: {found or 'missing'}"
    if "lacks" in check:
        name, word = check["lacks"]
        return f"{name} still holds {word!r}" if any(word in t for t in after.facts(name)) else ""
    if "linked" in check or "unlinked" in check:
        link = tuple(check.get("linked") or check["unlinked"])
        return "" if (link in after.links) == ("linked" in check) else f"link {link} is wrong"
    missing = [word for word in check["answers"] if word not in said]
    if before != after:
        return "a read changed the store"
    return f"the replies never say {', '.join(missing)}" if missing else ""


def wrong(task: dict[str, Any], before: Store, after: Store, said: str) -> str:
    return "; ".join(p for c in task["check"] if (p := problem(c, before, after, said)))


# --- running both sides ---------------------------------------------------------------------------


@dataclass
class Outcome:
    spent: list[tuple[str, int, int]]
    problem: str  # "" when the store ends right

    @property
    def tokens(self) -> int:
        return sum(n for _tool, n, _carried in self.spent)

    @property
    def rest(self) -> int:  # beyond what its contract makes Anchor carry (CARRIED)
        return sum(n - carried for _tool, n, carried in self.spent)


async def run_tasks(
    agent: Agent, tasks: list[dict[str, Any]], side: str, read: Any
) -> dict[str, Any]:
    """Each task's Outcome, or the sentence saying why this side cannot do it."""
    done: dict[str, Outcome | str] = {}
    for task in tasks:
        if isinstance(task[side], str):
            done[task["name"]] = task[side]
            continue
        turn, before = agent.next_task(), read()
        try:
            await turn.run(task[side])
            found = wrong(task, before, read(), "\n".join(turn.said))
        except (KeyError, IndexError, StopIteration, ValueError, TypeError) as exc:
            found = f"the script stopped: {type(exc).__name__} {exc}"
        done[task["name"]] = Outcome(turn.spent, found)
    return done


async def run_anchor(folder: Path, tasks: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    """(the opening digest's tokens, each task's outcome), after an uncounted set-up and a
    teammate's changes since the agent last looked."""
    db = folder / "anchor.db"
    env = ANCHOR_ENV | {"ANCHOR_DB_PATH": str(db)}
    async with client_session(**env) as session:
        await Agent(session).run(PLAN["setup"]["anchor"])
    async with client_session(**env | {"ANCHOR_ACTOR_ID": "user:meera"}) as session:
        await Agent(session).run(PLAN["setup"]["teammate"])
    async with client_session(**env) as session:
        agent = Agent(session)
        await agent.run(PLAN["opener"]["anchor"])  # the instructions open every conversation so
        return agent.spent[0][1], await run_tasks(agent, tasks, "anchor", lambda: anchor_store(db))


async def run_memory(folder: Path, tasks: list[dict[str, Any]]) -> dict[str, Any]:
    path = folder / "memory.jsonl"
    async with client_session(MEMORY_SERVER, MEMORY_FILE_PATH=str(path)) as session:
        await Agent(session).run(PLAN["setup"]["memory"])
        return await run_tasks(Agent(session), tasks, "memory", lambda: memory_store(path))


def memory_server_missing() -> str:
    """Why the memory server cannot start here, or "": npx, or the network for a first
    download. Given no input, the server starts and exits."""
    if shutil.which("npx") is None:
        return "npx not found"
    try:
        done = subprocess.run(
            MEMORY_SERVER, stdin=subprocess.DEVNULL, capture_output=True, timeout=300, check=False
        )
    except subprocess.TimeoutExpired:
        return "npx did not start the memory server within 5 minutes (offline?)"
    return "" if done.returncode == 0 else f"npx exited {done.returncode} (offline?)"


def run() -> list[Row]:
    missing = memory_server_missing()
    if missing:
        return [Row("agent tasks beside the memory server", None, "", note=f"skipped: {missing}")]
    with tempfile.TemporaryDirectory(prefix="anchor-peer-") as tmp:
        folder = Path(tmp)
        opener, ours = asyncio.run(run_anchor(folder, PLAN["tasks"]))
        theirs = asyncio.run(run_memory(folder, PLAN["tasks"]))
        fixed, _ = listed(None, **ANCHOR_ENV, ANCHOR_DB_PATH=str(folder / "listed.db"))
        peer_fixed, _ = listed(MEMORY_SERVER, MEMORY_FILE_PATH=str(folder / "listed.jsonl"))
    return rows(ours, theirs, opener, fixed, peer_fixed)


def verdict(outcome: Outcome | str) -> str:
    if isinstance(outcome, str):
        return outcome
    return "right" if not outcome.problem else f"WRONG ({outcome.problem})"


def rows(
    ours: dict[str, Any], theirs: dict[str, Any], opener: int, fixed: int, peer_fixed: int
) -> list[Row]:
    found, both = [], []
    for name, mine in ours.items():
        peer = theirs[name]
        done = not isinstance(peer, str)
        if done:
            both.append((mine.tokens, peer.tokens, mine.rest))
        found.append(
            Row(
                f"{name}: Anchor {len(mine.spent)} calls, memory server "
                + (f"{len(peer.spent)} calls" if done else "cannot"),
                mine.tokens,
                "tokens",
                target="right in the store",
                passed=not mine.problem,
                reference=peer.tokens if done else None,
                reference_what=f"memory server {verdict(peer)}; Anchor {verdict(mine)}",
                note="Anchor per call (of which its contract makes it carry): "
                + ", ".join(f"{tool} {n} ({carried})" for tool, n, carried in mine.spent)
                + f"; the rest {mine.rest}"
                + (f", {mine.rest / peer.tokens:.2f}x the memory server" if done else ""),
            )
        )
    median, peer_median, rest = (statistics.median(side) for side in zip(*both, strict=True))
    right = sum(1 for outcome in ours.values() if not outcome.problem)
    peer_right = sum(1 for o in theirs.values() if not isinstance(o, str) and not o.problem)
    return [
        *found,
        *(
            Row(
                what,
                value,
                "tokens",
                target=f"<= {RATIO_TARGET}x the memory server",
                passed=value <= RATIO_TARGET * peer_median,
                reference=peer_median,
                reference_what="the memory server",
                note=note,
            )
            for what, value, note in (
                (f"median tokens per task, the {len(both)} tasks both servers do", median, ""),
                ("  the same less what its contract makes Anchor carry", rest, CARRIED_NOTE),
            )
        ),
        Row(
            f"tasks ending right in Anchor's store, of {len(ours)}",
            right,
            "tasks",
            target="every task",
            passed=right == len(ours),
            note=f"the memory server: {peer_right} right of the {len(both)} it can do",
        ),
        Row(
            "tools/list + instructions, a plain mcp_serve",
            fixed,
            "tokens",
            target=f"<= {FIXED_TARGET:,} tokens",
            passed=fixed <= FIXED_TARGET,
            reference=peer_fixed,
            reference_what="the memory server",
            note=f"then the opening workspace_digest: {opener:,} tokens per conversation",
        ),
    ]
