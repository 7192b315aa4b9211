"""The store's models: the data itself (store), its embeddings for search by meaning (meaning)
and who may reach it over HTTP (membership)."""

from records.models.meaning import RecordEmbedding
from records.models.membership import AccessToken, WorkspaceMembership
from records.models.store import (
    AuditEvent,
    ClarificationReview,
    Collection,
    CollectionAlias,
    CollectionCount,
    CollectionCountChange,
    NameChange,
    Record,
    RecordAlias,
    RecordVersion,
    Relationship,
    RevisionCounter,
    SelfMapping,
    Workspace,
)

__all__ = [
    "AccessToken",
    "AuditEvent",
    "ClarificationReview",
    "Collection",
    "CollectionAlias",
    "CollectionCount",
    "CollectionCountChange",
    "NameChange",
    "Record",
    "RecordAlias",
    "RecordEmbedding",
    "RecordVersion",
    "Relationship",
    "RevisionCounter",
    "SelfMapping",
    "Workspace",
    "WorkspaceMembership",
]
