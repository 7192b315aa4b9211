"""MCP prompts for the everyday starts (slash commands in clients such as Claude Code): each a
short user message setting the agent on Anchor's path; none reads or writes anything itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp import types

from workflow.mcp import sdk


@dataclass(frozen=True)
class Prompt:
    name: str
    title: str
    description: str
    text: str
    argument: types.PromptArgument | None = None
    # The tools its text tells the agent to call: offered only when all of them are served.
    needs: frozenset[str] = frozenset()

    def offered(self) -> bool:
        return all(sdk.served_tool(name) is not None for name in self.needs)

    def listed(self) -> types.Prompt:
        return types.Prompt(
            name=self.name,
            title=self.title,
            description=self.description,
            arguments=[self.argument] if self.argument else [],
        )


PROMPTS = {
    prompt.name: prompt
    for prompt in (
        Prompt(
            name="catch_up",
            title="Catch up on this workspace",
            description="Orient in Anchor: collections, open agendas, writes awaiting a person, "
            "recent changes.",
            text=(
                "Catch me up on what Anchor holds for this project. Call workspace_digest first; "
                "then summarise the collections, any open or paused agendas (offer to resume "
                "one), writes waiting for a person's approval, and what changed recently; when "
                "it shows unread changes, read them with list_changes since_last_read=true, "
                "mark_read=true. Do not write anything."
            ),
            needs=frozenset({"workspace_digest", "list_changes"}),
        ),
        Prompt(
            name="work_through_list",
            title="Work through a list",
            description="Start an agenda over a list and take its items one by one.",
            text=(
                "Work through this list with me item by item, using an Anchor agenda: call "
                "agenda_start with the list exactly as given (do not add, drop or reorder "
                "items), present the whole picture, then follow each result's next_step. "
                "Conclude each item only with what we actually decided.\n\nThe list:\n{items}"
            ),
            needs=frozenset({"agenda_start"}),
            argument=types.PromptArgument(
                name="items",
                description="The list to work through, one item per line.",
                required=True,
            ),
        ),
        Prompt(
            name="remember",
            title="Remember this",
            description="Store what the user says on the guarded path: resolve, prepare, commit.",
            text=(
                "Record this in Anchor: {note}\n\nResolve every name it mentions with "
                "resolve_record (ask me only if a name is ambiguous or new and could be a "
                "typo), discover the collection if none fits, prepare the write with the "
                "review IDs, commit it, and tell me in one sentence what was stored."
            ),
            needs=frozenset({"resolve_record", "prepare_write", "commit_write"}),
            argument=types.PromptArgument(
                name="note", description="What to remember, in the user's words.", required=True
            ),
        ),
    )
}


async def list_prompts() -> list[types.Prompt]:
    return [prompt.listed() for prompt in PROMPTS.values() if prompt.offered()]


async def get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
    prompt = PROMPTS.get(name)
    if prompt is None or not prompt.offered():
        shown = ", ".join(p.name for p in PROMPTS.values() if p.offered())
        raise sdk.invalid_params(f"Unknown prompt {name[:100]!r}; prompts/list shows: {shown}.")
    values = dict(arguments or {})
    text = prompt.text
    if prompt.argument is not None:
        value = values.get(prompt.argument.name, "")
        if prompt.argument.required and not value.strip():
            raise sdk.invalid_params(
                f"Prompt {name} needs the argument {prompt.argument.name!r}: "
                f"{prompt.argument.description}"
            )
        text = text.replace("{" + prompt.argument.name + "}", value)
    return types.GetPromptResult(
        description=prompt.description,
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        ],
    )
