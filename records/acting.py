"""Who acted, in one wording (`acted_by`): a person, a configured agent, or an agent for a person.

Over HTTP an agent acts for the person whose credential it holds: the row keeps the person's
actor ID and the credential (`oauth:<id>` or `token:<id>`) with its name as it was then."""

from __future__ import annotations

import re
from typing import Protocol

from django.db.models import Q

OAUTH = "oauth"
TOKEN = "token"
PERSON_PREFIX = "user:"
# "agent (Claude Code) for user:dana"; a person's actor ID holds no space.
_SHOWN = re.compile(r"agent \((?P<name>.*)\) for (?P<actor>\S+)")
_TOKEN_NAME = "token: "


class Acted(Protocol):
    actor_id: str
    credential: str | None
    credential_name: str | None


def credential_key(kind: str, pk: object) -> str:
    return f"{kind}:{pk}"


def acted_by(row: Acted) -> str:
    """`agent (Claude Code) for user:dana` (OAuth), `agent (token: laptop) for user:dana`
    (personal token); without a credential, the actor ID as configured or signed in."""
    if not row.credential:
        return row.actor_id
    name = row.credential_name or row.credential
    if row.credential.startswith(f"{TOKEN}:"):
        name = f"{_TOKEN_NAME}{name}"
    return f"agent ({name}) for {row.actor_id}"


def by_person(row: Acted) -> bool:
    """A person's own write (in the admin), not an agent acting for them."""
    return row.actor_id.startswith(PERSON_PREFIX) and not row.credential


def agents_acts() -> Q:
    """The rows an agent wrote: any with a credential, and any of a configured (stdio) actor."""
    return Q(credential__isnull=False) | ~Q(actor_id__startswith=PERSON_PREFIX)


def acted_by_lookup(shown: str) -> Q:
    """The rows whose actor reads `shown`: an actor ID (a person's own and their agents' rows)
    or an agent as `acted_by` words it (that credential's rows only)."""
    by_actor = Q(actor_id=shown)
    match = _SHOWN.fullmatch(shown)
    if match is None:
        return by_actor
    kind, name = OAUTH, match["name"]
    if name.startswith(_TOKEN_NAME):
        kind, name = TOKEN, name.removeprefix(_TOKEN_NAME)
    return by_actor | Q(
        actor_id=match["actor"], credential__startswith=f"{kind}:", credential_name=name
    )
