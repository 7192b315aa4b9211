"""The client dialog's choice titles tell namesakes apart (pure helpers)."""

from workflow.client_confirmation import _choice_title, _differing


def _titles(candidates):
    differ = _differing(candidates)
    shared = frozenset.intersection(*(frozenset(c["links"]) for c in candidates))
    return [_choice_title(c, {"col": "people"}, differ, shared) for c in candidates]


def test_two_rahuls_show_the_data_and_links_that_differ():
    rahuls = [
        {
            "title": "Rahul",
            "collection_id": "col",
            "data": {"city": "Pune", "team": "infra"},
            "links": ["Acme", "Hiring"],
        },
        {
            "title": "Rahul",
            "collection_id": "col",
            "data": {"city": "Pune", "team": "design"},
            "links": ["Hiring"],
        },
    ]
    assert _titles(rahuls) == [
        "Rahul (people, team: infra, linked to Acme)",
        "Rahul (people, team: design)",
    ]


def test_two_records_that_read_the_same_get_the_same_title():
    same = [{"title": "Rahul", "collection_id": "col", "data": {"team": "infra"}, "links": []}] * 2
    assert len(set(_titles(same))) == 1
