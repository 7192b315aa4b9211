"""What kind of Anchor ID a caller sent where another kind was expected.

Every Anchor ID is a UUID, so a resolution_id passed as an action_id, or a record ID passed as
a collection ID, is only "not found" to the lookup that refused it. A NOT_FOUND naming the kind
it expected is looked up once more among this workspace's IDs of the other kinds, and when it
is one of them the refusal says which, and what to do with it instead. Only rows the caller
could name anyway are looked at: this workspace, and this actor's own reviews and actions, so
the answer never reveals another workspace's IDs.
"""

from __future__ import annotations

from records.errors import ID_SOURCES, NOT_FOUND, AnchorError
from records.ids import is_valid_id
from records.models import Collection, Record, Relationship
from workflow.models import Agenda, PreparedAction, ReviewTicket
from workflow.scope import Scope

# A kind the ID turned out to be -> what it is, and what it is for.
WHAT_IT_IS = {
    "record": "a record ID: pass it as record_id (source_id / target_id in links)",
    "collection": "a collection ID: pass it as collection_id",
    "relationship": "a relationship ID: pass it as relationship_id to unlink_records",
    "discovery": "a discovery_id from discover_collections: cite it in a prepare tool's review_ids",
    "resolution": "a resolution_id from resolve_record: cite it in a prepare tool's review_ids; "
    "the record it resolved is its selected_record_id",
    "action": "an action_id from a prepare tool: pass it to the matching commit tool",
    "agenda": "an agenda ID: pass it as agenda_id to the agenda tools",
}


# In the order they are asked after the caller's own reviews, the kinds most often confused
# first: (kind, model, whether only the caller's own rows count).
LOOKUPS = (
    ("record", Record, False),
    ("collection", Collection, False),
    ("action", PreparedAction, True),
    ("relationship", Relationship, False),
    ("agenda", Agenda, False),
)
# An expected kind -> the kinds that count as it (a review is a discovery or a resolution).
SAME_KIND = {"review": {"discovery", "resolution"}}


def id_kind(scope: Scope, identifier: str) -> str | None:
    """What this ID names in the caller's scope, or None."""
    if not is_valid_id(identifier):
        return None
    mine = {"workspace_id": scope.workspace_id, "actor_id": scope.actor_id, "pk": identifier}
    review = ReviewTicket.objects.filter(**mine).values_list("kind", flat=True).first()
    if review:
        return str(review)
    for kind, model, own in LOOKUPS:
        only_own = {"actor_id": scope.actor_id} if own else {}
        if model.objects.filter(
            workspace_id=scope.workspace_id, pk=identifier, **only_own
        ).exists():
            return kind
    return None


def explain_not_found(scope: Scope, error: AnchorError) -> AnchorError:
    """`error` itself, or, when its ID is another kind of Anchor ID, the same refusal saying
    which kind it is (`details.got`) and what it is for."""
    expected = error.details.get("expected")
    identifier = error.details.get("id")
    if error.code != NOT_FOUND or not expected or not isinstance(identifier, str):
        return error
    got = id_kind(scope, identifier)
    if got is None or got == expected or got in SAME_KIND.get(expected, ()):
        return error
    field = error.details.get("field", "the argument")
    article = "an" if expected[0] in "aeiou" else "a"
    source = ID_SOURCES.get(expected)
    wanted = f" For {field}, {source}." if source else ""
    return AnchorError(
        NOT_FOUND,
        f"{field}: {identifier!r} is not {article} {expected} ID; it is {WHAT_IT_IS[got]}.{wanted}",
        **{**error.details, "got": got},
    )
