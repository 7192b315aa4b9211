"""The seed's scripted walkthrough: a scripted agent drives a real `mcp_serve` over stdio.

Everything runs against a temporary SQLite file holding the hiring demo, through the official MCP
client launching `manage.py mcp_serve` as a subprocess, exactly as a coding agent would. The
user's answers are prescribed; this demonstrates the guarded workflow, it does not evaluate a
language model. Each step checks that the server answered as the script expects and raises
WalkthroughFailed (naming the step) when it did not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, TextIO

import anyio

from workflow.mcp.client import ClientSession, TextContent, open_stdio_session

# What the scripted user says and what the scripted agent writes. Tests change these to prove
# that a step which stops behaving as scripted fails the walkthrough.
REQUEST = "Feedback for Kriat's backend coding interview"
TYPO = "Kriat"
USER_ANSWER = "yes, Kirat"
INTENDED_NAME = "Kirat"
FEEDBACK_PURPOSE = "Interview feedback: an interviewer's assessment of a coding interview."
NEW_TITLE = "Follow-up assessment of Kirat's backend coding interview"
NEW_DATA = {
    "recommendation": "hire",
    "summary": "Pairing follow-up: extended the solution with tests and explained the trade-offs.",
}
LINK_TYPE = "for_interview"
WORKSPACE_ID = "local"  # the hiring demo fixture's workspace
ACTOR_ID = "walkthrough-agent"

STEP_COUNT = 6
CALL_TIMEOUT = timedelta(seconds=30)
SETUP_TIMEOUT_SECONDS = 60
TIMEOUT_SECONDS = 120  # a normal run takes 10-20 s; this only stops a hung server


class WalkthroughFailed(Exception):
    """A step did not behave as scripted."""

    def __init__(self, step: str, message: str) -> None:
        super().__init__(f"{step}: {message}")
        self.step = step
        self.message = message


# Kinds of output line; the management command decides how each one looks and at which
# verbosity it is shown.
HEADING, CALL, ANSWER, NOTE, PASSED, DETAIL = (
    "heading",
    "call",
    "answer",
    "note",
    "passed",
    "detail",
)
Say = Callable[[str, str], None]


@dataclass
class Walkthrough:
    """One run: the temporary database, the servers it starts, and what the steps learned."""

    base_dir: Path
    db_path: Path
    say: Say
    server_log: TextIO
    step: str = "set-up"
    calls: int = 0
    servers: int = 0
    elapsed: float = 0.0
    labels: dict[str, str] = field(default_factory=dict)  # ID -> readable name, for output
    ids: dict[str, str] = field(default_factory=dict)  # what the scenario found or created

    # --- the servers ------------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        # The client does not inherit the environment: every variable is passed on purpose,
        # and DATABASE_URL never is, so the server can only ever open the temporary file.
        return {
            "PATH": os.environ.get("PATH", os.defpath),
            "DJANGO_SETTINGS_MODULE": "anchor_site.settings",
            "ANCHOR_DB_PATH": str(self.db_path),
            "ANCHOR_WORKSPACE_ID": WORKSPACE_ID,
            "ANCHOR_ACTOR_ID": ACTOR_ID,
            "ANCHOR_LOG_LEVEL": "WARNING",
        }

    def manage(self, *arguments: str) -> None:
        """Run a manage.py command against the temporary database (set-up only)."""
        done = subprocess.run(
            [sys.executable, str(self.base_dir / "manage.py"), *arguments],
            cwd=self.base_dir,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=SETUP_TIMEOUT_SECONDS,
        )
        if done.returncode != 0:
            raise WalkthroughFailed(
                "set-up",
                f"`manage.py {' '.join(arguments)}` exited with {done.returncode}:\n"
                + (done.stderr.strip() or done.stdout.strip())[-2000:],
            )

    def prepare_database(self) -> None:
        begun = time.monotonic()
        self.manage("migrate", "--verbosity", "0")
        self.manage("loaddata", "hiring_demo", "--verbosity", "0")
        self.say(
            DETAIL,
            f"Temporary database: {self.db_path} (migrated, hiring demo loaded in "
            f"{time.monotonic() - begun:.1f}s)",
        )

    @asynccontextmanager
    async def server(self) -> AsyncIterator[ClientSession]:
        self.servers += 1
        number = self.servers
        begun = time.monotonic()
        async with open_stdio_session(
            [sys.executable, str(self.base_dir / "manage.py"), "mcp_serve"],
            env=self.env(),
            cwd=self.base_dir,
            errlog=self.server_log,
            timeout=CALL_TIMEOUT,
        ) as session:
            self.say(
                NOTE,
                f"[server {number}: `manage.py mcp_serve` started over stdio and initialized "
                f"in {time.monotonic() - begun:.1f}s]",
            )
            yield session
            stopping = time.monotonic()
        self.say(
            NOTE,
            f"[server {number} stopped: stdin closed, process exited in "
            f"{time.monotonic() - stopping:.1f}s]",
        )

    # --- talking to the server -------------------------------------------------------------

    def expect(self, condition: Any, message: str) -> None:
        if not condition:
            raise WalkthroughFailed(self.step, message)

    def label(self, value: Any) -> str:
        """A readable rendering of a tool argument: known IDs by name, long text cut short."""
        if isinstance(value, str) and value in self.labels:
            return f"<{self.labels[value]}>"
        if isinstance(value, list):
            return "[" + ", ".join(self.label(item) for item in value) + "]"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k}: {self.label(item)}" for k, item in value.items()) + "}"
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 60 else text[:59] + '…"'

    async def call(self, session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
        """Call a tool, show the call, and return its result; a refusal fails the step."""
        shown = ", ".join(f"{key}={self.label(value)}" for key, value in arguments.items())
        self.say(CALL, f"{tool}({shown})")
        self.calls += 1
        reply = await session.call_tool(tool, arguments)
        if reply.isError:
            text = " ".join(getattr(part, "text", "") for part in reply.content)
            raise WalkthroughFailed(self.step, f"{tool} failed at the protocol level: {text}")
        envelope = reply.structuredContent
        if envelope is None:
            part = reply.content[0]
            assert isinstance(part, TextContent), part  # tools answer with JSON text
            envelope = json.loads(part.text)
        if not envelope.get("ok"):
            error = envelope.get("error") or {}
            raise WalkthroughFailed(
                self.step,
                f"{tool} answered {error.get('code')}: {error.get('message')}",
            )
        return envelope["result"]

    def answer(self, text: str) -> None:
        self.say(ANSWER, f"-> {text}")

    async def resolve(
        self,
        session: ClientSession,
        query: str,
        collection: str | None = None,
        context: list[str] | None = None,
        *,
        links: bool = False,
    ) -> dict[str, Any]:
        """links=True: the whole answer (detail), every link of the candidates to follow."""
        arguments: dict[str, Any] = {"query": query, **({"detail": True} if links else {})}
        if collection:
            arguments["collection_id"] = self.ids[collection]
        if context:
            arguments["context_record_ids"] = context
        result = await self.call(session, "resolve_record", **arguments)
        about = self.labels.get(query) or (query if len(query) <= 30 else query[:29] + "…")
        self.labels[result["resolution_id"]] = f"review of {about}"
        return result

    def resolved(self, result: dict[str, Any], expected_id: str | None = None) -> str:
        """The selected record of a `resolved` answer (checked against expected_id)."""
        self.expect(
            result["status"] == "resolved",
            f"resolving should be 'resolved', got {result['status']!r} ({result.get('message')})",
        )
        selected = result["selected_record_id"]
        if expected_id is not None:
            self.expect(
                selected == expected_id,
                f"resolving selected {selected}, expected {expected_id}",
            )
        return selected

    async def prepare_and_commit(
        self, session: ClientSession, operation: str, arguments: dict[str, Any], **review: Any
    ) -> tuple[str, dict[str, Any]]:
        prepared = await self.call(
            session, "prepare_write", operation=operation, arguments=arguments, **review
        )
        action_id = prepared["action_id"]
        self.labels[action_id] = f"action {action_id[:8]}"
        self.answer(f"prepared {operation}: action {action_id[:8]}, nothing written yet")
        committed = await self.call(session, "commit_write", action_id=action_id)
        self.expect(
            committed["status"] == "committed" and not committed["replayed"],
            f"commit_write should commit once, got {committed['status']!r} "
            f"(replayed={committed.get('replayed')})",
        )
        return action_id, committed["result"]

    def begin(self, number: int, title: str) -> None:
        self.step = f"step {number} ({title})"
        self.say(HEADING, f"Step {number}/{STEP_COUNT}: {title}")

    def passed(self, number: int, summary: str) -> None:
        self.say(PASSED, f"ok step {number} passed: {summary}")

    # --- the scenario ----------------------------------------------------------------------

    async def run(self) -> None:
        self.prepare_database()
        async with self.server() as session:
            await self.clarify_and_follow_links(session)
            await self.reuse_feedback(session)
            await self.record_assessment(session)
            await self.retry_commit(session)
            await self.remove_wrong_link(session)
        async with self.server() as session:
            await self.read_after_restart(session)

    async def clarify_and_follow_links(self, session: ClientSession) -> None:
        self.begin(1, f'"{REQUEST}": clarify the name, then follow the links')
        catalog = await self.call(session, "workspace_digest")
        for collection in catalog["collections"]:
            self.ids[collection["name"]] = collection["collection_id"]
            self.labels[collection["collection_id"]] = collection["name"]
        self.answer(f"{len(catalog['collections'])} collections: {', '.join(sorted(self.ids))}")
        for name in ("people", "applications", "interviews", "feedback"):
            self.expect(name in self.ids, f"the hiring demo has no {name!r} collection")

        typo = await self.resolve(session, TYPO, "people")
        suggested = [c for c in typo["candidates"] if c["title"] == INTENDED_NAME]
        self.expect(
            typo["status"] == "needs_clarification" and suggested,
            f"resolving {TYPO!r} should need clarification and suggest {INTENDED_NAME!r}; got "
            f"{typo['status']!r} with {[c['title'] for c in typo['candidates']]}",
        )
        self.answer(
            f"needs_clarification, nothing selected; suggests {INTENDED_NAME!r} "
            f"({suggested[0]['reasons'][0]})"
        )
        self.say(NOTE, f'agent asks: "Did you mean {INTENDED_NAME}?"')
        self.say(NOTE, f'user (scripted): "{USER_ANSWER}"')

        person = await self.resolve(session, INTENDED_NAME, "people", links=True)
        kirat = self.resolved(person)
        self.labels[kirat] = INTENDED_NAME
        links = person["candidates"][0]["links"]
        applications = [link for link in links if link["collection"] == "applications"]
        self.answer(
            f"resolved: {INTENDED_NAME} ({kirat[:8]}); linked applications: "
            + ", ".join(link["title"] for link in applications)
        )
        backend = [link for link in applications if "backend" in link["title"].lower()]
        self.expect(
            len(backend) == 1,
            f"{INTENDED_NAME} should have exactly one backend application among his links; "
            f"found {[link['title'] for link in backend]}",
        )
        application_title = backend[0]["title"]

        found = await self.resolve(session, application_title, "applications", [kirat], links=True)
        application = self.resolved(found, backend[0]["record_id"])
        self.labels[application] = application_title
        interviews = [
            link for link in found["candidates"][0]["links"] if link["collection"] == "interviews"
        ]
        self.answer(
            f"resolved: {application_title} (linked to {INTENDED_NAME}); its interviews: "
            + ", ".join(link["title"] for link in interviews)
        )
        coding = [link for link in interviews if "coding" in link["title"].lower()]
        others = [link for link in interviews if link not in coding]
        self.expect(
            len(coding) == 1 and others,
            f"{application_title} should have one coding interview and another one; found "
            f"{[link['title'] for link in interviews]}",
        )

        found = await self.resolve(
            session, coding[0]["title"], "interviews", [application], links=True
        )
        interview = self.resolved(found, coding[0]["record_id"])
        self.labels[interview] = "coding interview"
        self.ids.update(
            kirat=kirat,
            application=application,
            interview=interview,
            interview_resolution=found["resolution_id"],
            wrong_interview=others[0]["record_id"],
            wrong_interview_title=others[0]["title"],
        )
        self.labels[others[0]["record_id"]] = "system design interview"
        existing = [
            link["title"]
            for link in found["candidates"][0]["links"]
            if link["collection"] == "feedback"
        ]
        self.answer(
            f"resolved: {coding[0]['title']}; feedback already on it: "
            + (", ".join(existing) or "none")
        )
        self.passed(
            1,
            f"{TYPO!r} was clarified to {INTENDED_NAME}, then his backend application and its "
            "coding interview were resolved through their links",
        )

    async def reuse_feedback(self, session: ClientSession) -> None:
        self.begin(2, "reuse the existing Feedback collection")
        found = await self.call(
            session, "discover_collections", name="feedback", purpose=FEEDBACK_PURPOSE
        )
        exact = [s for s in found["suggestions"] if s["exact"]]
        self.expect(
            len(exact) == 1 and exact[0]["collection_id"] == self.ids["feedback"],
            f"discover_collections should point at the existing feedback collection; "
            f"suggestions were {[s['name'] for s in found['suggestions']]}",
        )
        entry = next(e for e in found["catalog"] if e["collection_id"] == self.ids["feedback"])
        self.answer(
            f"read all {len(found['catalog'])} catalog entries; 'feedback' exists "
            f"({exact[0]['reasons'][0]}), purpose: {entry['purpose']!r}, "
            f"{entry['active_record_count']} records"
        )
        self.say(NOTE, "agent decides: reuse 'feedback'; no collection is created")
        self.ids["discovery"] = found["discovery_id"]
        self.labels[found["discovery_id"]] = "catalog review"
        self.passed(2, "the existing Feedback collection is reused, not duplicated")

    async def record_assessment(self, session: ClientSession) -> None:
        self.begin(3, "record an additional assessment and link it to the interview")
        title_check = await self.resolve(session, NEW_TITLE, "feedback")
        self.expect(
            title_check["status"] == "no_match",
            f"the new title should have no match in feedback, got {title_check['status']!r} "
            f"with {[c['title'] for c in title_check['candidates']]}",
        )
        self.answer("no_match: no existing or archived feedback has this title")

        action_id, result = await self.prepare_and_commit(
            session,
            "create_record",
            {"collection_id": self.ids["feedback"], "title": NEW_TITLE, "data": NEW_DATA},
            review_ids=[title_check["resolution_id"], self.ids["discovery"]],
            decision_reason="The user gave an additional assessment of Kirat's Junior Backend "
            "coding interview; the title has no match in feedback.",
        )
        assessment = result["record"]["record_id"]
        self.labels[assessment] = "assessment"
        self.ids.update(assessment=assessment, create_action=action_id)
        self.answer(f"committed: created {NEW_TITLE!r} ({assessment[:8]}), version 1")

        link_action, linked = await self.link(
            session, self.ids["interview"], "Kirat's Junior Backend coding interview"
        )
        self.expect(linked["created"], "linking the assessment should create a new link")
        self.ids["link_action"] = link_action
        self.passed(
            3,
            f"recorded the assessment in feedback and linked it ({LINK_TYPE}) to Kirat's "
            "Junior Backend coding interview",
        )

    async def link(
        self, session: ClientSession, target: str, described: str, target_title: str = ""
    ) -> tuple[str, dict[str, Any]]:
        """Resolve both ends afresh (earlier writes moved their counters), then link."""
        source_review = await self.resolve(session, self.ids["assessment"], "feedback")
        self.resolved(source_review, self.ids["assessment"])
        reviews = [source_review["resolution_id"]]
        if target_title:
            target_review = await self.resolve(
                session, target_title, "interviews", [self.ids["application"]]
            )
            self.resolved(target_review, target)
            reviews.append(target_review["resolution_id"])
            self.answer("resolved both ends afresh")
        else:
            # Creating the assessment moved only the feedback names, so step 1's review of
            # the interview is still fresh and can be cited.
            reviews.append(self.ids["interview_resolution"])
            self.answer("resolved the new record by ID; step 1's interview review is still fresh")
        action_id, result = await self.prepare_and_commit(
            session,
            "link_records",
            {
                "source_id": self.ids["assessment"],
                "relationship_type": LINK_TYPE,
                "target_id": target,
            },
            review_ids=reviews,
            decision_reason=f"The assessment is about {described}.",
        )
        self.answer(
            f"committed: assessment --{LINK_TYPE}--> {self.labels.get(target, target[:8])} "
            f"(relationship {result['relationship']['relationship_id'][:8]})"
        )
        return action_id, result

    async def retry_commit(self, session: ClientSession) -> None:
        self.begin(4, "retry the same commit (an interrupted response)")
        again = await self.call(session, "commit_write", action_id=self.ids["create_action"])
        same = again["result"]["record"]["record_id"] == self.ids["assessment"]
        self.expect(
            again["status"] == "committed" and again["replayed"] and same,
            f"retrying commit_write should replay the stored result, got {again['status']!r} "
            f"replayed={again.get('replayed')}",
        )
        self.answer("committed, replayed=true: the stored original result, same record ID")
        found = await self.call(
            session, "search_records", collection_id=self.ids["feedback"], query=NEW_TITLE
        )
        self.expect(
            found["count"] == 1,
            f"search should find exactly one {NEW_TITLE!r}, found {found['count']}",
        )
        self.answer("1 record with this title: no second record was written")
        self.passed(4, "the retried commit replayed its result without writing again")

    async def remove_wrong_link(self, session: ClientSession) -> None:
        self.begin(5, "remove a deliberately wrong link")
        wrong, wrong_title = self.ids["wrong_interview"], self.ids["wrong_interview_title"]
        self.say(NOTE, f"scripted mistake: the agent also links the assessment to {wrong_title!r}")
        await self.link(session, wrong, "the system design interview (wrongly)", wrong_title)
        self.say(NOTE, 'user (scripted): "No, it is only about the coding interview."')

        context = await self.call(session, "get_record_context", record_id=self.ids["assessment"])
        outgoing = context["links"]["outgoing"]
        wrong_links = [link for link in outgoing if link["record_id"] == wrong]
        self.expect(
            len(wrong_links) == 1 and len(outgoing) == 2,
            f"the assessment should have 2 outgoing links, one to {wrong_title!r}; got "
            f"{[(link['relationship_type'], link['title']) for link in outgoing]}",
        )
        relationship_id = wrong_links[0]["relationship_id"]
        self.labels[relationship_id] = "the wrong link"
        self.answer(
            f"{len(outgoing)} outgoing links; the wrong one is relationship {relationship_id[:8]}"
        )

        ends = [
            await self.resolve(session, self.ids["assessment"], "feedback"),
            await self.resolve(session, wrong, "interviews"),
        ]
        self.resolved(ends[0], self.ids["assessment"])
        self.resolved(ends[1], wrong)
        self.answer("resolved both ends of that exact link")
        _, removed = await self.prepare_and_commit(
            session,
            "unlink_records",
            {"relationship_id": relationship_id},
            review_ids=[end["resolution_id"] for end in ends],
            decision_reason="The user said the assessment is only about the coding interview.",
            clarification="User: 'No, it is only about the coding interview.'",
        )
        self.expect(
            removed["removed_relationship"]["relationship_id"] == relationship_id,
            "unlink_records removed a different relationship",
        )
        self.answer(f"committed: relationship {relationship_id[:8]} removed")

        after = await self.call(session, "get_record_context", record_id=self.ids["assessment"])
        targets = [link["record_id"] for link in after["links"]["outgoing"]]
        self.expect(
            targets == [self.ids["interview"]],
            f"after the unlink only the coding interview should remain linked; got {targets}",
        )
        self.answer("context now shows one link: assessment --for_interview--> coding interview")
        self.passed(5, "the wrong link was found in context, both ends resolved, and unlinked")

    async def read_after_restart(self, session: ClientSession) -> None:
        self.begin(6, "retrieve the assessment after a server restart")
        context = await self.call(session, "get_record_context", record_id=self.ids["assessment"])
        record, outgoing = context["record"], context["links"]["outgoing"]
        links = [(link["relationship_type"], link["record_id"]) for link in outgoing]
        self.expect(
            record["title"] == NEW_TITLE and record["status"] == "active",
            f"the assessment should read back active as {NEW_TITLE!r}; got {record}",
        )
        self.expect(
            links == [(LINK_TYPE, self.ids["interview"])],
            f"the assessment should be linked only to the coding interview; got {links}",
        )
        kinds = [event["kind"] for event in reversed(context["events"] or [])]
        self.answer(
            f"{record['title']!r} in {record['collection_name']}, version {record['version']}, "
            f"linked {LINK_TYPE} -> {outgoing[0]['title']}"
        )
        self.answer(f"history: {', '.join(kinds)}")
        again = await self.call(session, "commit_write", action_id=self.ids["create_action"])
        self.expect(
            again["replayed"] and again["result"]["record"]["record_id"] == self.ids["assessment"],
            "replaying the creation after the restart should return the stored result",
        )
        self.answer("replayed=true after the restart too; still one record")
        self.passed(6, "a new server process reads the assessment with its link and history")


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
        if isinstance(cause, TimeoutError):
            message = f"did not finish within {TIMEOUT_SECONDS} seconds"
        else:
            message = f"the server or its connection failed: {type(cause).__name__}: {cause}"
        raise WalkthroughFailed(walkthrough.step, message) from cause
    walkthrough.elapsed = time.monotonic() - started
    return walkthrough
