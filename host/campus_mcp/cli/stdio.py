"""``campus-mcp stdio``: the same MCP server over stdin and stdout, for a desktop client (issue 14.3).

The registry, tools, prompts, resources and completions are the HTTP endpoint's own
(:class:`~campus_mcp.mcp.server.CampusServer`); the SDK's stdio transport serves both protocol eras,
the client's first message choosing one. The caller is one student for the whole process: the
personal access token in ``CAMPUS_MCP_TOKEN`` (an OAuth access token works too), checked at start
and again on every request, so a token revoked on the dashboard stops working at once. Without a
token the process serves the anonymous toolset if the deployment allows it, else it does not start.

A 2025 client that declared elicitation is asked to confirm a change over the stdio back channel
(``campus_mcp.mcp.writes.back_channel``): asked with the form when it declared form mode, sent to
the campus's confirmation page when it declared URL mode alone and the campus's public URL is set. A client without elicitation gets
the page's link when the public URL is set, else the code in the chat (confirmation_fallback
``page``). A 2026-07-28 one gets the ``input_required`` round trip, as on HTTP. Nothing but protocol goes to stdout: logs go to stderr, and the SDK's transport moves
anything else printed to stdout there too.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from campus_mcp.assembly.registry import Registry
from campus_mcp.base.db import make_engine, make_sessions
from campus_mcp.mcp.endpoint import sdk_user
from campus_mcp.mcp.server import CampusServer
from campus_mcp.mcp.writes import BackChannel, back_channel
from campus_mcp.oauth import build_oauth
from campus_mcp.oauth.personal_tokens import PersonalTokens, TokenResolver, bearer_resolver
from campus_mcp.plugin.confirmation import CONFIRM_SCHEMA
from campus_mcp.plugin.principal import ANONYMOUS, Principal, current_principal
from campus_mcp.students.access_journal import journal_folder
from campus_mcp.students.access_log import AccessLog

TOKEN_ENV = "CAMPUS_MCP_TOKEN"  # noqa: S105 (the name of the variable, not a token)


class StdioRefused(Exception):
    """stdio cannot start: the sentence says what is wrong and what to do (never the token)."""


def _tokens_page(registry: Registry) -> str:
    return f"{registry.settings.base_url}/dashboard/tokens"


async def principal_of(registry: Registry, resolve: TokenResolver, token: str) -> Principal:
    """Who the process acts for: the token's student, or anonymous where the deployment allows it."""
    if not token:
        if registry.settings.anonymous_access:
            return ANONYMOUS
        raise StdioRefused(
            f"{TOKEN_ENV} is not set, and this campus serves only signed-in students. Make a personal "
            f"access token on {_tokens_page(registry)} and give it to campus-mcp stdio as {TOKEN_ENV}."
        )
    principal = await resolve(token)
    if principal is None:
        raise StdioRefused(
            f"The token in {TOKEN_ENV} is not accepted: it is unknown, expired or revoked. Make a new "
            f"personal access token on {_tokens_page(registry)} and put it in {TOKEN_ENV}."
        )
    return principal


def _asker(ctx: ServerRequestContext[Any, Any]) -> BackChannel | None:
    """What a 2025 client's back channel can do: a form, a page (URL mode), both or neither; None
    on the 2026 era, which asks in band (input_required), as on HTTP."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return None
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None:
        return BackChannel()
    # An empty elicitation capability means form mode (the spec's backward-compatible reading).
    forms = elicitation.form is not None or elicitation.url is None

    async def ask(message: str) -> types.ElicitResult:
        return await ctx.session.elicit_form(message, CONFIRM_SCHEMA, related_request_id=ctx.request_id)  # type: ignore[arg-type]

    async def send(message: str, url: str, elicitation_id: str) -> types.ElicitResult:
        return await ctx.session.elicit_url(message, url, elicitation_id, related_request_id=ctx.request_id)

    # A client that declares both keeps the form, as on HTTP (campus_mcp.mcp.writes.client_opens_pages).
    return BackChannel(form=ask if forms else None, url=None if forms else send)


def identity_middleware(registry: Registry, resolve: TokenResolver, token: str) -> Any:
    """Server middleware: the token's principal for each request (looked up again, so a revoked
    token stops at once), the SDK's view of it for the requestState boundary, and the back channel."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        principal = ANONYMOUS
        if token:
            found = await resolve(token)
            if found is None:
                raise MCPError(
                    types.INVALID_REQUEST,
                    f"The token in {TOKEN_ENV} was revoked or has expired. Make a new personal access token "
                    f"on {_tokens_page(registry)}, put it in {TOKEN_ENV} and restart the server.",
                )
            principal = found
        reset = current_principal.set(principal)
        sdk_reset = auth_context_var.set(sdk_user(principal, registry.settings.base_url))
        ask_reset = back_channel.set(_asker(ctx))
        try:
            return await call_next(ctx)
        finally:
            back_channel.reset(ask_reset)
            auth_context_var.reset(sdk_reset)
            current_principal.reset(reset)

    return middleware


async def serve_stdio(registry: Registry, token: str | None = None) -> None:
    """Serve MCP on this process's stdin and stdout until the client closes stdin.

    Raises :class:`StdioRefused` before reading anything when the token is missing or not live."""
    token = (os.environ.get(TOKEN_ENV, "") if token is None else token).strip()
    engine = make_engine(registry.settings.database_url)
    try:
        sessions = make_sessions(engine)
        resolve = bearer_resolver(
            PersonalTokens(sessions, registry.settings), build_oauth(registry, sessions).resolve_token
        )
        await principal_of(registry, resolve, token)
        # No origin to serve icons from: they come inline (campus_mcp.assembly.icons).
        campus = CampusServer(registry, sessions, inline_icons=True)
        campus.door = "stdio"
        settings = registry.settings
        campus.access_log = access_log = AccessLog(
            sessions, journal_folder(settings.var_dir, settings.database_url), enabled=settings.student_access_log
        )
        access_log.start()
        server = campus.server
        # Outermost, so the SDK's requestState boundary already sees who is asking.
        server.middleware.insert(0, identity_middleware(registry, resolve, token))
        try:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            await access_log.close()
    finally:
        await engine.dispose()


def run(registry: Registry) -> None:
    anyio.run(serve_stdio, registry)
