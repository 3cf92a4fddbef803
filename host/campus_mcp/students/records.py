"""What the host itself holds about one student, as parts of the student's export
(campus_mcp.students.export), each naming the tables it reads like a plugin's ``StudentData``.

Every row is exported whatever its state (a disconnected app's tokens, an expired personal token,
a sign-in code already used): the database still holds them, so a records request gets them. Never
a secret: no token, code or secret hash, no PKCE challenge.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_mcp.mcp.idempotency import IdempotencyKey, student_owner
from campus_mcp.oauth.models import AuthorizationCode, Consent, OAuthClient, OAuthToken
from campus_mcp.oauth.personal_tokens import PersonalToken
from campus_mcp.plugin.contributions import StudentData
from campus_mcp.students.access_log import entries


def _at(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


async def _app_names(session: AsyncSession, client_ids: set[str]) -> dict[str, str]:
    if not client_ids:
        return {}
    rows = await session.execute(
        select(OAuthClient.client_id, OAuthClient.client_name).where(OAuthClient.client_id.in_(sorted(client_ids)))
    )
    return {client_id: name for client_id, name in rows}


async def app_authorizations_of(session: AsyncSession, student_id: int) -> dict[str, list[dict[str, Any]]]:
    tokens = list(
        await session.scalars(select(OAuthToken).where(OAuthToken.user_id == student_id).order_by(OAuthToken.id))
    )
    codes = list(
        await session.scalars(
            select(AuthorizationCode).where(AuthorizationCode.user_id == student_id).order_by(AuthorizationCode.id)
        )
    )
    consents = list(
        await session.scalars(select(Consent).where(Consent.user_id == student_id).order_by(Consent.client_id))
    )
    client_ids = {row.client_id for row in tokens} | {row.client_id for row in codes}
    names = await _app_names(session, client_ids | {row.client_id for row in consents})
    return {
        "tokens": [
            {
                "app": names.get(row.client_id, ""),
                "client_id": row.client_id,
                "permissions": row.scope.split(),
                "given_at": row.created_at.isoformat(),
                "access_expires_at": row.access_expires_at.isoformat(),
                "refresh_expires_at": _at(row.refresh_expires_at),
                "refreshed_at": _at(row.refresh_used_at),
                "disconnected_at": _at(row.revoked_at),
            }
            for row in tokens
        ],
        "sign_in_codes": [
            {
                "app": names.get(row.client_id, ""),
                "client_id": row.client_id,
                "permissions": row.scope.split(),
                "made_at": row.created_at.isoformat(),
                "expires_at": row.expires_at.isoformat(),
                "used_at": _at(row.used_at),
            }
            for row in codes
        ],
        "permissions_remembered": [
            {
                "app": names.get(row.client_id, ""),
                "client_id": row.client_id,
                "permissions": list(row.scopes),
                "updated_at": row.updated_at.isoformat(),
            }
            for row in consents
        ],
    }


async def personal_tokens_of(session: AsyncSession, student_id: int) -> list[dict[str, Any]]:
    rows = await session.scalars(
        select(PersonalToken).where(PersonalToken.user_id == student_id).order_by(PersonalToken.id)
    )
    return [
        {
            "name": row.name,
            "permissions": row.scope.split(),
            "created_at": row.created_at.isoformat(),
            "expires_at": row.expires_at.isoformat(),
            "last_used_at": _at(row.last_used_at),
            "disconnected_at": _at(row.revoked_at),
        }
        for row in rows
    ]


async def changes_remembered_of(session: AsyncSession, student_id: int) -> list[dict[str, Any]]:
    # Kept a day so an app's retry repeats the first answer (campus_mcp.mcp.idempotency); the answer
    # itself is a copy of the change, which the family's part holds as it is now.
    rows = await session.scalars(
        select(IdempotencyKey)
        .where(IdempotencyKey.owner == student_owner(student_id))
        .order_by(IdempotencyKey.created_at)
    )
    return [{"tool": row.tool, "at": row.created_at.isoformat()} for row in rows]


async def activity_of(session: AsyncSession, student_id: int) -> list[dict[str, Any]]:
    return [entry.as_dict() for entry in await entries(session, student_id=student_id)]


HOST_STUDENT_DATA = (
    StudentData(
        key="personal_access_tokens",
        description="Personal access tokens, live, expired and disconnected (never the secret).",
        read=personal_tokens_of,
        tables=("personal_tokens",),
        plugin="core",
    ),
    StudentData(
        key="app_authorizations",
        description="Every OAuth token and sign-in code given to an app, and the permissions remembered per app.",
        read=app_authorizations_of,
        tables=("oauth_tokens", "oauth_codes", "oauth_consents"),
        plugin="core",
    ),
    StudentData(
        key="changes_remembered",
        description="Changes an app made in the last day, kept so that a retry does not repeat them.",
        read=changes_remembered_of,
        tables=("idempotency_keys",),
        plugin="core",
    ),
    StudentData(
        key="activity",
        description="The access log of the student's data that is still kept.",
        read=activity_of,
        tables=("student_access",),
        plugin="core",
    ),
)
