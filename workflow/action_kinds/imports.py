"""A reviewed import (prepare_import, commit_import): many new records into one collection,
duplicate-checked on the server (workflow.imports), with one decision for each flagged row at
commit. Its own duplicate review goes stale when a name in the collection changes."""

from __future__ import annotations

from typing import Any

from django.db.models.fields.json import KeyTransform

from records import validation as v
from records.approval import Touched
from records.counters import names_key
from records.services import WriteContext
from workflow import evidence, imports
from workflow.action_kinds.base import JSONArrayLength, Kind, Prepared
from workflow.models import PreparedAction, ReviewTicket
from workflow.resolution import resolve_by_ids
from workflow.scope import Scope
from workflow.tickets import clarification_text, load_tickets, parse_review_ids


def _link_ends(arguments: dict[str, Any]) -> set[str]:
    """The existing records its links name, and those rows decided use_existing."""
    ends = {
        str(end["record_id"])
        for link in arguments.get("links") or []
        for end in (link.get("source", {}), link.get("target", {}))
        if end.get("record_id")
    }
    decided = (arguments.get("decisions") or {}).values()
    return ends | {str(d["record_id"]) for d in decided if d.get("record_id")}


class Import(Kind):
    name = "import"
    prepare_tool = "prepare_import"
    commit_tool = "commit_import"
    count = JSONArrayLength(KeyTransform("rows", "arguments"))
    shows_events = False  # its stored outcome names what each row became
    review_view = "workflow.admin.action_review.import_view"

    def prepare(
        self,
        scope: Scope,
        *,
        collection_id: Any,
        rows: Any,
        decision_reason: Any,
        links: Any = None,
        review_ids: Any = None,
        clarification: Any = None,
    ) -> Prepared:
        reason = v.description(decision_reason, "decision_reason")
        collection, parsed_rows, parsed_links = imports.parse_import(
            scope, {"collection_id": collection_id, "rows": rows, "links": links}
        )
        ids = parse_review_ids(review_ids) if review_ids else []
        tickets = load_tickets(scope, ids)
        reviewed, revision = imports.review_rows(scope.workspace_id, collection.pk, parsed_rows)
        action = PreparedAction(
            operation=self.name,
            arguments={
                "collection_id": collection.pk,
                "rows": parsed_rows,
                "links": parsed_links,
                "reviewed": reviewed,
                "decisions": None,
            },
            review_ids=ids,
            decision_reason=reason,
            clarification=clarification_text(clarification),
        )
        head = {
            "collection_id": collection.pk,
            "rows": reviewed,
            "needs_decision": [r["key"] for r in reviewed if r["status"] != imports.CLEAN],
        }
        # Stale if any name in the collection changes before commit.
        return Prepared(action, tickets, head, {names_key(collection.pk): revision})

    def check(self, scope: Scope, action: PreparedAction, tickets: list[ReviewTicket]) -> Touched:
        collection, _, links = imports.parse_import(scope, action.arguments)
        ends = (end for link in links for end in (link["source"], link["target"]))
        linked = sorted({end["record_id"] for end in ends if "record_id" in end})
        for record_id in linked:  # reviewed, like the records of any other write
            evidence.record_reviewed(tickets, record_id, action.clarification, "links")
        # The rows' collection and every existing record a link names. (A row decided
        # use_existing is a record of the rows' collection: its candidates come from it alone.)
        return Touched.of(collections=[collection.pk], records=linked)

    def apply(self, ctx: WriteContext, action: PreparedAction, *, approved: bool) -> dict[str, Any]:
        return imports.apply_import(ctx, action.arguments)

    def before_commit(
        self,
        action: PreparedAction,
        *,
        decisions: Any = None,
        confirmed: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        """`confirmed`: the rows the user decided in the client."""
        reviewed = action.arguments["reviewed"]
        action.arguments = {
            **action.arguments,
            "decisions": imports.parse_decisions(decisions, reviewed, confirmed),
        }

    def after_commit(self, scope: Scope, outcome: dict[str, Any]) -> dict[str, Any]:
        """A review of every row's record, so a follow-up link cites them at once."""
        if outcome["status"] != "committed":
            return outcome
        rows = outcome["result"]["rows"]
        named = [row["record_id"] for row in rows.values() if row.get("record_id")]
        reviews = resolve_by_ids(scope, list(dict.fromkeys(named)))
        with_reviews = {
            key: {**row, "resolution_id": reviews[row["record_id"]]}
            if row.get("record_id")
            else row
            for key, row in rows.items()
        }
        return {**outcome, "result": {**outcome["result"], "rows": with_reviews}}

    def own_collection(self, arguments: dict[str, Any]) -> str | None:
        return str(arguments["collection_id"])

    def own_changes(self, action: PreparedAction) -> list[str]:
        return imports.review_changes(action.workspace_id, action.arguments)

    def size(self, arguments: dict[str, Any]) -> int:
        return len(arguments.get("rows") or [])

    def summary(self, size: int, collection: str) -> str:
        return f"import {size} row{'s' if size != 1 else ''} into {collection}"

    def touches(self, arguments: Any) -> set[str]:
        return _link_ends(arguments) if isinstance(arguments, dict) else set()

    def shown_ids(self, action: PreparedAction) -> tuple[set[str], set[str]]:
        arguments = action.arguments if isinstance(action.arguments, dict) else {}
        records = _link_ends(arguments)
        for row in arguments.get("reviewed") or []:
            records.update(c["record_id"] for c in row.get("candidates", []))
        result = action.result if isinstance(action.result, dict) else {}
        made = result.get("rows")
        if isinstance(made, dict):
            records.update(str(o["record_id"]) for o in made.values() if o.get("record_id"))
        return records, {str(arguments.get("collection_id", ""))}


KIND = Import()
