"""A record's links as lists a person reads, capped so a hub record's page stays small.

Each direction shows at most LINK_LIMIT links (3,000 drawn as form rows were megabytes and
more fields than Django accepts in one POST); the rest is a count and a filtered list's link."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse

from records.models import Record, Relationship

LINK_LIMIT = 50
ORDER = ("relationship_type", "created_at", "id")


@dataclass
class LinkList:
    links: list[Relationship]
    total: int
    more_url: str

    @property
    def hidden(self) -> int:
        return self.total - len(self.links)


def _direction(record: Record, direction: str, limit: int) -> LinkList:
    own, other = ("source", "target") if direction == "out" else ("target", "source")
    rows = Relationship.objects.filter(**{own: record}).select_related(f"{other}__collection")
    url = f"{reverse('admin:records_relationship_changelist')}?{own}__id__exact={record.pk}"
    shown = list(rows.order_by(*ORDER)[: limit + 1])
    total = len(shown) if len(shown) <= limit else rows.count()
    return LinkList(shown[:limit], total, url)


def record_links(record: Record, limit: int = LINK_LIMIT) -> tuple[LinkList, LinkList]:
    """(outgoing, incoming), each at most `limit` links; counted only when there are more."""
    return _direction(record, "out", limit), _direction(record, "in", limit)
