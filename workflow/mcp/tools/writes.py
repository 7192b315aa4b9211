"""Write tools: prepare the exact write, then commit it after the server's rechecks."""

import inspect
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from workflow import actions as write_actions
from workflow.mcp.envelope import ToolResult
from workflow.mcp.shapes import BatchAction, Decision, ImportLink, ImportRow, batch_of
from workflow.mcp.tools.base import Toolset
from workflow.next_steps import after_commit, after_prepare
from workflow.operations import Operation, all_operations, operation_names


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
    method.__doc__ = inspect.cleandoc(method.__doc__ or "").format(
        operations=argument_keys_per_operation(),
        naming_created=" / ".join(op.name for op in operations if op.may_name_created_records),
        creating=" / ".join(op.name for op in operations if op.creates_a_record),
    )
    return method


def prepared(tool: str, sent: dict[str, Any]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda result: after_prepare(result, tool=tool, sent=sent)


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
                description="The discovery_id / resolution_id values that reviewed every name "
                "and record this write touches."
            ),
        ],
        decision_reason: Annotated[
            str, Field(description="Why this write, in a sentence; audited.")
        ],
        clarification: Annotated[
            str | None,
            Field(
                description="Only what the user actually said to settle an ambiguity, a "
                "duplicate, an alias or a self mapping. Omit when nothing needed settling."
            ),
        ] = None,
    ) -> ToolResult:
        """Validate an exact write against your reviews and preview it; then commit_write.

        Argument keys:
        {operations}
        """
        sent = locals()
        return self._run(write_actions.prepare_write, sent, prepared("prepare_write", sent))

    def commit_write(
        self,
        action_id: Annotated[str, Field(description="The action_id returned by prepare_write.")],
    ) -> ToolResult:
        """Apply a prepared write atomically after rechecking its reviews and versions.

        `status`: `committed`, `awaiting_approval` (a person must approve it in the admin: tell
        the user, call again later) or `rejected`. Safe to retry: a committed action_id never
        writes twice. STALE_REVIEW: review again and prepare anew.
        """
        return self._run(write_actions.commit_write, locals(), after_commit)


class BatchWriteTools(Toolset):
    @_from_the_registry
    def prepare_batch_write(
        self,
        actions: batch_of(BatchAction, "1-10 items, each as for prepare_write."),  # type: ignore[valid-type]
    ) -> ToolResult:
        """Prepare several record writes to commit together, all or nothing; then
        commit_batch_write.

        Items apply in order; a record's second item expects the version its first makes
        (a self mapping or a link leaves versions alone). A {naming_created} end may be
        "actions[N]", the record {creating} item N makes (no review needed). Collections:
        prepare_write.
        """
        sent = locals()
        return self._run(
            write_actions.prepare_batch_write, sent, prepared("prepare_batch_write", sent)
        )

    def commit_batch_write(
        self,
        action_id: Annotated[
            str, Field(description="The action_id returned by prepare_batch_write.")
        ],
    ) -> ToolResult:
        """Apply a prepared batch atomically, every item or none; outcomes as commit_write."""
        return self._run(write_actions.commit_batch_write, locals(), after_commit)


class ImportTools(Toolset):
    def prepare_import(
        self,
        collection_id: Annotated[str, Field(description="The collection to add to.")],
        rows: Annotated[
            list[ImportRow],
            Field(
                description="1-100 rows; `key` (default the row's index) names a row in links "
                "and decisions.",
                min_length=1,
                max_length=100,
            ),
        ],
        decision_reason: Annotated[str, Field(description="Why these records are added.")],
        links: Annotated[
            list[ImportLink] | None,
            Field(
                description="Links with a row at one end at least; a record end needs its "
                "resolution_id in review_ids.",
                max_length=200,
            ),
        ] = None,
        review_ids: Annotated[
            list[str] | None,
            Field(description="Resolution IDs of records named in links."),
        ] = None,
        clarification: Annotated[
            str | None,
            Field(description="What the user said, if a linked record's resolution needed it."),
        ] = None,
    ) -> ToolResult:
        """Review a pasted list of new records for duplicates and preview the import.

        No resolve needed per row: each row comes back `clean`, `possible_duplicate` (with
        candidates) or `batch_duplicate`, and `needs_decision` lists the flagged keys. Nothing
        is written until commit_import.
        """
        sent = locals()
        return self._run(write_actions.prepare_import, sent, prepared("prepare_import", sent))

    def commit_import(
        self,
        action_id: Annotated[str, Field(description="The action_id returned by prepare_import.")],
        decisions: Annotated[
            dict[str, Decision] | None,
            Field(
                description="One per flagged row key: skip, use_existing (a candidate) or "
                "create_anyway (with what the user said)."
            ),
        ] = None,
        ask_user: Annotated[
            bool,
            Field(
                description="Ask the user in the client's own dialog about each flagged row "
                "left out of decisions."
            ),
        ] = False,
    ) -> ToolResult:
        """Create the reviewed rows atomically, applying your decision to each flagged row.

        Outcomes and retries as commit_write; each row's record comes with a `resolution_id` to
        cite next.
        """
        # ask_user=True is served by workflow.mcp.elicitation instead (it awaits the client).
        arguments = {"action_id": action_id, "decisions": decisions}
        return self._run(write_actions.commit_import, arguments, after_commit)
