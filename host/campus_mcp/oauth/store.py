"""Storage of the authorization server: async, on the shared database.

Invariants, each held by a test in ``tests/oauth/test_oauth_rules.py``:

- a code is claimed (``used_at`` set) by one atomic UPDATE the moment a token request presents
  it, before the verifier is checked: a wrong verifier burns it, and two racing requests cannot
  both win; a code presented again revokes every token issued from it;
- a refresh is looked at before it is claimed: a request the grant refuses (another client, a
  wider scope) leaves the token as it was. The claim and the new pair are one transaction
  (:meth:`OAuthStore.rotate_refresh_token`), so of racing refreshes one wins, and the others,
  finding it used, revoke the family after the winner's pair is saved, not before;
- presenting a used refresh token again (reuse: it leaked, RFC 9700 4.14.2) revokes the whole
  family, the rotated tokens included (``tests/oauth/test_security_refresh.py``);
- only hashes are stored or looked up.
"""

from __future__ import annotations

import dataclasses
import uuid
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import bindparam, delete, select, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.base.db import utcnow
from campus_mcp.oauth.accounts import Student
from campus_mcp.oauth.models import (
    AuthorizationCode,
    Consent,
    OAuthClient,
    OAuthToken,
    credential_hash,
)
from campus_mcp.plugin.principal import Principal

ACCESS_TOKEN_SECONDS = 3600
REFRESH_TOKEN_DAYS = 90
CODE_SECONDS = 120
# A self-registered client that never got a token is deleted after this (seed 000).
UNUSED_CLIENT_AGE = timedelta(days=1)
GRANT_TYPES = ("authorization_code", "refresh_token")
# What became of a refresh: a new pair, reuse detected (the family is revoked), or the token had
# ended meanwhile (revoked, expired or deleted).
Rotation = Literal["issued", "reused", "ended"]


@dataclasses.dataclass(frozen=True)
class ClientRecord:
    """A client as authlib sees it (``ClientMixin``). Every client is public: no secret."""

    client_id: str
    kind: str
    client_name: str
    redirect_uris: tuple[str, ...]
    scope: str = ""
    client_uri: str | None = None

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return self.redirect_uris[0] if len(self.redirect_uris) == 1 else None

    def get_allowed_scope(self, scope: str | None) -> str:
        # The requested scopes were checked against the registry already; the client's
        # registered list is informational (it is brought up to date at the next sign-in).
        return scope or ""

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        return False

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == "none"

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in GRANT_TYPES


@dataclasses.dataclass(frozen=True)
class UserRecord:
    id: int
    username: str


@dataclasses.dataclass(frozen=True)
class CodeRecord:
    """A claimed authorization code (``AuthorizationCodeMixin``)."""

    id: int
    client_id: str
    user: UserRecord
    redirect_uri: str
    scope: str
    resource: str
    code_challenge: str
    family_id: str
    code_challenge_method: str = "S256"

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


@dataclasses.dataclass(frozen=True)
class TokenRecord:
    """One issuance (``TokenMixin``)."""

    id: int
    client_id: str
    user: UserRecord
    scope: str
    resource: str
    family_id: str
    revoked: bool
    access_expires_at: datetime
    refresh_expires_at: datetime | None = None
    refresh_used: bool = False

    def check_client(self, client: ClientRecord) -> bool:
        return client.client_id == self.client_id

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return ACCESS_TOKEN_SECONDS

    def is_expired(self) -> bool:
        return self.access_expires_at <= utcnow()

    def is_revoked(self) -> bool:
        return self.revoked

    def get_user(self) -> UserRecord:
        return self.user


@dataclasses.dataclass(frozen=True)
class ConnectedApp:
    client_id: str
    client_name: str
    scopes: tuple[str, ...]  # every live token's together: what the app can do with all of them
    since: datetime
    # Each distinct set of scopes its live tokens hold (oldest first): `campus-mcp token` makes a
    # token per run, so the "campus-mcp cli" connection shows each, not one merged list.
    grants: tuple[tuple[str, ...], ...] = ()


def _client_record(row: OAuthClient) -> ClientRecord:
    return ClientRecord(
        client_id=row.client_id,
        kind=row.kind,
        client_name=row.client_name,
        redirect_uris=tuple(row.redirect_uris),
        scope=row.scope,
        client_uri=row.client_uri,
    )


def _rowcount(result: object) -> int:
    return result.rowcount if isinstance(result, CursorResult) else 0


# The statement of every MCP request's token, built once (built per request, it and its cache key
# were a tenth of a small answer's CPU).
_TOKEN_AND_STUDENT = (
    select(OAuthToken, Student.username, OAuthClient.client_name)
    .join(Student, Student.id == OAuthToken.user_id)
    .outerjoin(OAuthClient, OAuthClient.client_id == OAuthToken.client_id)
    .where(OAuthToken.access_token_hash == bindparam("digest"))
)


class OAuthStore:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    # clients -------------------------------------------------------------------------------

    async def client(self, client_id: str) -> tuple[ClientRecord, datetime | None] | None:
        """The stored client and, for a metadata document, when it was fetched."""
        async with self.sessions() as session:
            row = await session.get(OAuthClient, client_id)
            return None if row is None else (_client_record(row), row.fetched_at)

    async def save_client(self, record: ClientRecord, *, fetched_at: datetime | None = None) -> None:
        async with self.sessions() as session, session.begin():
            row = await session.get(OAuthClient, record.client_id)
            if row is None:
                row = OAuthClient(client_id=record.client_id, kind=record.kind, created_at=utcnow())
                session.add(row)
            row.client_name = record.client_name
            row.client_uri = record.client_uri
            row.redirect_uris = list(record.redirect_uris)
            row.grant_types = list(GRANT_TYPES)
            row.scope = record.scope
            row.fetched_at = fetched_at

    async def update_client_scope(self, client_id: str, scope: str) -> None:
        """A client registered before the scopes were split lists ``read``; sign-in updates it."""
        async with self.sessions() as session, session.begin():
            await session.execute(update(OAuthClient).where(OAuthClient.client_id == client_id).values(scope=scope))

    async def delete_unused_clients(self, now: datetime | None = None) -> int:
        cutoff = (now or utcnow()) - UNUSED_CLIENT_AGE
        async with self.sessions() as session, session.begin():
            has_token = select(OAuthToken.id).where(OAuthToken.client_id == OAuthClient.client_id).exists()
            result = await session.execute(
                delete(OAuthClient).where(OAuthClient.kind == "registered", OAuthClient.created_at < cutoff, ~has_token)
            )
            # Codes expire within minutes; old ones only matter as reuse evidence for a while.
            await session.execute(delete(AuthorizationCode).where(AuthorizationCode.expires_at < cutoff))
            return _rowcount(result)

    # codes ---------------------------------------------------------------------------------

    async def save_code(
        self,
        code: str,
        *,
        client_id: str,
        user_id: int,
        redirect_uri: str,
        scope: str,
        resource: str,
        code_challenge: str,
    ) -> None:
        now = utcnow()
        async with self.sessions() as session, session.begin():
            session.add(
                AuthorizationCode(
                    code_hash=credential_hash(code),
                    client_id=client_id,
                    user_id=user_id,
                    redirect_uri=redirect_uri,
                    scope=scope,
                    resource=resource,
                    code_challenge=code_challenge,
                    family_id=uuid.uuid4().hex,
                    created_at=now,
                    expires_at=now + timedelta(seconds=CODE_SECONDS),
                )
            )

    async def claim_code(self, code: str, client_id: str) -> CodeRecord | None:
        """Use up the code. None when unknown, expired, another client's or already used."""
        digest = credential_hash(code)
        now = utcnow()
        async with self.sessions() as session, session.begin():
            claimed = await session.execute(
                update(AuthorizationCode)
                .where(AuthorizationCode.code_hash == digest, AuthorizationCode.used_at.is_(None))
                .values(used_at=now)
                .execution_options(synchronize_session=False)
            )
            row = (
                await session.execute(select(AuthorizationCode).where(AuthorizationCode.code_hash == digest))
            ).scalar_one_or_none()
            if row is None:
                return None
            if _rowcount(claimed) != 1:
                # Presented again: whoever holds it now may be an attacker (RFC 6749 4.1.2).
                await self._revoke_family(session, row.family_id, now)
                return None
            if row.client_id != client_id or row.expires_at <= now:
                return None
            student = await session.get(Student, row.user_id)
            if student is None:
                return None
            return CodeRecord(
                id=row.id,
                client_id=row.client_id,
                user=UserRecord(id=student.id, username=student.username),
                redirect_uri=row.redirect_uri,
                scope=row.scope,
                resource=row.resource,
                code_challenge=row.code_challenge,
                family_id=row.family_id,
            )

    # tokens --------------------------------------------------------------------------------

    async def save_tokens(
        self,
        *,
        access_token: str,
        refresh_token: str | None,
        client_id: str,
        user_id: int,
        scope: str,
        resource: str,
        family_id: str,
        access_seconds: int = ACCESS_TOKEN_SECONDS,
    ) -> None:
        now = utcnow()
        async with self.sessions() as session, session.begin():
            session.add(
                self._issuance(
                    now,
                    access_token=access_token,
                    refresh_token=refresh_token,
                    client_id=client_id,
                    user_id=user_id,
                    scope=scope,
                    resource=resource,
                    family_id=family_id,
                    access_seconds=access_seconds,
                )
            )

    @staticmethod
    def _issuance(
        now: datetime,
        *,
        access_token: str,
        refresh_token: str | None,
        client_id: str,
        user_id: int,
        scope: str,
        resource: str,
        family_id: str,
        access_seconds: int = ACCESS_TOKEN_SECONDS,
    ) -> OAuthToken:
        """The row of one issuance: hashes only, lifetimes from now (``campus-mcp token`` may
        choose a shorter or longer access lifetime than the authorization server's hour)."""
        return OAuthToken(
            family_id=family_id,
            client_id=client_id,
            user_id=user_id,
            scope=scope,
            resource=resource,
            access_token_hash=credential_hash(access_token),
            refresh_token_hash=credential_hash(refresh_token) if refresh_token else None,
            created_at=now,
            access_expires_at=now + timedelta(seconds=access_seconds),
            refresh_expires_at=now + timedelta(days=REFRESH_TOKEN_DAYS) if refresh_token else None,
        )

    async def _record(self, session: AsyncSession, row: OAuthToken) -> TokenRecord | None:
        student = await session.get(Student, row.user_id)
        if student is None:
            return None
        return TokenRecord(
            id=row.id,
            client_id=row.client_id,
            user=UserRecord(id=student.id, username=student.username),
            scope=row.scope,
            resource=row.resource,
            family_id=row.family_id,
            revoked=row.revoked_at is not None,
            access_expires_at=row.access_expires_at,
            refresh_expires_at=row.refresh_expires_at,
            refresh_used=row.refresh_used_at is not None,
        )

    async def find_refresh_token(self, refresh_token: str) -> TokenRecord | None:
        """The issuance a refresh token belongs to, as it is; nothing is claimed or changed."""
        async with self.sessions() as session:
            row = (
                await session.execute(
                    select(OAuthToken).where(OAuthToken.refresh_token_hash == credential_hash(refresh_token))
                )
            ).scalar_one_or_none()
            return None if row is None else await self._record(session, row)

    async def rotate_refresh_token(
        self, used: TokenRecord, *, access_token: str, refresh_token: str, scope: str
    ) -> Rotation:
        """Claim ``used`` and save the pair that replaces it, in one transaction.

        The claim is a conditional UPDATE (``refresh_used_at IS NULL``), so one of many racing
        refreshes wins; the winner's row lock makes the others wait until its pair is committed.
        A loser then finds the token used, which is reuse: it revokes the family, and the
        revocation reaches the winner's pair, because that pair was saved with the claim.
        """
        now = utcnow()
        async with self.sessions() as session, session.begin():
            claimed = await session.execute(
                update(OAuthToken)
                .where(
                    OAuthToken.id == used.id,
                    OAuthToken.refresh_used_at.is_(None),
                    OAuthToken.revoked_at.is_(None),
                    OAuthToken.refresh_expires_at > now,
                )
                .values(refresh_used_at=now)
                .execution_options(synchronize_session=False)
            )
            if _rowcount(claimed) != 1:
                row = await session.get(OAuthToken, used.id)
                if row is not None and row.refresh_used_at is not None:
                    await self._revoke_family(session, row.family_id, now)
                    return "reused"
                return "ended"
            session.add(
                self._issuance(
                    now,
                    access_token=access_token,
                    refresh_token=refresh_token,
                    client_id=used.client_id,
                    user_id=used.user.id,
                    scope=scope,
                    resource=used.resource,
                    family_id=used.family_id,
                )
            )
            return "issued"

    async def find_token(self, token: str, hint: str | None) -> TokenRecord | None:
        digest = credential_hash(token)
        columns: dict[str, list[Any]] = {
            "access_token": [OAuthToken.access_token_hash],
            "refresh_token": [OAuthToken.refresh_token_hash],
        }
        async with self.sessions() as session:
            for column in columns.get(hint or "", [OAuthToken.access_token_hash, OAuthToken.refresh_token_hash]):
                row = (await session.execute(select(OAuthToken).where(column == digest))).scalar_one_or_none()
                if row is not None:
                    return await self._record(session, row)
            return None

    async def revoke(self, record: TokenRecord, *, family: bool) -> None:
        now = utcnow()
        async with self.sessions() as session, session.begin():
            if family:
                await self._revoke_family(session, record.family_id, now)
            else:
                await session.execute(
                    update(OAuthToken)
                    .where(OAuthToken.id == record.id, OAuthToken.revoked_at.is_(None))
                    .values(revoked_at=now)
                )

    @staticmethod
    async def _revoke_family(session: AsyncSession, family_id: str, now: datetime) -> None:
        # Lock the family's rows in id order before changing them: racing refreshes that all found
        # reuse revoke the same rows at once, and two UPDATEs that reach them in different orders
        # deadlocked on PostgreSQL (1 in about 40 races of ten). SQLite ignores FOR UPDATE; it lets
        # one writer in at a time anyway.
        await session.execute(
            select(OAuthToken.id).where(OAuthToken.family_id == family_id).order_by(OAuthToken.id).with_for_update()
        )
        await session.execute(
            update(OAuthToken)
            .where(OAuthToken.family_id == family_id, OAuthToken.revoked_at.is_(None))
            .values(revoked_at=now)
            .execution_options(synchronize_session=False)
        )

    async def principal_for(self, access_token: str, audience: str) -> Principal | None:
        """The principal of a live access token issued for ``audience``; None otherwise."""
        digest = credential_hash(access_token)
        # One query per MCP request: the token and its student together.
        async with self.sessions() as session:
            found = (await session.execute(_TOKEN_AND_STUDENT, {"digest": digest})).first()
        if found is None:
            return None
        row, username, client_name = found
        if row.revoked_at is not None or row.access_expires_at <= utcnow() or row.resource != audience:
            return None
        return Principal(
            user_id=row.user_id,
            username=username,
            client_id=row.client_id,
            scopes=frozenset(row.scope.split()),
            audience=row.resource,
            client_name=client_name,
        )

    async def live_resource(self, access_token: str) -> str | None:
        """The resource (RFC 8707) a live access token was issued for, whatever endpoint asks; None
        for a token that is unknown, revoked or expired. Only for saying why a token was refused."""
        async with self.sessions() as session:
            row = (
                await session.execute(
                    select(OAuthToken.resource, OAuthToken.revoked_at, OAuthToken.access_expires_at).where(
                        OAuthToken.access_token_hash == credential_hash(access_token)
                    )
                )
            ).first()
        if row is None or row.revoked_at is not None or row.access_expires_at <= utcnow():
            return None
        return str(row.resource)

    async def has_live_grant(self, user_id: int, client_id: str) -> bool:
        now = utcnow()
        async with self.sessions() as session:
            found = await session.execute(
                select(OAuthToken.id)
                .where(
                    OAuthToken.user_id == user_id,
                    OAuthToken.client_id == client_id,
                    OAuthToken.revoked_at.is_(None),
                    (OAuthToken.access_expires_at > now) | (OAuthToken.refresh_expires_at > now),
                )
                .limit(1)
            )
            return found.first() is not None

    # connected apps ------------------------------------------------------------------------

    async def connected_apps(self, user_id: int) -> list[ConnectedApp]:
        """Each app with a live token of this student, with the scopes those tokens hold."""
        now = utcnow()
        async with self.sessions() as session:
            rows = (
                await session.execute(
                    select(OAuthToken, OAuthClient)
                    .join(OAuthClient, OAuthClient.client_id == OAuthToken.client_id)
                    .where(
                        OAuthToken.user_id == user_id,
                        OAuthToken.revoked_at.is_(None),
                        (OAuthToken.access_expires_at > now)
                        | ((OAuthToken.refresh_expires_at > now) & OAuthToken.refresh_used_at.is_(None)),
                    )
                    .order_by(OAuthToken.created_at)
                )
            ).all()
        apps: dict[str, ConnectedApp] = {}
        for token, client in rows:
            known = apps.get(client.client_id)
            scopes = set(token.scope.split()) | set(known.scopes if known else ())
            grant = tuple(sorted(set(token.scope.split())))
            grants = known.grants if known else ()
            apps[client.client_id] = ConnectedApp(
                client_id=client.client_id,
                client_name=client.client_name,
                scopes=tuple(sorted(scopes)),
                since=known.since if known else token.created_at,
                grants=grants if grant in grants else (*grants, grant),
            )
        return sorted(apps.values(), key=lambda app: app.client_name.lower())

    async def disconnected_name(self, user_id: int, client_id: str) -> str | None:
        """The name of an app this student gave a token that is now revoked, or None: what the
        Settings page's "Disconnected ..." notice may name (never the text of its link)."""
        async with self.sessions() as session:
            found = await session.scalar(
                select(OAuthClient.client_name)
                .join(OAuthToken, OAuthToken.client_id == OAuthClient.client_id)
                .where(
                    OAuthToken.user_id == user_id,
                    OAuthToken.client_id == client_id,
                    OAuthToken.revoked_at.is_not(None),
                )
                .limit(1)
            )
            return None if found is None else str(found)

    async def disconnect(self, user_id: int, client_id: str) -> int:
        """Revoke every token this student gave this app. Returns how many were live."""
        async with self.sessions() as session, session.begin():
            result = await session.execute(
                update(OAuthToken)
                .where(
                    OAuthToken.user_id == user_id,
                    OAuthToken.client_id == client_id,
                    OAuthToken.revoked_at.is_(None),
                )
                .values(revoked_at=utcnow())
                .execution_options(synchronize_session=False)
            )
            return _rowcount(result)

    # consent memory ------------------------------------------------------------------------

    async def remembered_scopes(self, user_id: int, client_id: str) -> frozenset[str] | None:
        async with self.sessions() as session:
            row = await session.get(Consent, (user_id, client_id))
            return None if row is None else frozenset(row.scopes)

    async def remember_scopes(self, user_id: int, client_id: str, scopes: frozenset[str]) -> None:
        async with self.sessions() as session, session.begin():
            row = await session.get(Consent, (user_id, client_id))
            if row is None:
                session.add(Consent(user_id=user_id, client_id=client_id, scopes=sorted(scopes), updated_at=utcnow()))
            else:
                row.scopes = sorted(scopes)
                row.updated_at = utcnow()
