"""The tables of the authorization server.

Every credential (authorization code, access token, refresh token) is stored as its SHA-256
hash only: a copy of the database gives nobody a working token. A token row is one issuance
(an access token and its refresh token); rows that descend from one authorization code share a
``family_id``, which is what a reused refresh token or a replayed code revokes.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from campus_mcp.base.db import Base, UTCDateTime, utcnow


def credential_hash(value: str) -> str:
    """The stored form of a code or token. SHA-256 suffices: the values are 256-bit random."""
    return hashlib.sha256(value.encode()).hexdigest()


class OAuthClient(Base):
    __tablename__ = "oauth_clients"

    # A client ID metadata document's client_id is its URL, so this column is long.
    client_id: Mapped[str] = mapped_column(String(2000), primary_key=True)
    # "registered" (RFC 7591) or "metadata_document"
    kind: Mapped[str] = mapped_column(String(30))
    client_name: Mapped[str] = mapped_column(String(300))
    client_uri: Mapped[str | None] = mapped_column(String(2000), nullable=True)
    redirect_uris: Mapped[list[str]] = mapped_column(JSON)
    grant_types: Mapped[list[str]] = mapped_column(JSON)
    scope: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # When the metadata document was last fetched (kind "metadata_document" only).
    fetched_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class AuthorizationCode(Base):
    __tablename__ = "oauth_codes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    client_id: Mapped[str] = mapped_column(String(2000), ForeignKey("oauth_clients.client_id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(Integer, ForeignKey("students.id", ondelete="CASCADE"))
    redirect_uri: Mapped[str] = mapped_column(String(2000))
    scope: Mapped[str] = mapped_column(Text)
    resource: Mapped[str] = mapped_column(String(2000))
    code_challenge: Mapped[str] = mapped_column(String(128))
    family_id: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # Set the moment a token request presents the code, right or wrong: a code works once.
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class OAuthToken(Base):
    __tablename__ = "oauth_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    family_id: Mapped[str] = mapped_column(String(64), index=True)
    client_id: Mapped[str] = mapped_column(String(2000), ForeignKey("oauth_clients.client_id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(Integer, ForeignKey("students.id", ondelete="CASCADE"))
    scope: Mapped[str] = mapped_column(Text)
    # The audience (RFC 8707): the MCP endpoint URL the token was issued for.
    resource: Mapped[str] = mapped_column(String(2000))
    access_token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    refresh_token_hash: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    access_expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    refresh_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    refresh_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class Consent(Base):
    """The boxes a student checked for an app last time: they start checked next time."""

    __tablename__ = "oauth_consents"

    user_id: Mapped[int] = mapped_column(Integer, ForeignKey("students.id", ondelete="CASCADE"), primary_key=True)
    client_id: Mapped[str] = mapped_column(String(2000), primary_key=True)
    scopes: Mapped[list[str]] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class LoginFailure(Base):
    """A failed sign-in, by address and by the username it tried: the sign-in limits count these
    (shared by workers), each with its own threshold (``oauth/login_limit.py``)."""

    __tablename__ = "login_failures"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    address: Mapped[str] = mapped_column(String(64), index=True)
    # As typed, cleaned as accounts are looked up (stripped, lower case); unknown names count too.
    username: Mapped[str] = mapped_column(String(150), index=True, default="", server_default="")
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
