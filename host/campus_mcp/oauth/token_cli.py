"""``campus-mcp token``: a short-lived access token for scripts and local testing.

An admin command on the server's own machine: it writes a real issuance into the OAuth store
(for the built-in client "campus-mcp cli", audience the MCP URL), so the endpoint treats the
token like one a student got by signing in, and the student sees (and can disconnect) the app on
the dashboard. It needs no password, which is why it refuses outside demo mode unless the
administrator says so. Only the token goes to stdout, so ``$(campus-mcp token ...)`` works; what
it was issued for goes to stderr. The token is never logged and only its hash is stored.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
import uuid
from datetime import timedelta

import click
from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError, IntegrityError

from campus_mcp.assembly.access import granted_scope
from campus_mcp.assembly.deployment import Deployment, open_deployment
from campus_mcp.assembly.registry import PluginError, Registry
from campus_mcp.base.db import utcnow
from campus_mcp.base.settings import Settings, settings_problem
from campus_mcp.oauth.accounts import student_by_username
from campus_mcp.oauth.store import ClientRecord, OAuthStore

CLI_CLIENT_ID = "campus-mcp-cli"
CLI_CLIENT_NAME = "campus-mcp cli"
MAX_MINUTES = 24 * 60
ADMIN_FLAG = "--yes-i-am-an-admin"


class TokenRefused(click.ClickException):
    """A refusal that says what was wrong and what to do (click prints it as ``Error: ...``)."""


def default_scopes(registry: Registry) -> list[str]:
    """What a first consent page starts with: every read scope whose box starts checked."""
    return [
        name
        for name, scope in registry.scopes.items()
        if scope.starts_checked and not scope.writes and not scope.always_on
    ]


def chosen_scopes(registry: Registry, raw: str | None) -> list[str]:
    """The ``--scopes`` list (commas or spaces), each checked against the registry."""
    if raw is None:
        return default_scopes(registry)
    names = [part for part in raw.replace(",", " ").split() if part]
    unknown = [name for name in names if name not in registry.scopes]
    if unknown or not names:
        known = ", ".join(registry.scopes) or "none"
        what = f"unknown scope(s) {', '.join(repr(n) for n in unknown)}" if unknown else "no scope given"
        raise TokenRefused(f"--scopes: {what}; the scopes of this server are: {known}.")
    return names


async def issue(
    deployment: Deployment, username: str, names: list[str], minutes: int, resource: str | None = None
) -> tuple[str, str]:
    """Save an access-only issuance for ``username``, for the MCP URL ``resource`` (this server's
    own by default); the token and the scope it holds."""
    registry = deployment.registry
    name = username.strip().lower()
    async with deployment.session() as session:
        student = await student_by_username(session, name)
    if student is None:
        hint = (
            f" (the demo students are student1..student{registry.settings.demo_students})"
            if registry.settings.demo
            else ""
        )
        raise TokenRefused(f"--student: no student named {name!r}{hint}; `campus-mcp students list` shows them.")
    # The always-on scopes come with every grant, as on the consent page.
    _, scope = granted_scope(registry, names, names)
    store = OAuthStore(deployment.sessions)
    # No redirect URI: nobody can start a browser sign-in as this client; it only holds these tokens.
    await store.save_client(
        ClientRecord(client_id=CLI_CLIENT_ID, kind="cli", client_name=CLI_CLIENT_NAME, redirect_uris=())
    )
    # The same shape as the authorization server's access tokens.
    access_token = f"cmcp_at_{secrets.token_urlsafe(32)}"
    await store.save_tokens(
        access_token=access_token,
        refresh_token=None,
        client_id=CLI_CLIENT_ID,
        user_id=student.id,
        scope=scope,
        resource=resource or registry.settings.mcp_url,
        family_id=uuid.uuid4().hex,
        access_seconds=minutes * 60,
    )
    return access_token, scope


@click.command("token")
@click.option("--student", "username", required=True, help="The student the token acts for, e.g. student1.")
@click.option(
    "--scopes",
    default=None,
    help="Scopes, comma- or space-separated (default: every read scope a consent page starts checked).",
)
@click.option(
    "--minutes",
    default=60,
    show_default=True,
    type=click.IntRange(1, MAX_MINUTES),
    help="How long the token lasts.",
)
@click.option(
    "--url",
    "mcp_url",
    default=None,
    help="The MCP URL the token is for, as the client calls it (default: this server's, from "
    "CAMPUS_MCP_PUBLIC_URL or the port). A server answers only tokens made for its own URL.",
)
@click.option(ADMIN_FLAG, "admin", is_flag=True, help="Required outside demo mode: you administer this server.")
def token(username: str, scopes: str | None, minutes: int, mcp_url: str | None, admin: bool) -> None:
    """Print a short-lived access token for a student (only the token, on stdout)."""
    resource = None if mcp_url is None else mcp_url.strip().rstrip("/")
    if resource is not None and not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", resource):
        raise click.BadParameter(
            f"{mcp_url!r} is not an http(s) URL; give the MCP URL the client calls, such as "
            "http://127.0.0.1:8080/api/mcp.",
            param_hint="--url",
        )
    try:
        settings = Settings()
    except ValidationError as exc:
        raise click.ClickException(settings_problem(exc)) from None
    if not settings.demo and not admin:
        # Checked before the database is opened: nothing is written on a refusal.
        raise TokenRefused(
            "this server is not in demo mode, and a token from `campus-mcp token` acts for a real "
            f"student without their password. If you administer this server, add {ADMIN_FLAG}."
        )

    async def _issue() -> tuple[str, str, str]:
        async with open_deployment(settings, migrate=False) as deployment:
            names = chosen_scopes(deployment.registry, scopes)
            minted, scope = await issue(deployment, username, names, minutes, resource)
            return minted, scope, resource or deployment.settings.mcp_url

    for attempt in range(1, LOCKED_ATTEMPTS + 1):
        try:
            minted, scope, audience = asyncio.run(_issue())
            break
        except PluginError as exc:
            raise click.ClickException(str(exc)) from None
        except DBAPIError as exc:
            # Two commands at once: on one SQLite file the second to turn its read into a write is
            # refused at once (SQLite's deadlock rule, no busy wait), and on any database both may
            # create the "campus-mcp cli" client row, one refused as a duplicate. Nothing was
            # written by the refused one; again finds the other's row.
            raced = isinstance(exc, IntegrityError) or "database is locked" in str(exc.orig)
            if raced and attempt < LOCKED_ATTEMPTS:
                time.sleep(0.2 * attempt)
                continue
            raise click.ClickException(database_problem(exc)) from None
    until = utcnow() + timedelta(minutes=minutes)
    click.echo(
        f"An access token for {username.strip().lower()} on {audience}, scopes {scope}, "
        f"until {until:%Y-%m-%d %H:%M} UTC. Treat it like a password.",
        err=True,
    )
    click.echo(minted)


LOCKED_ATTEMPTS = 5


def database_problem(exc: DBAPIError) -> str:
    """What the student running ``token`` is told when the database refused: an empty database
    (no tables yet) has its own advice; anything else is named by its kind, never its SQL."""
    text = str(exc.orig).lower()
    if "no such table" in text or "does not exist" in text:
        return (
            "the database has no student accounts yet: run `campus-mcp serve` once (or `campus-mcp db "
            "upgrade` and `campus-mcp demo`), then ask again."
        )
    return (
        f"the database refused the token ({type(exc.orig).__name__}); no token was made. Check "
        "CAMPUS_MCP_DATABASE_URL and that the database is running, then ask again."
    )
