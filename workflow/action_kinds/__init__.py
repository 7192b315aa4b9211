"""The kinds of prepared action, one definition each, looked up by the action's kind.

A single operation (prepare_write), a batch of them (prepare_batch_write) and a reviewed import
(prepare_import) share one lifecycle (workflow.actions) and one review in the admin; what
differs between them (how each is prepared, checked, applied and rechecked, what it touches,
how it is summarised and shown) is its definition's, so nothing else branches on the kind.
"""

from workflow.action_kinds import batch, imports, single
from workflow.action_kinds.base import Kind, Prepared, Write

__all__ = ["KINDS", "SINGLE", "Kind", "Prepared", "Write", "kind_for_tool", "kind_of"]

SINGLE = single.KIND
KINDS: dict[str, Kind] = {k.name: k for k in (batch.KIND, imports.KIND)}


def kind_of(operation: str) -> Kind:
    """The definition of an action by its stored `operation`: any name but a kind's is a
    single operation's."""
    return KINDS.get(operation, SINGLE)


def kind_for_tool(tool: str) -> Kind:
    return next(k for k in (SINGLE, *KINDS.values()) if tool in (k.prepare_tool, k.commit_tool))
