"""Helpers for in-process agenda tests: whole-database snapshots and a started agenda."""

from __future__ import annotations

from typing import Any

from tests.agendas.driver import Driver
from tests.mcp_client import call_tool
from tests.workflow.helpers import store_snapshot
from workflow.agendas.health import state_document
from workflow.models.agendas import (
    Agenda,
    AgendaConclusion,
    AgendaEvent,
    AgendaItem,
    AgendaLayer,
)

LIST = ["Rename the settings module", "Drop Python 3.10", "Pin the MCP SDK"]


def database_snapshot() -> dict[str, Any]:
    """Every store row count and record state, every agenda row count and agenda state."""
    snapshot = store_snapshot()
    for model in (Agenda, AgendaLayer, AgendaItem, AgendaConclusion, AgendaEvent):
        snapshot[model.__name__] = model.objects.count()
    snapshot["agendas"] = [state_document(a) for a in Agenda.objects.order_by("id")]
    return snapshot


def driver() -> Driver:
    return Driver(call_tool, snapshot=database_snapshot)


def started(d: Driver, items: list[str] | None = None, *, acknowledge: bool = True) -> dict:
    result = d.ok(
        "agenda_start",
        {"title": "Release chores", "items": items or LIST, "source_reference": "issue 12"},
    )
    if acknowledge:
        return d.acknowledge(result)
    return result
