"""Every read of the store. Selectors take keyword-only arguments, filter by workspace first, and
raise AnchorError naming the field and the fix; callers only wrap results."""

from records.selectors.aggregation import aggregate
from records.selectors.catalog import collection_entry, collection_list
from records.selectors.clarification_reviews import ClarificationVerdict, clarification_reviews_for
from records.selectors.context import record_context, record_contexts
from records.selectors.history import collection_history, record_history
from records.selectors.memberships import (
    TOKEN_PATTERN,
    access_token_find,
    token_digest,
    user_for_username,
)
from records.selectors.pickers import collection_choices, record_choices
from records.selectors.scoped import check_active, in_workspace, values_by_id
from records.selectors.search import search_records
from records.selectors.traversal import traverse

__all__ = [
    "ClarificationVerdict",
    "TOKEN_PATTERN",
    "access_token_find",
    "aggregate",
    "check_active",
    "clarification_reviews_for",
    "collection_choices",
    "collection_entry",
    "collection_history",
    "collection_list",
    "in_workspace",
    "record_choices",
    "record_context",
    "record_contexts",
    "record_history",
    "search_records",
    "token_digest",
    "traverse",
    "user_for_username",
    "values_by_id",
]
