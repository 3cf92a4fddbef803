"""Personal access tokens: a student's own token for a script or a desktop client (issue 14.3).

A student makes one on the dashboard (``oauth/token_pages.py``) with a name, the permissions it
carries and an expiry; it is shown once and then only its keyed hash is kept. It works as a bearer
token on ``/api/mcp`` and on the student REST routes, and as ``CAMPUS_MCP_TOKEN`` for
``campus-mcp stdio``. It is listed under Connected apps, where Disconnect revokes it.

The token is ``cmcp_pat_<id>_<secret>``: the prefix makes a leaked one recognizable (secret
scanners, a student reading a config file); ``<id>`` is a random public handle that finds the row
with one indexed lookup; ``<secret>`` is 256 random bits, compared as an HMAC-SHA256 under a key
derived from the deployment key with ``hmac.compare_digest``. Not argon2 or bcrypt: a slow hash
protects guessable passwords, and a 256-bit random secret cannot be guessed, while every MCP
request checks the token, so a slow hash would only cost each request tens of milliseconds. The
key means that a copy of the database alone cannot even test a guess.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send
from sqlalchemy import ForeignKey, Integer, String, Text, bindparam, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from campus_mcp.assembly.access import TOKENS_PAGE
from campus_mcp.base.db import Base, UTCDateTime, utcnow
from campus_mcp.base.settings import Settings
from campus_mcp.oauth.accounts import Student
from campus_mcp.plugin.principal import Principal

PREFIX = "cmcp_pat_"
# The REST API's root (campus_mcp.web.openapi documents what is under it): there a bearer token must be
# a personal access token (rest_token_middleware_factory).
REST_API_PATH = "/api/v1"
# The choices of the dashboard form; nothing longer is accepted, so a forgotten token dies.
EXPIRY_DAYS = (7, 30, 90)
DEFAULT_EXPIRY_DAYS = 30
NAME_LIMIT = 60
# Enough for every script and client a student runs; a runaway script cannot fill the table.
LIVE_LIMIT = 20
# A token used again within this long keeps its old "last used": one write a minute at most,
# not one per MCP request.
LAST_USED_GRANULARITY = timedelta(minutes=1)
# The principal's client id: idempotency keys and sealed requestState are bound to it.
CLIENT_PREFIX = "personal-token:"

_TOKEN = re.compile(r"cmcp_pat_([0-9a-f]{12})_([A-Za-z0-9_-]{43})")

TokenResolver = Callable[[str], Awaitable[Principal | None]]


class PersonalToken(Base):
    __tablename__ = "personal_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    public_id: Mapped[str] = mapped_column(String(24), unique=True)
    user_id: Mapped[int] = mapped_column(Integer, ForeignKey("students.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    scope: Mapped[str] = mapped_column(Text)
    secret_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


@dataclasses.dataclass(frozen=True)
class TokenInfo:
    """A live token as Connected apps lists it (never the secret)."""

    public_id: str
    name: str
    scopes: tuple[str, ...]
    created_at: datetime
    expires_at: datetime
    last_used_at: datetime | None


class TokenRefused(ValueError):
    """A token that cannot be made: the sentence says what was wrong and what to do."""


def looks_personal(token: str) -> bool:
    return token.startswith(PREFIX)


def token_key(settings: Settings) -> bytes:
    # A key of its own, derived from the deployment key, so it never doubles as the seal key.
    return hashlib.sha256(b"campus-mcp personal token\0" + settings.seal_key()).digest()


def _secret_hash(key: bytes, public_id: str, secret: str) -> str:
    # The public id is in the message too: a hash cannot be moved to another row.
    return hmac.new(key, f"{public_id}:{secret}".encode(), hashlib.sha256).hexdigest()


def clean_name(raw: str) -> str:
    """The token's name as the student typed it, trimmed, or TokenRefused."""
    name = " ".join(raw.split())
    if not name:
        raise TokenRefused("Give the token a name, for example the script or app that will use it.")
    if len(name) > NAME_LIMIT:
        raise TokenRefused(f"The name is {len(name)} characters long; use at most {NAME_LIMIT}.")
    if any(not character.isprintable() for character in name):
        raise TokenRefused("The name has characters that cannot be shown; use letters, digits and punctuation.")
    return name


class PersonalTokens:
    """The store of personal access tokens, on the shared database."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], settings: Settings) -> None:
        self.sessions = sessions
        self.settings = settings
        self._key = token_key(settings)

    async def create(self, user_id: int, *, name: str, scope: str, days: int) -> str:
        """Make a token and return it: the only time it exists outside the student's hands."""
        if days not in EXPIRY_DAYS:
            choices = ", ".join(str(d) for d in EXPIRY_DAYS)
            raise TokenRefused(f"Choose an expiry of {choices} days.")
        name = clean_name(name)
        public_id = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        now = utcnow()
        async with self.sessions() as session, session.begin():
            live = await session.scalar(
                select(func.count(PersonalToken.id)).where(
                    PersonalToken.user_id == user_id,
                    PersonalToken.revoked_at.is_(None),
                    PersonalToken.expires_at > now,
                )
            )
            if (live or 0) >= LIVE_LIMIT:
                raise TokenRefused(
                    f"You have {LIVE_LIMIT} live tokens, the most one student may hold. "
                    "Disconnect one you no longer use, then make this one."
                )
            session.add(
                PersonalToken(
                    public_id=public_id,
                    user_id=user_id,
                    name=name,
                    scope=scope,
                    secret_hash=_secret_hash(self._key, public_id, secret),
                    created_at=now,
                    expires_at=now + timedelta(days=days),
                )
            )
        return f"{PREFIX}{public_id}_{secret}"

    async def principal_for(self, token: str) -> Principal | None:
        """The principal of a live token: its student with exactly the token's scopes; else None."""
        parts = _TOKEN.fullmatch(token)
        if parts is None:
            return None
        public_id, secret = parts.groups()
        now = utcnow()
        async with self.sessions() as session:
            found = (await session.execute(_TOKEN_AND_STUDENT, {"public_id": public_id})).first()
            if found is None:
                return None
            row, username = found
            expected = _secret_hash(self._key, public_id, secret)
            if not hmac.compare_digest(row.secret_hash, expected):
                return None
            if row.revoked_at is not None or row.expires_at <= now:
                return None
            if row.last_used_at is None or now - row.last_used_at >= LAST_USED_GRANULARITY:
                await session.execute(update(PersonalToken).where(PersonalToken.id == row.id).values(last_used_at=now))
                await session.commit()
        return Principal(
            user_id=row.user_id,
            username=username,
            client_id=CLIENT_PREFIX + public_id,
            scopes=frozenset(row.scope.split()),
            audience=self.settings.mcp_url,
            personal_token=True,
        )

    async def live(self, user_id: int) -> list[TokenInfo]:
        """The student's tokens that still work, newest first."""
        now = utcnow()
        async with self.sessions() as session:
            rows = await session.scalars(
                select(PersonalToken)
                .where(
                    PersonalToken.user_id == user_id,
                    PersonalToken.revoked_at.is_(None),
                    PersonalToken.expires_at > now,
                )
                .order_by(PersonalToken.created_at.desc(), PersonalToken.id.desc())
            )
            return [
                TokenInfo(
                    public_id=row.public_id,
                    name=row.name,
                    scopes=tuple(row.scope.split()),
                    created_at=row.created_at,
                    expires_at=row.expires_at,
                    last_used_at=row.last_used_at,
                )
                for row in rows
            ]

    async def revoked_name(self, user_id: int, public_id: str) -> str | None:
        """The name of the student's own token ``public_id`` once revoked, or None: what a
        "Disconnected ..." notice may name (never the text of its link)."""
        async with self.sessions() as session:
            return await session.scalar(
                select(PersonalToken.name).where(
                    PersonalToken.user_id == user_id,
                    PersonalToken.public_id == public_id,
                    PersonalToken.revoked_at.is_not(None),
                )
            )

    async def revoke(self, user_id: int, public_id: str) -> str | None:
        """Revoke one of the student's own tokens; its name, or None when there was no such live token."""
        async with self.sessions() as session, session.begin():
            row = await session.scalar(
                select(PersonalToken).where(
                    PersonalToken.user_id == user_id,
                    PersonalToken.public_id == public_id,
                    PersonalToken.revoked_at.is_(None),
                )
            )
            if row is None:
                return None
            row.revoked_at = utcnow()
            return row.name


# The statement of every request with a personal token, built once.
_TOKEN_AND_STUDENT = (
    select(PersonalToken, Student.username)
    .join(Student, Student.id == PersonalToken.user_id)
    .where(PersonalToken.public_id == bindparam("public_id"))
)


def bearer_resolver(personal: PersonalTokens, oauth: TokenResolver) -> TokenResolver:
    """The MCP endpoint's TokenResolver: a personal access token by its prefix, else an OAuth token."""

    async def resolve(token: str) -> Principal | None:
        if looks_personal(token):
            return await personal.principal_for(token)
        return await oauth(token)

    return resolve


def _bearer(scope: Scope) -> str | None:
    for key, value in scope["headers"]:
        if key.lower() == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" else None
    return None


def rest_token_middleware_factory(
    personal: PersonalTokens, skip_prefixes: Sequence[str], *, rest_api: str | None = REST_API_PATH
) -> Any:
    """ASGI middleware: a personal access token on a REST request signs that request in.

    The token's principal replaces the browser session's for ``scope["campus_principal"]``, so a
    REST twin holds it to the token's scopes. Pages read the session only, so a token never opens
    the dashboard. A token that does not resolve (unknown, expired, revoked) gets the 401 the MCP
    endpoint answers. ``skip_prefixes`` are the paths that check tokens themselves (``/api/mcp``).

    Under ``rest_api`` (``/api/v1``) any other bearer token gets a 401 too, saying what REST takes:
    an OAuth access token is bound to the MCP resource (RFC 8707), so REST may not accept it, and
    ignoring it would answer as if anonymous ("sign in") to a caller who thinks it has. Elsewhere
    (``/metrics`` reads its own bearer token) other tokens are left alone.
    """
    foreign = _foreign_token_body(personal.settings)

    def on_rest_api(path: str) -> bool:
        return rest_api is not None and (path == rest_api or path.startswith(rest_api + "/"))

    def middleware(app: ASGIApp) -> ASGIApp:
        async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
            path = scope["path"] if scope["type"] == ScopeType.HTTP else ""
            if path and not any(path.startswith(p) for p in skip_prefixes):
                token = _bearer(scope)
                if token is not None and looks_personal(token):
                    principal = await personal.principal_for(token)
                    if principal is None:
                        await _unauthorized(send)
                        return
                    scope["campus_principal"] = principal  # type: ignore[typeddict-unknown-key]
                elif token is not None and on_rest_api(path):
                    await _unauthorized(send, foreign, _FOREIGN_CHALLENGE)
                    return
            await app(scope, receive, send)

        return wrapped

    return middleware


_INVALID_BODY = (
    b'{"error":"invalid_token","error_description":"The personal access token is invalid, expired or revoked. '
    b'Make a new one on the dashboard (Access tokens)."}'
)


def _foreign_token_body(settings: Settings) -> bytes:
    # The URLs come from the settings, so the sentence goes through json.dumps, not a literal.
    said = (
        "The REST API takes a personal access token (cmcp_pat_...), not this bearer token: an OAuth "
        f"access token of an app works on the MCP server ({settings.mcp_url}) only. Make a personal "
        f"access token on the dashboard's Access tokens page ({settings.base_url}{TOKENS_PAGE}), "
        "or send no Authorization header to the public routes."
    )
    return json.dumps({"error": "invalid_token", "error_description": said}, separators=(",", ":")).encode()


_INVALID_CHALLENGE = b'Bearer error="invalid_token", error_description="The token is invalid or expired"'
_FOREIGN_CHALLENGE = b'Bearer error="invalid_token", error_description="The REST API takes a personal access token"'


async def _unauthorized(send: Send, body: bytes = _INVALID_BODY, challenge: bytes = _INVALID_CHALLENGE) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", challenge),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})
