"""The short way through the MCP SDK for the commonest request: one read-only ``tools/call``.

A stateless JSON ``POST /api/mcp`` of one ``tools/call`` pays the SDK per request for machinery
it does not use: on the 2025-11-25 wire new memory streams, a task group, a dispatcher and a
runner; on both wires the request classified and validated twice and the answer validated and
serialized again (most of the gap to REST; figures in docs/performance.md). This module
answers exactly that request itself, and nothing else:

- a POST of ONE JSON-RPC request object (``jsonrpc``, ``id``, ``method``, ``params`` and no other
  member) whose method is ``tools/call``, with a string or number id;
- for a tool this endpoint serves and the caller sees, that does not write (so no confirmation,
  no elicitation, no ``requestState``) and declares no ``Mcp-Param-*`` header;
- no progress token, no session id, no ``Mcp-Param-*`` header, no header sent twice.

For it the SDK's own checks run first (the DNS-rebinding Host/Origin guard, Accept and
Content-Type, the protocol-version header, on 2026-07-28 the envelope and the Mcp-Method/Mcp-Name
ladder, the request's surface validation), then :meth:`CampusServer.answer_request` (what
``call_tool`` runs), the one place with validation, scopes, rate limit, metrics and advisory, given
the protocol version and the request's ``_meta``, which is all a read uses of the SDK's request
context (so none is made), and the response is written with the SDK's own serializers: the same
status, headers and bytes (tests/mcp/test_fast_call_identical.py sends every case both ways).
Whenever anything is not exactly that, or a check fails, it answers nothing and the SDK serves the
request as before, errors included, so no error is ours to word.

What the short way does not do: the SDK's OpenTelemetry middleware span for the call (the
server's own metrics still count it). ``CAMPUS_MCP_FAST_READS=false`` turns it off (and
``CAMPUS_MCP_SPEEDUPS=off``, with every other speed-up).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types
import pydantic_core
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PARAM_HEADER_PREFIX,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundModernRoute,
    classify_inbound_request,
)
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from campus_mcp.base.lru import LRU
from campus_mcp.mcp.server import CampusServer, ToolAnswer, meta_object
from campus_mcp.plugin.principal import Principal

METHOD = "tools/call"
ENVELOPE_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
PARAMS_KEYS = frozenset({"name", "arguments", "_meta"})
MODERN_META_KEYS = frozenset(
    {types.PROTOCOL_VERSION_META_KEY, types.CLIENT_INFO_META_KEY, types.CLIENT_CAPABILITIES_META_KEY}
)
# Headers that ask for something the short way does not do: a session, a resumed stream, a tool
# argument in a header. ASGI header names are lowercase.
REFUSED_HEADERS = (b"mcp-session-id", b"last-event-id")
PARAM_HEADER_PREFIX = MCP_PARAM_HEADER_PREFIX.lower().encode()
CONTENT_TYPE_JSON = "application/json"
# The stand-ins of an answer's object and text and of the request's id in its reply
# (FastReads._spliced): letters and digits, so every serializer writes them as they are, and drawn
# per process, so no answer or id can hold them.
STAND_IN_TOKEN = secrets.token_hex(16)
STAND_IN = f"campusStandIn{STAND_IN_TOKEN}"
STAND_IN_OBJECT = f'{{"{STAND_IN}":0}}'.encode()
STAND_IN_TEXT = f'"{STAND_IN}"'.encode()
STAND_IN_ID = f"campusStandInId{STAND_IN_TOKEN}"
STAND_IN_ID_JSON = f'"{STAND_IN_ID}"'.encode()
# Reply frames kept per endpoint (FastReads._frame): one per shape of answer around its object and
# text (the version, the content after the text, such as the page links); a few hundred bytes each.
FRAMES_KEPT = 256


def _json_content_type(headers: Mapping[str, str]) -> bool:
    # The 2025-11-25 transport's rule (StreamableHTTPServerTransport._check_content_type).
    content_type = headers.get("content-type", "")
    return any(part.strip() == CONTENT_TYPE_JSON for part in content_type.split(";")[0].split(","))


# Where json.dumps (ASCII, compact: the 2026-07-28 transport's) and pydantic's JSON writer write a
# JSON-mode value apart: json.dumps escapes DEL and every character past ASCII (\\uXXXX); it writes
# a float below 1e-4 or from 1e16 with an exponent where pydantic may not (1e-05: pydantic
# 0.00001; 1e-07: pydantic 1e-7); and it refuses infinity and NaN (allow_nan=False). Everything
# else (keys, strings, escapes, integers of any size, other floats, true, false, null) is the same
# bytes. Pydantic's output shows each case: a byte past 0x7e, "0.0000", a digit then an "e" or
# "E", "Infinity" or "NaN" (in a number, or harmlessly in a string: then json.dumps writes it).
# Digits as 0, E as e and every other byte as x: one search for "0e" then finds a digit before
# either exponent letter in one search instead of two, and that search skips ahead over the x's,
# which neither letter of it is.
DIGITS_AS_ZERO = bytes(
    ord("0") if byte in b"0123456789" else ord("e") if byte in b"eE" else ord("x") for byte in range(256)
)
WRITTEN_APART = (b"\x7f", b"0.0000", b"Infinity", b"NaN")


def python_json(value: Any, written: bytes | None = None) -> bytes:
    """``json.dumps(value, separators=(",", ":"), allow_nan=False)`` of a JSON-mode value, as bytes:
    pydantic's writer (about three times faster) when its bytes are the same (see above).
    ``written``: what ``pydantic_core.to_json(value)`` wrote for it already."""
    if written is None:
        written = pydantic_core.to_json(value)
    if written.isascii() and not any(sign in written for sign in WRITTEN_APART):
        digits = written.translate(DIGITS_AS_ZERO)
        if b"0e" not in digits:
            return written
    return json.dumps(value, separators=(",", ":"), allow_nan=False).encode()


def python_json_string(text: str) -> bytes:
    """``json.dumps(text)`` as bytes: pydantic's writer when the text is ASCII without DEL, where
    both escape exactly the quote, the backslash and the control characters, the same way."""
    if text.isascii() and "\x7f" not in text:
        return pydantic_core.to_json(text)
    return json.dumps(text).encode()


def _modern_json(reply: types.JSONRPCResponse | types.JSONRPCError) -> str:
    # _streamable_http_modern._write's serialization (a reply here always has an id).
    return json.dumps(reply.model_dump(mode="json", by_alias=True, exclude_none=True), separators=(",", ":"))


def _request_id(message: Mapping[str, Any]) -> str | int | None:
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        return None  # null, a float, an object: the SDK words those refusals
    return request_id


@dataclass(frozen=True, slots=True)
class HotRead:
    """A request the short way answers: its id, typed params, protocol version, ``_meta`` object
    and wire (2026-07-28 or not)."""

    request_id: str | int
    params: types.CallToolRequestParams
    version: str
    meta: dict[str, Any]
    modern: bool


def _envelope(body: bytes) -> tuple[str | int, dict[str, Any], dict[str, Any]] | None:
    """The id, params and whole message of a body that is ONE JSON-RPC ``tools/call`` request
    with nothing else in it, else None."""
    try:
        # The SDK's own parser (NaN, big numbers and duplicate keys read the same way as there).
        message = pydantic_core.from_json(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.keys() != ENVELOPE_KEYS:
        return None
    request_id = _request_id(message)
    params = message["params"]
    if (
        request_id is None
        or message["jsonrpc"] != "2.0"
        or message["method"] != METHOD
        or not isinstance(params, dict)
        or not params.keys() <= PARAMS_KEYS
        or not isinstance(params.get("name"), str)
        or not isinstance(params.get("arguments", {}), dict)
    ):
        return None
    return request_id, params, message


class FastReads:
    """The short way for one endpoint's server (see the module docstring)."""

    def __init__(self, server: CampusServer, security: TransportSecuritySettings) -> None:
        self.server = server
        self.security = TransportSecurityMiddleware(security)
        self._frames: LRU[tuple[str, bool, bytes], tuple[bytes, bytes, bytes, bytes]] = LRU(FRAMES_KEPT)

    async def serve(self, scope: Scope, receive: Receive, send: Send, body: bytes, principal: Principal) -> bool:
        """Answer the request if it is the hot read; False (nothing sent) hands it to the SDK."""
        read = await self.hot_read(scope, receive, body, principal)
        if read is None:
            return False
        await self._answer(read, scope, receive, send)
        return True

    async def hot_read(self, scope: Scope, receive: Receive, body: bytes, principal: Principal) -> HotRead | None:
        """The request as the short way answers it, or None when it is anything else (decided
        before any answer is begun: the SDK then serves it whole, errors included)."""
        if self.server.toolboxes is not None:
            return None  # a proxied call is the toolbox's to unpack
        request = Request(scope, receive)
        transport = await self._transport(scope, request)
        if transport is None:
            return None
        modern, header_version = transport
        envelope = _envelope(body)
        if envelope is None:
            return None
        request_id, params, message = envelope
        if not self._answers(params["name"], principal):
            return None  # a write, a header-schema tool, one this caller does not see: the SDK's
        meta = params.get("_meta")
        if modern:
            if not isinstance(meta, dict) or not meta.keys() <= MODERN_META_KEYS:
                return None  # a progress token, a log level, anything else: the SDK's
            verdict = classify_inbound_request(message, headers=dict(request.headers))
            if not isinstance(verdict, InboundModernRoute):
                return None
            version = verdict.protocol_version
        else:
            if meta is not None:
                return None
            version = header_version if header_version is not None else types.DEFAULT_NEGOTIATED_VERSION
        try:
            # The runner's surface check, then the handler's typed params, as the SDK makes them.
            methods.validate_client_request(METHOD, version, params)
            typed = types.CallToolRequestParams.model_validate(params, by_name=False)
            request_meta = types.RequestParams.model_validate(params, by_name=False).meta if meta else None
        except (ValidationError, KeyError, ValueError):
            return None
        return HotRead(request_id, typed, version, meta_object(request_meta), modern)

    async def _transport(self, scope: Scope, request: Request) -> tuple[bool, str | None] | None:
        """Whether the request is on the 2026-07-28 wire, and its version header, when its headers
        ask for nothing the short way does not do and pass the SDK's own checks; else None."""
        names = [name for name, _value in scope["headers"]]
        if len(set(names)) != len(names) or any(
            name in REFUSED_HEADERS or name.startswith(PARAM_HEADER_PREFIX) for name in names
        ):
            return None
        headers = request.headers
        header_version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
        modern = header_version in MODERN_PROTOCOL_VERSIONS
        if not modern and header_version is not None and header_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return None
        if await self.security.validate_request(request, is_post=True) is not None:
            return None
        has_json, _has_sse = check_accept_headers(request)
        if not has_json or not _json_content_type(headers):
            return None
        return modern, header_version

    def _answers(self, name: str, principal: Principal) -> bool:
        """Whether the tool ``name`` is one the short way answers for ``principal``: served here,
        seen by the caller, reading only, with no argument in a header."""
        server = self.server
        tool = server.tools.get(name)
        if tool is None or tool.writes or server.header_schema_of(tool.name) is not None:
            return False
        return tool in server.visible_tools(principal)  # else the SDK words "unknown tool"

    async def _answer(self, read: HotRead, scope: Scope, receive: Receive, send: Send) -> None:
        """The answer, written as the SDK writes it. A read uses nothing of its request context
        but the version and the _meta (the SDK's ServerRequestContext.meta, as a JSON object): no
        session, connection or dispatch context is made for a request that would never use them."""
        reply: types.JSONRPCResponse | types.JSONRPCError
        try:
            answer = await self.server.answer_request(read.params, read.version, read.meta)
            spliced = self._spliced(answer, read.version, read.request_id, read.modern)
            if spliced is not None:
                await _response(spliced, 200, read.modern)(scope, receive, send)
                return
            reply = self._reply(answer.result, read.version, read.request_id)
        except Exception as exc:
            # The SDK's mapping of a raised handler: its own error, or (unexpected) a generic one.
            error = handler_exception_to_error_data(exc)
            if error is None:
                error = (
                    types.ErrorData(code=types.INTERNAL_ERROR, message="Internal server error")
                    if read.modern
                    else types.ErrorData(code=0, message=str(exc))
                )
            reply = types.JSONRPCError(jsonrpc="2.0", id=read.request_id, error=error)
        await self._write(reply, read.modern, scope, receive, send)

    def _reply(
        self, result: types.CallToolResult | types.InputRequiredResult, version: str, request_id: str | int
    ) -> types.JSONRPCResponse:
        return self._reply_of(result.model_dump(by_alias=True, mode="json", exclude_none=True), version, request_id)

    def _reply_of(self, dumped: dict[str, Any], version: str, request_id: str | int) -> types.JSONRPCResponse:
        # ServerRunner._serialize: the dumped result validated and dumped as the version's surface, stamped.
        surface = methods.serialize_server_result(METHOD, version, dumped)
        return types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=self._stamped(version, surface))

    def _spliced(self, answer: ToolAnswer, version: str, request_id: str | int, modern: bool) -> bytes | None:
        """The response body of a plain answer, written without passing its object through the SDK's
        models: None when it is not one (the whole reply then goes the SDK's way, :meth:`_write`).

        The reply to a read is the answer's object twice, as ``structuredContent`` and as the JSON
        text of the first content item: nearly all of its bytes. The SDK dumps that object to
        Python, validates and dumps it again as the surface, dumps the reply once more and
        serializes it (on 2026-07-28 with ``json.dumps``, the slowest of them). Those
        passes change nothing in a model's JSON-mode dump but infinity and NaN, which become null
        (:class:`ToolAnswer` has its JSON only when it has neither). So the reply is made the
        SDK's way with stand-ins for the object, the text and the id (:meth:`_frame`), and each
        stand-in's JSON is replaced by the JSON that reply's serializer writes for the real one:
        pydantic's on 2025-11-25, whose bytes for the object are the answer's own JSON (its
        text); ``json.dumps`` compact (ASCII, no infinity or NaN allowed) on 2026-07-28, written
        by pydantic's writer where that is the same bytes (:func:`python_json`).
        """
        result, object_json = answer.result, answer.object_json
        if not (
            object_json is not None
            and isinstance(result, types.CallToolResult)
            and type(result.structured_content) is dict
            and result.content
            and isinstance(result.content[0], types.TextContent)
        ):
            return None
        text = result.content[0].text
        standing_in = result.model_copy(
            update={
                "structured_content": {STAND_IN: 0},
                "content": [result.content[0].model_copy(update={"text": STAND_IN}), *result.content[1:]],
            }
        )
        try:
            frame = self._frame(standing_in, version, modern)
            if frame is None:
                return None
            if modern:
                object_json = python_json(result.structured_content, object_json)
                text_json = python_json_string(text)
                id_json = json.dumps(request_id).encode()
            else:
                text_json = pydantic_core.to_json(text)
                id_json = pydantic_core.to_json(request_id)
        except Exception:
            return None  # something JSON cannot say, or says apart: the SDK's way words it
        head, after_id, after_text, tail = frame
        return b"".join((head, id_json, after_id, text_json, after_text, object_json, tail))

    def _frame(
        self, standing_in: types.CallToolResult, version: str, modern: bool
    ) -> tuple[bytes, bytes, bytes, bytes] | None:
        """The reply to ``standing_in`` with the stand-in id, made and serialized the SDK's way, cut
        around its id, text and object: the bytes before the id, between the id and the text,
        between the text and the object, and after the object. None when they are not there in
        that order, each once: not the reply this module knows.

        Kept per version and dump of ``standing_in`` (all the reply is made from but the id): a
        reply is made of those alone, so a kept frame is the bytes it would make again, and the
        SDK's validation and serialization of the frame runs once
        per shape of answer instead of per call."""
        dumped = standing_in.model_dump(by_alias=True, mode="json", exclude_none=True)
        key = (version, modern, pydantic_core.to_json(dumped))  # the version decides the wire; said anyway
        kept = self._frames.get(key)
        if kept is not None:
            return kept
        written = _reply_bytes(self._reply_of(dumped, version, STAND_IN_ID), modern)
        head, found_id, rest = written.partition(STAND_IN_ID_JSON)
        after_id, found_text, rest = rest.partition(STAND_IN_TEXT)
        after_text, found_object, tail = rest.partition(STAND_IN_OBJECT)
        frame = (head, after_id, after_text, tail)
        token = STAND_IN_TOKEN.encode()
        if not (found_id and found_text and found_object) or any(token in piece for piece in frame):
            return None
        return self._frames.put(key, frame)

    def _stamped(self, version: str, result: dict[str, Any]) -> dict[str, Any]:
        # ServerRunner._serialize's last steps for a 2026-07-28 result: resultType, then serverInfo.
        if version not in MODERN_PROTOCOL_VERSIONS:
            return result
        if result.get("resultType") is None:
            result["resultType"] = "complete"
        meta = result.get("_meta")
        if meta is None:
            result["_meta"] = {types.SERVER_INFO_META_KEY: self.server.server.server_info_stamp}
        elif isinstance(meta, dict) and meta.get(types.SERVER_INFO_META_KEY) is None:
            result["_meta"] = {**meta, types.SERVER_INFO_META_KEY: self.server.server.server_info_stamp}
        return result

    async def _write(
        self,
        reply: types.JSONRPCResponse | types.JSONRPCError,
        modern: bool,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        status = 200
        if modern and isinstance(reply, types.JSONRPCError):
            # On 2026-07-28 the status comes from the error code (_streamable_http_modern._write).
            status = ERROR_CODE_HTTP_STATUS.get(reply.error.code, 200)
        await _response(_reply_bytes(reply, modern), status, modern)(scope, receive, send)


def _reply_bytes(reply: types.JSONRPCResponse | types.JSONRPCError, modern: bool) -> bytes:
    """A reply's body as each wire's transport writes it: json.dumps compact on 2026-07-28
    (_streamable_http_modern._write), pydantic's JSON on 2025-11-25
    (StreamableHTTPServerTransport._create_json_response)."""
    if modern:
        return _modern_json(reply).encode()
    return reply.model_dump_json(by_alias=True, exclude_unset=True).encode()


def _response(body: bytes, status: int, modern: bool) -> Response:
    """The HTTP response of a reply, as each wire's transport makes it (the same headers, in order)."""
    if modern:
        return Response(body, status_code=status, media_type=CONTENT_TYPE_JSON)
    return Response(body, status_code=status, headers={"Content-Type": CONTENT_TYPE_JSON})
