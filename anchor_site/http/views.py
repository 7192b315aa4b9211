"""/mcp: django-mcp-server's streamable-HTTP view, with our transport, identity and sessions.

Transport checks, token authentication and the workspace (reads only) come before the SDK, so
every refusal precedes the first write. Sessions are ours: created only by a successful
initialize, owned by the token that created it, invisible to any other (the package would take
any Django session key and let anyone DELETE one). The one place that knows the package's HTTP
internals (pinned at 0.5.7).
"""

from __future__ import annotations

import io
import logging
from importlib import import_module
from types import SimpleNamespace
from typing import Any, cast

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import DatabaseError
from django.http import HttpResponse, JsonResponse
from oauth2_provider.models import AccessToken as OAuthAccessToken
from rest_framework.exceptions import MethodNotAllowed, NotAuthenticated, ParseError
from rest_framework.parsers import JSONParser
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.renderers import JSONRenderer

from anchor_site.db_pool import why_no_connection
from anchor_site.http.authentication import HOW_TO_GET_ONE, AccessTokenAuthentication, credential_of
from anchor_site.http.body_limit import MAX_MEMBERS, too_many_members
from anchor_site.http.errors import database_unavailable
from anchor_site.http.ratelimit import credential_accepted
from anchor_site.http.transport import PayloadTooLarge, check_transport
from anchor_site.http.workspace import WORKSPACE_HEADER, scope_for_user
from records.models.membership import AccessToken
from records.services import access_token_touch
from workflow.mcp.arguments import plain_json_refusal
from workflow.mcp.bounded_calls import cancel_http_call, was_cancelled
from workflow.mcp.jsonrpc import (
    CLIENT_METHODS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    error_body,
)
from workflow.mcp.sdk import (
    REQUEST_CONTEXT,
    SESSION_ID_HEADER,
    StreamableHttpView,
    run_http_handler,
)
from workflow.scope import Scope

logger = logging.getLogger("anchor.http")

SESSION_OWNER_KEY = "anchor_mcp_owner"
OPEN_OWNER = "debug-open"
DEEP_NESTING = "the JSON nests too deeply to be a JSON-RPC message."
TOO_MANY_MEMBERS = (
    f"the JSON holds more than {MAX_MEMBERS} members (object keys and array elements), the "
    "limit of one message; split the work into several calls."
)


def _jsonrpc_error(
    status: int, message: str, *, code: int = INVALID_REQUEST, request_id: Any = None
) -> JsonResponse:
    return JsonResponse(error_body(request_id, code, message), status=status)


class MessageParser(JSONParser):
    """DRF's JSON parser, but NaN and Infinity parse (the argument check refuses them, naming
    the field) and deep nesting or too many members are a clear 400."""

    strict = False

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        body = stream.read()
        if too_many_members(body):
            raise ParseError(TOO_MANY_MEMBERS)
        try:
            return super().parse(io.BytesIO(body), media_type, parser_context)
        except RecursionError:
            raise ParseError(DEEP_NESTING) from None


def _request_id(request: Any) -> Any:
    """The id of the JSON-RPC request being answered, or None when it has none."""
    try:
        message = request.data
    except ParseError:
        return None
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if isinstance(request_id, (str, int)) else None


def _refusal(message: Any, session_key: str | None) -> JsonResponse | None:
    """JSON-RPC rules answered here, as the stdio transport answers them (the SDK would answer
    a body that is not one JSON-RPC object with its validation dump)."""
    if isinstance(message, list):
        return _jsonrpc_error(
            400,
            "Invalid Request: batches (JSON arrays) are not supported; send one JSON-RPC "
            "message per request.",
        )
    if not isinstance(message, dict):
        return _jsonrpc_error(
            400, "Invalid Request: expected one JSON-RPC 2.0 request or notification object."
        )
    if "method" not in message or "id" not in message:
        return None  # a notification: nothing to answer
    method, request_id = message["method"], message["id"]
    if request_id is None:
        return _jsonrpc_error(400, "Invalid Request: id must be a string or a number.")
    if not isinstance(method, str) or method not in CLIENT_METHODS:
        shown = str(method)[:100]
        return _jsonrpc_error(
            200, f"Method not found: {shown}", code=METHOD_NOT_FOUND, request_id=request_id
        )
    if method == "initialize" and session_key:
        return _jsonrpc_error(
            400,
            "Invalid Request: this session is already initialized; initialize without "
            f"{SESSION_ID_HEADER} to start a new one.",
            request_id=request_id,
        )
    return None


class AnchorMCPView(StreamableHttpView):
    """POST carries JSON-RPC; DELETE ends a session; anything else is 405."""

    http_method_names = ["post", "delete"]
    authentication_classes = [AccessTokenAuthentication]
    permission_classes = [IsAuthenticated]
    parser_classes = [MessageParser]
    renderer_classes = [JSONRenderer]
    throttle_classes: list[Any] = []

    def handle_exception(self, exc: Exception) -> HttpResponse:
        # A database fault outside a tool call (authentication, the session): say which
        # (error.data.cause) and when to retry, answering the request's own id.
        if isinstance(exc, DatabaseError):
            cause, reason = why_no_connection(exc)
            logger.warning("an /mcp request met a database fault (%s): %s", cause, exc)
            return database_unavailable(cause, reason, _request_id(self.request))
        if isinstance(exc, PayloadTooLarge):  # the same reply as the ASGI-level refusal
            return _jsonrpc_error(413, str(exc.detail))
        return cast(HttpResponse, super().handle_exception(exc))

    def initial(self, request: Any, *args: Any, **kwargs: Any) -> None:
        check_transport(request, self.http_method_names)
        super().initial(request, *args, **kwargs)  # authentication and permission
        if request.auth is not None:
            # The rate limiter charges this request to the credential, not the address.
            credential_accepted(request._request)
        if request.method == "POST":
            # Read by workflow.scope.scope_for_request inside every tool.
            request.anchor_scope = self.scope_for(request)

    def permission_denied(self, request: Any, message: Any = None, code: Any = None) -> None:
        if request.authenticators and not request.successful_authenticator:
            raise NotAuthenticated(f"No access token was sent. {HOW_TO_GET_ONE}")
        super().permission_denied(request, message=message, code=code)

    def scope_for(self, request: Any) -> Scope:
        return scope_for_user(
            request.user, request.headers.get(WORKSPACE_HEADER), credential_of(request.auth)
        )

    def session_owner(self, request: Any) -> str:
        token = request.auth
        if isinstance(token, AccessToken):
            return f"token:{token.pk}"
        # An OAuth session belongs to the person's authorization of the client: it outlives
        # the token's rotation.
        assert isinstance(token, OAuthAccessToken)
        return f"oauth:{token.application_id}:{token.user_id}"

    def accepted(self, request: Any) -> None:
        if request.auth is not None:  # the debug view's requests carry none
            access_token_touch(token=request.auth)

    def get(self, request: Any, *args: Any, **kwargs: Any) -> HttpResponse:
        raise MethodNotAllowed("GET")  # never the stock GET: it spins a CPU forever

    def post(self, request: Any, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            message = request.data
        except ParseError as exc:
            too_big = exc.detail in (DEEP_NESTING, TOO_MANY_MEMBERS)
            code = INVALID_REQUEST if too_big else PARSE_ERROR
            return _jsonrpc_error(400, f"Parse error: {exc.detail}", code=code)
        session_key = request.headers.get(SESSION_ID_HEADER)
        refused = _refusal(message, session_key)
        if refused is not None:
            return refused
        method, request_id, params = message.get("method"), message.get("id"), message.get("params")
        if session_key:
            unplain = plain_json_refusal(request_id, method, params)
            if unplain is not None:
                return JsonResponse(unplain)
            if self._owned_session(request, session_key) is None:
                return _jsonrpc_error(404, "Session not found; initialize a new session.")
            cancelled = params.get("requestId") if isinstance(params, dict) else None
            if method == "notifications/cancelled" and isinstance(cancelled, (str, int)):
                cancel_http_call(session_key, cancelled)
                self.accepted(request)
                return HttpResponse(status=202)
        elif method != "initialize":
            return _jsonrpc_error(
                400,
                f"Send initialize first, then repeat the {SESSION_ID_HEADER} header it "
                "returns on every request.",
            )
        try:
            response: HttpResponse = async_to_sync(run_http_handler)(request, self)
        finally:
            # asgiref copies the package's context variable back here: the scope must not stay.
            REQUEST_CONTEXT.set(SimpleNamespace())
        if session_key and request_id is not None and was_cancelled(session_key, request_id):
            # A cancelled request SHOULD NOT be answered: 202, which both official clients take.
            return HttpResponse(status=202)
        if not session_key and response.status_code == 200:
            session_key = self._open_session(request)
        if session_key:
            response[SESSION_ID_HEADER] = session_key
        self.accepted(request)
        return response

    def delete(self, request: Any, *args: Any, **kwargs: Any) -> HttpResponse:
        session_key = request.headers.get(SESSION_ID_HEADER)
        if not session_key:
            return _jsonrpc_error(
                400, f"Name the session to end in the {SESSION_ID_HEADER} header."
            )
        store = self._owned_session(request, session_key)
        if store is None:
            return _jsonrpc_error(404, "Session not found.")
        store.delete()
        self.accepted(request)
        return HttpResponse(status=204)

    def _session_store(self, session_key: str | None = None) -> Any:
        return import_module(settings.SESSION_ENGINE).SessionStore(session_key)

    def _owned_session(self, request: Any, session_key: str) -> Any | None:
        store = self._session_store(session_key)
        # load() returns {} for unknown or expired keys and writes nothing.
        if store.load().get(SESSION_OWNER_KEY) != self.session_owner(request):
            return None
        return store

    def _open_session(self, request: Any) -> str:
        store = self._session_store()
        store[SESSION_OWNER_KEY] = self.session_owner(request)
        store.create()
        return str(store.session_key)


class OpenDebugMCPView(AnchorMCPView):
    """ANCHOR_HTTP_AUTH=none with DEBUG on (never mounted otherwise): the stdio scope."""

    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]

    def scope_for(self, request: Any) -> Scope:
        return Scope(workspace_id=settings.ANCHOR_WORKSPACE_ID, actor_id=settings.ANCHOR_ACTOR_ID)

    def session_owner(self, request: Any) -> str:
        return OPEN_OWNER
