"""Agenda tools: freeze a list and work through it item by item, with cursor tokens."""

from typing import Annotated, Literal

from pydantic import Field

from workflow.agendas import guard, lifecycle, reads, steps, sync
from workflow.mcp.envelope import ToolResult
from workflow.mcp.tools.base import Toolset

# Shared parameter descriptions: short, because every tool repeats them in the tool list.
AgendaId = Annotated[str, Field(description="From agenda_start or agenda_view.")]
CursorToken = Annotated[
    str,
    Field(
        description="The cursor_token of this agenda's latest reply; every change issues a new one."
    ),
]
SNAPSHOT = "The exact list in source order, without numbers (max 100)."
Snapshot = Annotated[list[str], Field(description=SNAPSHOT)]
SourceReference = Annotated[
    str | None,
    Field(
        description="Where the list comes from (message, file, review). Required unless "
        "unverified_source_reason."
    ),
]
UnverifiedReason = Annotated[
    str | None, Field(description="Only if the list has no checkable source: why.")
]


class AgendaTools(Toolset):
    def agenda_start(
        self,
        title: Annotated[str, Field(description="What the agenda is about.")],
        items: Annotated[list[str] | None, Field(description=SNAPSHOT)] = None,
        record_ids: Annotated[
            list[str] | None,
            Field(
                description="Instead of items: up to 100 active records of one collection, in "
                "order, none held by another agenda (open, or closed with outcomes not yet "
                "synced); their titles become the items and outcomes sync back to them."
            ),
        ] = None,
        source_reference: SourceReference = None,
        unverified_source_reason: UnverifiedReason = None,
    ) -> ToolResult:
        """Freeze a concrete list the user wants handled item by item, as a new agenda.

        Only for a concrete list plus item-by-item intent ("one by one", "next"). Items stay
        numbered 1..n. Loop: show whole_picture.text, agenda_acknowledge it, discuss the
        current item, agenda_step complete/defer/block, then next. Follow next_step.
        """
        return self._run(steps.agenda_start, locals())

    def agenda_view(
        self,
        agenda_id: Annotated[str | None, Field(description="Omit to list agendas.")] = None,
        view: Annotated[
            Literal["picture", "health"],
            Field(
                description="picture (default) or health: the event-chain check with the "
                "hashes agenda_repair needs."
            ),
        ] = "picture",
        unfold_layer: Annotated[
            str | None, Field(description='A folded list to show in full, e.g. "3" or "i1".')
        ] = None,
    ) -> ToolResult:
        """Read agendas, changing nothing: the list, one agenda's whole picture, or its health.

        Use at a conversation's start and after a refused token: picture gives the
        cursor_token and next_step.
        """
        return self._run(reads.view_agenda, locals())

    def agenda_acknowledge(
        self,
        agenda_id: AgendaId,
        cursor_token: CursorToken,
        presentation_id: Annotated[
            str, Field(description="The presentation_id given with that picture.")
        ],
    ) -> ToolResult:
        """Confirm the user has seen the whole picture; progress is refused until then.

        Acknowledge only once the whole_picture.text of start, open_layer, return, resume,
        present or repair is visible to the user (otherwise at the start of the next turn).
        Refused when no picture is pending or for another presentation_id.
        """
        return self._run(lifecycle.acknowledge, locals())

    def agenda_step(
        self,
        agenda_id: AgendaId,
        cursor_token: CursorToken,
        action: Annotated[
            Literal["complete", "defer", "block", "revise", "next", "revisit"],
            Field(
                description="complete, defer, block: the current item. revise: a completed "
                "item's conclusion or the parent synthesis. next: the next open item. "
                "revisit: make a deferred or blocked item current again."
            ),
        ],
        text: Annotated[
            str | None,
            Field(
                description="Conclusion (complete, revise) or reason (defer, block); not "
                "blank. Omit for next, revisit."
            ),
        ] = None,
        item_number: Annotated[
            int | None,
            Field(
                description="An item of the current list: required for revisit; revise "
                "defaults to the current item.",
                ge=1,
            ),
        ] = None,
    ) -> ToolResult:
        """Complete, defer, block or revise items of the deepest open list, or move to another.

        complete, defer or block the current item before next. After a child list returns,
        revise the parent with a synthesis of its outcomes before next. Refusals change
        nothing; after STALE_CURSOR check the returned current state.
        """
        return self._run(steps.step, locals())

    def agenda_open_layer(
        self,
        agenda_id: AgendaId,
        cursor_token: CursorToken,
        kind: Annotated[
            Literal["child", "interruption"],
            Field(
                description="child: sub-items of the current item (3.1). interruption: an "
                "urgent unrelated list (i1.1)."
            ),
        ],
        items: Snapshot,
        source_reference: SourceReference = None,
        unverified_source_reason: UnverifiedReason = None,
    ) -> ToolResult:
        """Open a child list (the current item's sub-items) or an interruption; next works in it.

        Show and acknowledge the new picture; agenda_return closes it once all items are
        resolved. Lists nest at most 8 deep.
        """
        return self._run(steps.open_layer, locals())

    def agenda_return(
        self,
        agenda_id: AgendaId,
        cursor_token: CursorToken,
        outcome: Annotated[str, Field(description="What the list concluded; not blank.")],
    ) -> ToolResult:
        """Close the deepest child or interruption list and go back to its parent item.

        Every item must be resolved (the root list ends with agenda_control finish). Show and
        acknowledge the new picture; after a child list, revise the parent with the synthesis
        before next.
        """
        return self._run(steps.return_layer, locals())

    def agenda_control(
        self,
        agenda_id: AgendaId,
        cursor_token: CursorToken,
        action: Annotated[
            Literal["present", "pause", "resume", "abandon", "finish"],
            Field(description="present shows the picture again."),
        ],
        text: Annotated[
            str | None,
            Field(
                description="Closing summary (finish) or reason (abandon), required; "
                "optional note (pause); omit for present, resume."
            ),
        ] = None,
    ) -> ToolResult:
        """Present the picture again, pause, resume, abandon or finish an agenda.

        Pause and abandon work before acknowledgement; resume (of a paused agenda) and present
        return a picture to show and acknowledge. Finish (every root item resolved, no child or
        interruption list open) and abandon close the agenda for good and list the unresolved
        items.
        """
        return self._run(lifecycle.control, locals())

    def agenda_sync_records(
        self,
        agenda_id: AgendaId,
        cursor_token: CursorToken,
        status_values: Annotated[
            dict[str, str] | None,
            Field(
                description="Optional data.status per state (completed, deferred, blocked), "
                'e.g. {"completed": "done"}.'
            ),
        ] = None,
    ) -> ToolResult:
        """Write a paused or closed agenda's outcomes to its bound records, guarded and audited.

        For agendas started with record_ids, while sync_state is pending. Sets
        data.agenda_outcome and, with status_values, data.status; a record changed or archived
        since binding is reported, not overwritten, and a write awaiting approval is read again
        on the next sync. Safe to repeat: a synced item is written again only if revised.
        """
        return self._run(sync.sync_records, locals())

    def agenda_repair(
        self,
        agenda_id: AgendaId,
        expected_state_hash: Annotated[str, Field(description="state_hash from view=health.")],
        expected_event_log_hash: Annotated[
            str, Field(description="event_log_hash from view=health.")
        ],
        reason: Annotated[str, Field(description="Why the current state is right; not blank.")],
    ) -> ToolResult:
        """Re-seal an agenda whose event chain failed its health check, on explicit request.

        Show the problems to the user first. Appends a repair event and rewrites nothing; an
        active agenda's new picture needs acknowledging. Refused if healthy, on stale hashes, or
        if lists or items are unsound.
        """
        return self._run(guard.repair, locals())
