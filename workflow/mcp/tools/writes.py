"""Write tools: prepare the exact write, then commit it after the server's rechecks."""

import inspect
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from workflow import actions as write_actions
from workflow.mcp.envelope import ToolResult, run_tool
from workflow.mcp.shapes import BatchAction, Decision, ImportLink, ImportRow
from workflow.mcp.tools.base import Toolset
from workflow.next_steps import after_commit, after_prepare
from workflow.operations import Operation, all_operations, operation_names
from workflow.scope import scope_for_request


def argument_keys_per_operation() -> str:
    """Each operation's argument keys, from its definition, so the description cannot drift
    from what prepare_write accepts. Neighbours that take the same keys share a line, and one
    that adds keys before its neighbour's names only those."""
    lines: list[tuple[list[str], str]] = []
    previous: Operation | None = None
    for operation in all_operations():
        guide = operation.argument_guide()
        if lines and lines[-1][1] == guide:
            lines[-1][0].append(operation.name)
        else:
            if previous and _extends(operation, previous):
                added = ", ".join(operation.keys[: -len(previous.keys)])
                guide = operation.argument_guide(keys=f"{added} + {previous.name}'s keys")
            lines.append(([operation.name], guide))
        previous = operation
    return "\n".join(f"{' / '.join(names)}: {guide}." for names, guide in lines)


def _extends(operation: Operation, previous: Operation) -> bool:
    """Takes a few keys more than `previous`, before the same ones (with the same notes)."""
    return (
        len(previous.keys) > 2
        and operation.keys[-len(previous.keys) :] == previous.keys
        and operation.argument_notes == previous.argument_notes
        and operation.review_hint == previous.review_hint
    )


def _from_the_registry(method: Callable[..., ToolResult]) -> Callable[..., ToolResult]:
    """The description's parts that name operations, filled in from their definitions."""
    operations = all_operations()
    parts = {
        "{operations}": argument_keys_per_operation(),
        "{naming_created}": " / ".join(op.name for op in operations if op.may_name_created_records),
        "{creating}": " / ".join(op.name for op in operations if op.creates_a_record),
    }
    doc = inspect.cleandoc(method.__doc__ or "")
    for placeholder, text in parts.items():
        doc = doc.replace(placeholder, text)
    method.__doc__ = doc
    return method


class WriteTools(Toolset):
    @_from_the_registry
    def prepare_write(
        self,
        operation: Annotated[
            str,
            Field(
                description="The write; its argument keys are in the description.",
                json_schema_extra={"enum": list(operation_names())},
            ),
        ],
        arguments: Annotated[
            dict[str, Any],
            Field(description="Exactly the keys the operation takes (see the description)."),
        ],
        review_ids: Annotated[
            list[str],
            Field(
                description="1-12 discovery_id / resolution_id values, fresh (under 15 "
                "minutes), that reviewed every name and record this write touches."
            ),
        ],
        decision_reason: Annotated[
            str, Field(description="Why this write, in a sentence (1-2000 chars); audited.")
        ],
        clarification: Annotated[
            str | None,
            Field(
                description="Only what the user actually said to settle an ambiguity, a "
                "possible duplicate or overlap, an alias or a self mapping. Audited as "
                "agent-reported, never as consent. Omit when nothing needed settling."
            ),
        ] = None,
    ) -> ToolResult:
        """Validate an exact write against your reviews and preview it; nothing is changed yet.

        Argument keys:
        {operations}
        Errors: REVIEW_REQUIRED (cite a fitting review), NEEDS_CLARIFICATION (ask the user),
        STALE_REVIEW (review again), INCOMPLETE_REVIEW, VERSION_CONFLICT, ARCHIVED.
        Returns `action_id` and a preview; then call commit_write. Preview IDs are provisional.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: after_prepare(
                write_actions.prepare_write(
                    scope,
                    operation=operation,
                    arguments=arguments,
                    review_ids=review_ids,
                    decision_reason=decision_reason,
                    clarification=clarification,
                ),
                tool="prepare_write",
            )
        )

    def commit_write(
        self,
        action_id: Annotated[str, Field(description="The action_id returned by prepare_write.")],
    ) -> ToolResult:
        """Apply a prepared write atomically after rechecking its reviews and versions.

        `status`: `committed` (with the result), `awaiting_approval` (a person must approve in
        the admin; tell the user, call again later with the same action_id) or `rejected`. A
        committed create returns `review.resolution_id` (a collection: `review.discovery_id`):
        cite it in the next write, e.g. to link the new record. Safe to retry: a committed
        action_id returns its stored result (`replayed: true`) without writing again.
        STALE_REVIEW: a cited review's answer changed (details name what) or the action
        expired; read current state, review again and prepare anew, never just substitute a
        fresh version.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: after_commit(write_actions.commit_write(scope, action_id=action_id))
        )


class BatchWriteTools(Toolset):
    @_from_the_registry
    def prepare_batch_write(
        self,
        actions: Annotated[
            list[BatchAction],
            Field(
                description="1-10 items, each as for prepare_write; review_ids may be "
                'omitted when every record named is "actions[N]".',
                min_length=1,
                max_length=10,
            ),
        ],
    ) -> ToolResult:
        """Prepare several record writes to commit together, all or nothing.

        Use it instead of repeated prepare_write/commit_write when one request writes several
        records (e.g. resolve three, prepare once, commit once). All reviews are checked
        against one snapshot, then items apply in order, so two writes to one record need
        successive expected_version values. A {naming_created} end may be "actions[N]": the record
        that {creating} item N of this batch makes (it needs no review of its own). So
        create two records and link them: batch_resolve_records both titles, then one batch.
        Collection changes use prepare_write. Nothing changes until commit_batch_write. Errors
        name the item as `actions[i]`.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: after_prepare(
                write_actions.prepare_batch_write(scope, actions=actions),
                tool="prepare_batch_write",
            )
        )

    def commit_batch_write(
        self,
        action_id: Annotated[
            str, Field(description="The action_id returned by prepare_batch_write.")
        ],
    ) -> ToolResult:
        """Apply a prepared batch atomically: every item or none, each audited with its index.

        Same outcomes and replay rules as commit_write: `committed` with per-item results,
        `awaiting_approval` or `rejected`; a committed action_id returns its stored result
        without writing again; a changed or expired batch returns STALE_REVIEW and writes
        nothing.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: after_commit(write_actions.commit_batch_write(scope, action_id=action_id))
        )


class ImportTools(Toolset):
    def prepare_import(
        self,
        collection_id: Annotated[str, Field(description="The existing collection to add to.")],
        rows: Annotated[
            list[ImportRow],
            Field(
                description="1-100 rows; `key` (unique, default the row's index) names the "
                "row in links and decisions. At most 1 MB of data in all.",
                min_length=1,
                max_length=100,
            ),
        ],
        decision_reason: Annotated[
            str, Field(description="Why these records are being added (1-2000 chars).")
        ],
        links: Annotated[
            list[ImportLink] | None,
            Field(
                description="Up to 200 links; at least one end of each is a row. "
                "Existing-record ends need resolution_ids in review_ids.",
                max_length=200,
            ),
        ] = None,
        review_ids: Annotated[
            list[str] | None,
            Field(description="Resolution IDs for existing records named in links (1-12)."),
        ] = None,
        clarification: Annotated[
            str | None,
            Field(
                description="What the user said about the linked existing records, if a "
                "resolution needed clarifying."
            ),
        ] = None,
    ) -> ToolResult:
        """Review many new records for duplicates on the server and preview the import.

        Use it for a pasted list or CSV instead of one resolve/prepare/commit per record. Every
        row title is compared with every title and alias in the collection (archives included)
        and with the other rows. Each row comes back `clean`, `possible_duplicate` (up to five
        candidates) or `batch_duplicate`; `needs_decision` lists the flagged keys. Nothing is
        written; call commit_import with a decision for each flagged row. New collections go
        through discover_collections and prepare_write. Past 2,000,000 comparisons it is
        refused with `rows_that_fit` per call (100 fit against 20,000 short names).
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: after_prepare(
                write_actions.prepare_import(
                    scope,
                    collection_id=collection_id,
                    rows=rows,
                    decision_reason=decision_reason,
                    links=links,
                    review_ids=review_ids,
                    clarification=clarification,
                ),
                tool="prepare_import",
            )
        )

    def commit_import(
        self,
        action_id: Annotated[str, Field(description="The action_id returned by prepare_import.")],
        decisions: Annotated[
            dict[str, Decision] | None,
            Field(
                description="Exactly one per flagged row key: skip; use_existing with one of "
                "the row's candidates; or create_anyway with what the user said. Omit when "
                "nothing was flagged."
            ),
        ] = None,
        ask_user: Annotated[
            bool,
            Field(
                description="True: first ask the user in the client's own dialog about each "
                "flagged row left out of decisions; `client_question` says what they chose."
            ),
        ] = False,
    ) -> ToolResult:
        """Create the reviewed rows atomically, applying your decision to each flagged row.

        Outcomes as commit_write: `committed`, `awaiting_approval` or `rejected`; committed
        rows carry their record's `resolution_id` to cite next. Links to skipped rows are
        dropped and reported; use_existing attaches the row's links to that record. All or
        nothing, audited per record, replayable by action_id (decisions are ignored on replay).
        STALE_REVIEW if any name in the collection changed since prepare_import: prepare again.
        """
        # ask_user=True is served by workflow.mcp.elicitation instead (it awaits the client).
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: after_commit(
                write_actions.commit_import(scope, action_id=action_id, decisions=decisions)
            )
        )
