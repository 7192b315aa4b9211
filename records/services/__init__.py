"""Every mutation of the store: each validates, versions, audits, and runs in one transaction.

Callers pass a WriteContext (who acts, in which workspace, why) and import this package, never
its modules (import-linter holds them to it). Counters and the search index move by trigger.
`audit` is for a write decided outside the store (a person's decision on a prepared action)."""

from records.services.audit_trail import (
    WriteContext,
    audit,
    workspace_ensure,
    written_records,
)
from records.services.clarification_reviews import clarification_review_create
from records.services.collections import (
    CollectionFields,
    collection_alias_add,
    collection_alias_remove,
    collection_create,
    collection_set_requires_approval,
    collection_update,
)
from records.services.many import (
    NewLink,
    NewRecord,
    RecordUpdate,
    can_link_many,
    record_create_many,
    record_update_many,
    relationship_create_many,
)
from records.services.memberships import (
    access_token_create,
    access_token_revoke,
    access_token_touch,
    access_tokens_revoke_when_deactivated,
    workspace_membership_add,
    workspace_membership_remove,
)
from records.services.record_changes import (
    lock_record,
    lock_records,
    record_alias_add,
    record_alias_remove,
    record_archive,
    record_create,
    record_rename,
    record_update,
)
from records.services.relationships import relationship_create, relationship_delete
from records.services.self_mappings import self_mapping_remove, self_mapping_set

__all__ = [
    "CollectionFields",
    "NewLink",
    "NewRecord",
    "RecordUpdate",
    "WriteContext",
    "access_token_create",
    "access_token_revoke",
    "access_tokens_revoke_when_deactivated",
    "access_token_touch",
    "audit",
    "can_link_many",
    "clarification_review_create",
    "collection_alias_add",
    "collection_alias_remove",
    "collection_create",
    "collection_set_requires_approval",
    "collection_update",
    "lock_record",
    "lock_records",
    "record_alias_add",
    "record_alias_remove",
    "record_archive",
    "record_create",
    "record_create_many",
    "record_update_many",
    "record_rename",
    "record_update",
    "relationship_create",
    "relationship_create_many",
    "relationship_delete",
    "self_mapping_remove",
    "self_mapping_set",
    "workspace_ensure",
    "written_records",
    "workspace_membership_add",
    "workspace_membership_remove",
]
