"""Cursor tokens: bound to agenda, revision, deepest layer and item; stable without a secret."""

from __future__ import annotations

from typing import Any

from workflow.agendas.presentation import cursor_token, token_revision, tokens_match

# Keyword arguments for cursor_token; Any because the tests swap in values key by key.
BASE: dict[str, Any] = {
    "agenda_id": "a1",
    "revision": 7,
    "layer_id": "l1",
    "item_id": "i1",
    "nonce": "n1",
}


def test_a_token_is_a_pure_function_of_position_and_nonce():
    # No SECRET_KEY involved, so a new server process computes the same token.
    assert cursor_token(**BASE) == cursor_token(**BASE)
    assert cursor_token(**BASE).startswith("r7.")


def test_every_part_of_the_position_changes_the_token():
    token = cursor_token(**BASE)
    for key, other in [
        ("agenda_id", "a2"),
        ("revision", 8),
        ("layer_id", "l2"),
        ("item_id", "i2"),
        ("nonce", "n2"),
    ]:
        assert cursor_token(**{**BASE, key: other}) != token, key
    assert cursor_token(**{**BASE, "item_id": None}) != token


def test_the_claimed_revision_only_explains_refusals():
    assert token_revision("r12.abc") == 12
    assert token_revision("nonsense") is None
    assert token_revision("rx.abc") is None
    assert tokens_match("r1.abc", "r1.abc")
    assert not tokens_match("r1.abc", "r1.abd")


def test_each_mutation_issues_a_new_token_and_reads_do_not(db):
    from tests.agendas.helpers import driver, started

    d = driver()
    first = started(d, acknowledge=False)["cursor_token"]
    assert d.ok("agenda_view", {"agenda_id": d.agenda_id})["cursor_token"] == first
    d.acknowledge(d.ok("agenda_view", {"agenda_id": d.agenda_id}))
    second = d.token
    assert second != first
    d.step("complete", "done")
    assert d.token not in (first, second)
