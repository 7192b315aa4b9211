"""The scripted walkthrough: a scripted agent with prescribed user answers drives real
`mcp_serve` processes over stdio, through the official MCP client, on a temporary SQLite file
holding the hiring demo. A step the server does not answer as scripted raises WalkthroughFailed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, TextIO

import anyio

from workflow.mcp.client import open_stdio_session, tool_envelope

# What the scripted user says and the scripted agent writes (tests change them to make a step
# fail).
REQUEST = "Feedback for Kriat's backend coding interview"
TYPO = "Kriat"
USER_ANSWER = "yes, Kirat"
INTENDED_NAME = "Kirat"
FEEDBACK_PURPOSE = "Interview feedback: an interviewer's assessment of a coding interview."
NEW_TITLE = "Follow-up assessment of Kirat's backend coding interview"
NEW_DATA = {"recommendation": "hire", "summary": "Extended the solution with tests."}
LINK_TYPE = "for_interview"
WORKSPACE_ID = "local"  # the hiring demo fixture's workspace
TIMEOUT_SECONDS = 120  # a normal run takes 10-20 s; this only stops a hung server

# Kinds of output line; the command decides how each looks and at which verbosity it shows.
HEADING, CALL, ANSWER, NOTE = "heading", "call", "answer", "note"
PASSED, DETAIL = "passed", "detail"
Say = Callable[[str, str], None]


class WalkthroughFailed(Exception):
    """A step did not behave as scripted."""

    def __init__(self, step: str, message: str) -> None:
        super().__init__(f"{step}: {message}")
        self.step, self.message = step, message


@dataclass
class Walkthrough:
    """One run: the temporary database, the servers it starts, and what the steps found."""

    base_dir: Path
    db_path: Path
    say: Say
    server_log: TextIO
    step: str = "set-up"
    calls: int = 0
    servers: int = 0
    elapsed: float = 0.0
    ids: dict[str, Any] = field(default_factory=dict)
    session: Any = None  # the client session of the server running now

    def env(self) -> dict[str, str]:
        # Every variable passed on purpose, DATABASE_URL never: only the temporary file opens.
        return {
            "PATH": os.environ.get("PATH", os.defpath),
            "DJANGO_SETTINGS_MODULE": "anchor_site.settings",
            "ANCHOR_DB_PATH": str(self.db_path),
            "ANCHOR_WORKSPACE_ID": WORKSPACE_ID,
            "ANCHOR_ACTOR_ID": "walkthrough-agent",
            "ANCHOR_LOG_LEVEL": "WARNING",
        }

    def manage(self, *arguments: str) -> None:
        done = subprocess.run(
            [sys.executable, str(self.base_dir / "manage.py"), *arguments, "--verbosity", "0"],
            cwd=self.base_dir,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        self.expect(
            done.returncode == 0, f"`manage.py {arguments[0]}` failed: {done.stderr[-2000:]}"
        )

    @asynccontextmanager
    async def server(self) -> AsyncIterator[None]:
        self.servers += 1
        begun = time.monotonic()
        async with open_stdio_session(
            [sys.executable, str(self.base_dir / "manage.py"), "mcp_serve"],
            env=self.env(),
            cwd=self.base_dir,
            errlog=self.server_log,
            timeout=timedelta(seconds=30),
        ) as session:
            self.say(
                NOTE,
                f"[server {self.servers}: `manage.py mcp_serve` started over stdio and "
                f"initialized in {time.monotonic() - begun:.1f}s]",
            )
            self.session = session
            yield
            stopping = time.monotonic()
        self.say(NOTE, f"[server {self.servers} stopped in {time.monotonic() - stopping:.1f}s]")

    def expect(self, condition: Any, message: str) -> None:
        if not condition:
            raise WalkthroughFailed(self.step, message)

    def answer(self, text: str) -> None:
        self.say(ANSWER, f"-> {text}")

    async def call(self, tool: str, **arguments: Any) -> Any:
        """Call a tool, show the call, and return its result; a refusal fails the step."""
        texts = {k: json.dumps(v, ensure_ascii=False) for k, v in arguments.items()}
        shown = ", ".join(f"{k}={v if len(v) <= 40 else v[:39] + '…'}" for k, v in texts.items())
        self.say(CALL, f"{tool}({shown})")
        self.calls += 1
        envelope = tool_envelope(await self.session.call_tool(tool, arguments))
        error = envelope.get("error") or {}
        self.expect(
            envelope.get("ok"), f"{tool} answered {error.get('code')}: {error.get('message')}"
        )
        return envelope["result"]

    async def resolve(
        self, query: str, collection: str, *context: str, expected: str = ""
    ) -> dict[str, Any]:
        """resolve_record, with the candidates' links; `expected`: the record it must select."""
        context_ids = {"context_record_ids": list(context)} if context else {}
        found: dict[str, Any] = await self.call(
            "resolve_record",
            query=query,
            collection_id=self.ids[collection],
            detail=True,
            **context_ids,
        )
        if expected:
            self.expect(
                found["status"] == "resolved" and found["selected_record_id"] == expected,
                f"resolving {query!r} should select {expected}; got {found['status']!r} "
                f"({found.get('selected_record_id')})",
            )
        return found

    async def commit(
        self, operation: str, arguments: dict[str, Any], **review: Any
    ) -> tuple[str, dict[str, Any]]:
        prepared = await self.call(
            "prepare_write", operation=operation, arguments=arguments, **review
        )
        self.answer(
            f"prepared {operation}: action {prepared['action_id'][:8]}, nothing written yet"
        )
        committed = await self.call("commit_write", action_id=prepared["action_id"])
        self.expect(
            committed["status"] == "committed" and not committed.get("replayed"),
            f"commit_write should commit once, got {committed['status']!r}",
        )
        return prepared["action_id"], committed["result"]

    async def run(self) -> None:
        begun = time.monotonic()
        self.manage("migrate")
        self.manage("loaddata", "hiring_demo")
        self.say(DETAIL, f"Temporary database: {self.db_path} ({time.monotonic() - begun:.1f}s)")
        async with self.server():
            for number in range(1, len(STEPS)):
                await self.run_step(number)
        async with self.server():  # the last step reads what the others wrote, after a restart
            await self.run_step(len(STEPS))

    async def run_step(self, number: int) -> None:
        title, step = STEPS[number - 1]
        self.step = f"step {number} ({title})"
        self.say(HEADING, f"Step {number}/{len(STEPS)}: {title}")
        summary = await step(self)
        self.say(PASSED, f"ok step {number} passed: {summary}")

    async def clarify_and_follow_links(self) -> str:
        catalog = await self.call("workspace_digest")
        self.ids.update({c["name"]: c["collection_id"] for c in catalog["collections"]})
        for name in ("people", "applications", "interviews", "feedback"):
            self.expect(name in self.ids, f"the hiring demo has no {name!r} collection")
        typo = await self.resolve(TYPO, "people")
        titles = [c["title"] for c in typo["candidates"]]
        self.expect(
            typo["status"] == "needs_clarification" and INTENDED_NAME in titles,
            f"resolving {TYPO!r} should need clarification and suggest {INTENDED_NAME!r}; got "
            f"{typo['status']!r} with {titles}",
        )
        self.answer(f"needs_clarification, nothing selected; suggests {INTENDED_NAME!r}")
        self.say(NOTE, f'agent asks: "Did you mean {INTENDED_NAME}?"')
        self.say(NOTE, f'user (scripted): "{USER_ANSWER}"')

        person = await self.resolve(INTENDED_NAME, "people")
        self.expect(person["status"] == "resolved", f"{INTENDED_NAME!r} should resolve")
        kirat = person["selected_record_id"]
        backend = [
            link
            for link in person["candidates"][0]["links"]
            if link["collection"] == "applications" and "backend" in link["title"].lower()
        ]
        self.expect(len(backend) == 1, f"{INTENDED_NAME} should have one backend application")
        application = backend[0]
        found = await self.resolve(
            application["title"], "applications", kirat, expected=application["record_id"]
        )
        interviews = [
            link for link in found["candidates"][0]["links"] if link["collection"] == "interviews"
        ]
        coding = [link for link in interviews if "coding" in link["title"].lower()]
        others = [link for link in interviews if link not in coding]
        self.expect(len(coding) == 1 and others, f"one coding interview and another: {interviews}")
        self.answer(f"resolved: {application['title']} (linked to {INTENDED_NAME})")
        interview = await self.resolve(
            coding[0]["title"],
            "interviews",
            application["record_id"],
            expected=coding[0]["record_id"],
        )
        self.answer(f"resolved: {coding[0]['title']}")
        self.ids.update(
            application=application["record_id"],
            interview=coding[0]["record_id"],
            interview_review=interview["resolution_id"],
            wrong=others[0],
        )
        return f"{TYPO!r} was clarified to {INTENDED_NAME}, then followed by links"

    async def reuse_feedback(self) -> str:
        found = await self.call("discover_collections", name="feedback", purpose=FEEDBACK_PURPOSE)
        exact = [s for s in found["suggestions"] if s["exact"]]
        self.expect(
            len(exact) == 1 and exact[0]["collection_id"] == self.ids["feedback"],
            f"discover_collections should point at feedback; got {found['suggestions']}",
        )
        self.answer(f"'feedback' exists ({exact[0]['reasons'][0]}); no collection is created")
        self.ids["discovery"] = found["discovery_id"]
        return "the existing Feedback collection is reused, not duplicated"

    async def link(self, target: str, described: str, *reviews: str) -> Any:
        """Resolve the assessment afresh (earlier writes moved its counter), then link."""
        source = await self.resolve(
            self.ids["assessment"], "feedback", expected=self.ids["assessment"]
        )
        _, result = await self.commit(
            "link_records",
            {
                "source_id": self.ids["assessment"],
                "relationship_type": LINK_TYPE,
                "target_id": target,
            },
            review_ids=[source["resolution_id"], *reviews],
            decision_reason=f"The assessment is about the {described}.",
        )
        self.answer(f"committed: assessment --{LINK_TYPE}--> {described}")
        return result

    async def record_assessment(self) -> str:
        check = await self.resolve(NEW_TITLE, "feedback")
        self.expect(
            check["status"] == "no_match", f"{NEW_TITLE!r} should be new: {check['status']}"
        )
        self.answer("no_match: no existing or archived feedback has this title")
        action_id, result = await self.commit(
            "create_record",
            {"collection_id": self.ids["feedback"], "title": NEW_TITLE, "data": NEW_DATA},
            review_ids=[check["resolution_id"], self.ids["discovery"]],
            decision_reason="The user gave an additional assessment; the title is new.",
        )
        self.ids.update(assessment=result["record"]["record_id"], create_action=action_id)
        # Creating the assessment moved only the feedback names: step 1's interview review is
        # still fresh and can be cited.
        linked = await self.link(
            self.ids["interview"], "coding interview", self.ids["interview_review"]
        )
        # A link made anew is the expected outcome: only an existing link says "created": false.
        self.expect(linked.get("created", True), "linking the assessment should create a new link")
        return f"recorded the assessment and linked it ({LINK_TYPE}) to the interview"

    async def retry_commit(self) -> str:
        again = await self.call("commit_write", action_id=self.ids["create_action"])
        self.expect(
            again["replayed"] and again["result"]["record"]["record_id"] == self.ids["assessment"],
            f"retrying commit_write should replay the stored result, got {again}",
        )
        self.answer("committed, replayed=true: the stored original result, same record ID")
        found = await self.call(
            "search_records", collection_id=self.ids["feedback"], query=NEW_TITLE
        )
        self.expect(found["count"] == 1, f"one {NEW_TITLE!r} should exist, found {found['count']}")
        self.answer("1 record with this title: no second record was written")
        return "the retried commit replayed its result without writing again"

    async def outgoing(self) -> list[dict[str, Any]]:
        context = await self.call("get_record_context", record_id=self.ids["assessment"])
        found: list[dict[str, Any]] = context["links"]["outgoing"]
        return found

    async def remove_wrong_link(self) -> str:
        wrong = self.ids["wrong"]
        self.say(
            NOTE, f"scripted mistake: the agent also links the assessment to {wrong['title']!r}"
        )
        review = await self.resolve(
            wrong["title"], "interviews", self.ids["application"], expected=wrong["record_id"]
        )
        await self.link(wrong["record_id"], "system design interview", review["resolution_id"])
        self.say(NOTE, 'user (scripted): "No, it is only about the coding interview."')
        outgoing = await self.outgoing()
        wrong_links = [link for link in outgoing if link["record_id"] == wrong["record_id"]]
        self.expect(
            len(wrong_links) == 1 and len(outgoing) == 2, f"two links, one wrong: {outgoing}"
        )
        relationship_id = wrong_links[0]["relationship_id"]
        self.answer(
            f"{len(outgoing)} outgoing links; the wrong one is relationship {relationship_id[:8]}"
        )
        ends = [
            await self.resolve(self.ids["assessment"], "feedback", expected=self.ids["assessment"]),
            await self.resolve(wrong["record_id"], "interviews", expected=wrong["record_id"]),
        ]
        await self.commit(
            "unlink_records",
            {"relationship_id": relationship_id},
            review_ids=[end["resolution_id"] for end in ends],
            decision_reason="The user said the assessment is only about the coding interview.",
            clarification="User: 'No, it is only about the coding interview.'",
        )
        # The commit names nothing the agent did not send; the context shows what it removed.
        targets = [link["record_id"] for link in await self.outgoing()]
        self.expect(
            targets == [self.ids["interview"]], f"only the coding interview stays: {targets}"
        )
        self.answer(f"context now shows one link: assessment --{LINK_TYPE}--> coding interview")
        return "the wrong link was found in context, both ends resolved, and unlinked"

    async def read_after_restart(self) -> str:
        context = await self.call("get_record_context", record_id=self.ids["assessment"])
        links = [
            (link["relationship_type"], link["record_id"]) for link in context["links"]["outgoing"]
        ]
        self.expect(
            context["record"]["title"] == NEW_TITLE
            and links == [(LINK_TYPE, self.ids["interview"])],
            f"the assessment should read back linked only to the coding interview; got {context}",
        )
        kinds = [event["kind"] for event in reversed(context["events"] or [])]
        self.answer(
            f"{NEW_TITLE!r}, version {context['record']['version']}; history: {', '.join(kinds)}"
        )
        again = await self.call("commit_write", action_id=self.ids["create_action"])
        self.expect(again["replayed"], "replaying the creation after the restart should replay")
        self.answer("replayed=true after the restart too; still one record")
        return "a new server process reads the assessment with its link and history"


STEPS: list[tuple[str, Callable[[Walkthrough], Awaitable[str]]]] = [
    (f'"{REQUEST}": clarify the name, then follow the links', Walkthrough.clarify_and_follow_links),
    ("reuse the existing Feedback collection", Walkthrough.reuse_feedback),
    ("record an additional assessment and link it to the interview", Walkthrough.record_assessment),
    ("retry the same commit (an interrupted response)", Walkthrough.retry_commit),
    ("remove a deliberately wrong link", Walkthrough.remove_wrong_link),
    ("retrieve the assessment after a server restart", Walkthrough.read_after_restart),
]


def _leaf(exc: BaseException) -> BaseException:
    """The task group around the client wraps what a step raised; unwrap it for the report."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        failures = [e for e in exc.exceptions if isinstance(e, WalkthroughFailed)]
        exc = failures[0] if failures else exc.exceptions[0]
    return exc


def run_walkthrough(*, base_dir: Path, db_path: Path, server_log: TextIO, say: Say) -> Walkthrough:
    """Run the whole scenario; raises WalkthroughFailed at the first step that misbehaves."""
    walkthrough = Walkthrough(base_dir=base_dir, db_path=db_path, say=say, server_log=server_log)
    started = time.monotonic()

    async def run_in_time() -> None:
        with anyio.fail_after(TIMEOUT_SECONDS):
            await walkthrough.run()

    try:
        anyio.run(run_in_time)
    except Exception as exc:  # ExceptionGroup included; KeyboardInterrupt passes through
        cause = _leaf(exc)
        if isinstance(cause, WalkthroughFailed):
            raise cause from None
        message = (
            f"did not finish within {TIMEOUT_SECONDS} seconds"
            if isinstance(cause, TimeoutError)
            else f"the server or its connection failed: {type(cause).__name__}: {cause}"
        )
        raise WalkthroughFailed(walkthrough.step, message) from cause
    walkthrough.elapsed = time.monotonic() - started
    return walkthrough
