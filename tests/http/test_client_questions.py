"""Over HTTP no question can be put to the user through the client, and the reply says why.

django-mcp-server runs the SDK stateless, one POST per message, so a server-to-client request
(elicitation) has no way back. A client that declares the capability still gets the plain
needs_clarification, with the reason in client_question, and nothing is stored on the review.
"""

from __future__ import annotations

from records.services import WriteContext
from tests.conftest import make_collection, make_record
from tests.http.conftest import PROTOCOL_VERSION, McpHttp
from workflow.mcp.elicitation import OVER_HTTP
from workflow.models import ReviewTicket


def test_ask_user_over_http_keeps_the_plain_flow_and_says_why(alice):
    ctx = WriteContext(workspace_id="team-a", actor_id="seed", decision_reason="seed")
    people = make_collection(ctx, "people", "People we hire in team A")
    make_record(ctx, people, "Kirat")
    connection: McpHttp = alice.connect()
    response = connection.request(
        "initialize",
        {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "dialog-over-http", "version": "1"},
        },
    )
    assert response.status_code == 200, response.content
    connection.session_id = response.headers["Mcp-Session-Id"]
    connection.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    reply = connection.ok(
        "resolve_record", {"query": "Kriat", "collection_id": people.pk, "ask_user": True}
    )
    assert reply["status"] == "needs_clarification"
    assert reply["client_question"] == {"asked": False, "reason": OVER_HTTP}
    ticket = ReviewTicket.objects.get(pk=reply["resolution_id"])
    assert ticket.client_confirmation is None
