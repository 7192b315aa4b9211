"""Issue 7's pressure scenario through the in-process MCP client, with whole-database checks."""

from __future__ import annotations

from tests.agendas import scenario
from tests.agendas.helpers import driver
from workflow.models.agendas import AgendaItem


def test_pressure_scenario_through_the_tools(db):
    d = driver()
    seeded = scenario.seed_findings(d)
    scenario.first_half(d, seeded)
    agenda_id = d.agenda_id
    scenario.change_finding_meanwhile(d, seeded)
    scenario.second_half(d, seeded, agenda_id)
    assert set(d.refusals) == {
        "PRESENTATION_REQUIRED",
        "INVALID_INPUT",
        "AGENDA_ORDER",
        "STALE_CURSOR",
        "SYNTHESIS_REQUIRED",
    }
    # Every conclusion revision is kept: item 3 has none before the child, then the synthesis.
    item3 = AgendaItem.objects.get(layer__kind="root", number=3)
    assert list(item3.conclusions.values_list("kind", flat=True)) == ["synthesis"]
