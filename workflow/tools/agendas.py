"""Agenda tools: freeze a list and work through it item by item, with cursor tokens."""

from typing import Annotated, Literal

from mcp_server import MCPToolset
from pydantic import Field

from workflow.agendas import layers, lifecycle, reads, start, steps, sync
from workflow.envelope import ToolResult, run_tool
from workflow.scope import scope_for_request

AgendaId = Annotated[str, Field(description="The agenda_id from agenda_start or agenda_view.")]
CursorToken = Annotated[
    str,
    Field(
        description="cursor_token from the latest agenda result (any agenda tool, or "
        "agenda_view). Every success returns a new one; stale tokens are refused."
    ),
]
SourceReference = Annotated[
    str | None,
    Field(
        description="Where the list comes from: message, file and line, review, search. "
        "Required unless unverified_source_reason is given."
    ),
]
UnverifiedReason = Annotated[
    str | None,
    Field(description="Only when the list has no checkable source: say why. Omit otherwise."),
]
Snapshot = Annotated[
    list[str],
    Field(
        description="The exact list, 1-100 items in source order, one string per item as "
        "written, without its number. Frozen: it can never be edited later."
    ),
]


class AgendaTools(MCPToolset):
    def agenda_start(
        self,
        title: Annotated[str, Field(description="What the agenda is about (1-300 chars).")],
        items: Annotated[
            list[str] | None,
            Field(
                description="The exact list, 1-100 items in source order, one string per "
                "item without its number. Omit when passing record_ids."
            ),
        ] = None,
        record_ids: Annotated[
            list[str] | None,
            Field(
                description="Instead of items: IDs of active records of one collection (e.g. "
                "open todos), in agenda order. Their titles become the items and their "
                "outcomes can be synced back with agenda_sync_records."
            ),
        ] = None,
        source_reference: SourceReference = None,
        unverified_source_reason: UnverifiedReason = None,
    ) -> ToolResult:
        """Start an agenda: freeze a concrete list the user wants handled one item by one.

        Use only when there is a concrete list AND item-by-item intent ("one by one", "next",
        "go through these"); not for ordinary explanatory lists. Items are numbered 1..n and
        never added, dropped or reordered; item 1 becomes current.
        Loop: show the returned whole_picture.text to the user, then agenda_acknowledge its
        presentation_id; discuss the current item; agenda_step complete/defer/block; agenda_step
        next. Every call needs the latest cursor_token. Each result's next_step says what to do.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: start.agenda_start(
                scope,
                title=title,
                items=items,
                record_ids=record_ids,
                source_reference=source_reference,
                unverified_source_reason=unverified_source_reason,
            )
        )

    def agenda_view(
        self,
        agenda_id: Annotated[
            str | None, Field(description="Omit to list this workspace's agendas.")
        ] = None,
        view: Annotated[
            Literal["picture", "health"],
            Field(
                description="picture: the whole tree with states, the cursor_token and any "
                "pending presentation_id. health: a check of structure and event chain."
            ),
        ] = "picture",
    ) -> ToolResult:
        """Read agendas without changing them: the list, one agenda's whole picture, or health.

        Call at the start of a new conversation before continuing an agenda ("next" means the
        next open item of the deepest active list), and whenever a token was refused. The
        picture includes the current cursor_token, the current item, next_step and, when one
        is waiting, pending_presentation_id (show whole_picture.text, then acknowledge it).
        health reports problems (broken event chain, edits outside the tools, bad structure)
        and repairs nothing.
        """
        scope = scope_for_request(self.request)
        return run_tool(lambda: reads.view_agenda(scope, agenda_id=agenda_id, view=view))

    def agenda_acknowledge(
        self,
        agenda_id: AgendaId,
        cursor_token: CursorToken,
        presentation_id: Annotated[
            str, Field(description="The presentation_id of the whole picture the user saw.")
        ],
    ) -> ToolResult:
        """Confirm the user has seen the whole picture; progress is refused until you do.

        Start, resume, present, opening a list and returning from one each issue a
        presentation_id. Acknowledge only after whole_picture.text is visible to the user (if
        your reply is sent after this call, acknowledge at the start of the next turn).
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: lifecycle.acknowledge(
                scope,
                agenda_id=agenda_id,
                cursor_token=cursor_token,
                presentation_id=presentation_id,
            )
        )

    def agenda_step(
        self,
        agenda_id: AgendaId,
        cursor_token: CursorToken,
        action: Annotated[
            Literal["complete", "defer", "block", "revise", "next"],
            Field(
                description="complete / defer / block: resolve the current item. revise: "
                "replace a completed item's conclusion (every revision is kept), or record "
                "the parent's synthesis after a child list returned. next: move to the next "
                "open item of the deepest list."
            ),
        ],
        text: Annotated[
            str | None,
            Field(
                description="The conclusion (complete, revise) or reason (defer, block): real "
                "text, never blank. Omit for next."
            ),
        ] = None,
        item_number: Annotated[
            int | None,
            Field(
                description="revise only: number of an earlier item in the current list. "
                "Omit for the current item.",
                ge=1,
            ),
        ] = None,
    ) -> ToolResult:
        """Work the deepest list: resolve the current item, revise a conclusion, or advance.

        The current item must be completed, deferred or blocked before next. After
        agenda_return from a child list, the parent item awaits synthesis: revise it with a
        conclusion that accounts for the child outcomes; next is refused (SYNTHESIS_REQUIRED)
        until then. Refusals change nothing: STALE_CURSOR (re-read the state in the error and
        check the command still fits), PRESENTATION_REQUIRED, AGENDA_ORDER, INVALID_INPUT.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: steps.step(
                scope,
                agenda_id=agenda_id,
                cursor_token=cursor_token,
                action=action,
                text=text,
                item_number=item_number,
            )
        )

    def agenda_open_layer(
        self,
        agenda_id: AgendaId,
        cursor_token: CursorToken,
        kind: Annotated[
            Literal["child", "interruption"],
            Field(
                description="child: sub-items of the current item (numbered 3.1, 3.2...). "
                "interruption: an unrelated urgent list (i1.1...) that returns to where you "
                "were."
            ),
        ],
        items: Snapshot,
        source_reference: SourceReference = None,
        unverified_source_reason: UnverifiedReason = None,
    ) -> ToolResult:
        """Open a new frozen list on top of the current one; "next" then works inside it.

        Its first item becomes current and a whole picture is issued to show and acknowledge.
        Finish it with agenda_return once every item is resolved.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: layers.open_layer(
                scope,
                agenda_id=agenda_id,
                cursor_token=cursor_token,
                kind=kind,
                items=items,
                source_reference=source_reference,
                unverified_source_reason=unverified_source_reason,
            )
        )

    def agenda_return(
        self,
        agenda_id: AgendaId,
        cursor_token: CursorToken,
        outcome: Annotated[
            str, Field(description="What this list concluded, in a few sentences; not blank.")
        ],
    ) -> ToolResult:
        """Close the deepest child or interruption list (all items resolved) and go back.

        Returns the whole picture with a new presentation_id to show and acknowledge. After a
        child list the parent item awaits synthesis (agenda_step action=revise); after an
        interruption you continue where you were.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: layers.return_layer(
                scope, agenda_id=agenda_id, cursor_token=cursor_token, outcome=outcome
            )
        )

    def agenda_control(
        self,
        agenda_id: AgendaId,
        cursor_token: CursorToken,
        action: Annotated[
            Literal["present", "pause", "resume", "abandon", "finish"],
            Field(
                description="present: issue the whole picture again. pause / resume: suspend "
                "the whole agenda and continue later (any conversation or process). abandon: "
                "stop for good. finish: close when every root item is resolved."
            ),
        ],
        text: Annotated[
            str | None,
            Field(
                description="finish: closing summary (required). abandon: reason (required). "
                "pause: optional note. Omit otherwise."
            ),
        ] = None,
    ) -> ToolResult:
        """Present, pause, resume, abandon or finish an agenda.

        Pause and abandon work even while a presentation is unacknowledged. Resume and present
        return a whole picture to show and acknowledge. Finish and abandon return a closure
        with the unresolved (deferred, blocked) items; keep those that need long-term memory as
        records, and if the agenda has bound records call agenda_sync_records.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: lifecycle.control(
                scope, agenda_id=agenda_id, cursor_token=cursor_token, action=action, text=text
            )
        )

    def agenda_sync_records(
        self,
        agenda_id: AgendaId,
        cursor_token: CursorToken,
        status_values: Annotated[
            dict[str, str] | None,
            Field(
                description="Optional: also set data.status per outcome, e.g. "
                '{"completed": "done", "blocked": "blocked"}. Unlisted states keep status.'
            ),
        ] = None,
    ) -> ToolResult:
        """Write a paused or closed agenda's outcomes back to its bound records, guarded.

        Each resolved item's record gets data.agenda_outcome (state, conclusion or reason)
        through the audited prepare/commit path. A record changed since the agenda bound it is
        reported as `changed` and left alone: read it and decide with the user. Safe to repeat.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: sync.sync_records(
                scope,
                agenda_id=agenda_id,
                cursor_token=cursor_token,
                status_values=status_values,
            )
        )
