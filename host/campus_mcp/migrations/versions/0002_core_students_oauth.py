"""core: students and the OAuth authorization server

Revision ID: core_0002
Revises: core_0001
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp.base.db import UTCDateTime

revision: str = "core_0002"
down_revision: str | Sequence[str] | None = "core_0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "students",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("username", sa.String(150), nullable=False),
        sa.Column("display_name", sa.String(200), nullable=False),
        sa.Column("email", sa.String(320), nullable=True),
        sa.Column("password_hash", sa.String(200), nullable=True),
        sa.Column("is_demo", sa.Boolean(), nullable=False),
        sa.Column("oidc_issuer", sa.String(500), nullable=True),
        sa.Column("oidc_subject", sa.String(255), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("username", name="uq_students_username"),
        sa.UniqueConstraint("oidc_issuer", "oidc_subject", name="uq_students_oidc"),
    )
    op.create_table(
        "oauth_clients",
        sa.Column("client_id", sa.String(2000), primary_key=True),
        sa.Column("kind", sa.String(30), nullable=False),
        sa.Column("client_name", sa.String(300), nullable=False),
        sa.Column("client_uri", sa.String(2000), nullable=True),
        sa.Column("redirect_uris", sa.JSON(), nullable=False),
        sa.Column("grant_types", sa.JSON(), nullable=False),
        sa.Column("scope", sa.Text(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("fetched_at", UTCDateTime(), nullable=True),
    )
    op.create_table(
        "oauth_codes",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("code_hash", sa.String(64), nullable=False),
        sa.Column(
            "client_id",
            sa.String(2000),
            sa.ForeignKey("oauth_clients.client_id", ondelete="CASCADE", name="fk_oauth_codes_client_id_oauth_clients"),
            nullable=False,
        ),
        sa.Column(
            "user_id",
            sa.Integer(),
            sa.ForeignKey("students.id", ondelete="CASCADE", name="fk_oauth_codes_user_id_students"),
            nullable=False,
        ),
        sa.Column("redirect_uri", sa.String(2000), nullable=False),
        sa.Column("scope", sa.Text(), nullable=False),
        sa.Column("resource", sa.String(2000), nullable=False),
        sa.Column("code_challenge", sa.String(128), nullable=False),
        sa.Column("family_id", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("used_at", UTCDateTime(), nullable=True),
        sa.UniqueConstraint("code_hash", name="uq_oauth_codes_code_hash"),
    )
    op.create_table(
        "oauth_tokens",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("family_id", sa.String(64), nullable=False),
        sa.Column(
            "client_id",
            sa.String(2000),
            sa.ForeignKey(
                "oauth_clients.client_id", ondelete="CASCADE", name="fk_oauth_tokens_client_id_oauth_clients"
            ),
            nullable=False,
        ),
        sa.Column(
            "user_id",
            sa.Integer(),
            sa.ForeignKey("students.id", ondelete="CASCADE", name="fk_oauth_tokens_user_id_students"),
            nullable=False,
        ),
        sa.Column("scope", sa.Text(), nullable=False),
        sa.Column("resource", sa.String(2000), nullable=False),
        sa.Column("access_token_hash", sa.String(64), nullable=False),
        sa.Column("refresh_token_hash", sa.String(64), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("access_expires_at", UTCDateTime(), nullable=False),
        sa.Column("refresh_expires_at", UTCDateTime(), nullable=True),
        sa.Column("refresh_used_at", UTCDateTime(), nullable=True),
        sa.Column("revoked_at", UTCDateTime(), nullable=True),
        sa.UniqueConstraint("access_token_hash", name="uq_oauth_tokens_access_token_hash"),
        sa.UniqueConstraint("refresh_token_hash", name="uq_oauth_tokens_refresh_token_hash"),
    )
    op.create_index("ix_oauth_tokens_family_id", "oauth_tokens", ["family_id"])
    op.create_table(
        "oauth_consents",
        sa.Column(
            "user_id",
            sa.Integer(),
            sa.ForeignKey("students.id", ondelete="CASCADE", name="fk_oauth_consents_user_id_students"),
            primary_key=True,
        ),
        sa.Column("client_id", sa.String(2000), primary_key=True),
        sa.Column("scopes", sa.JSON(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "login_failures",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("address", sa.String(64), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
    )
    op.create_index("ix_login_failures_address", "login_failures", ["address"])


def downgrade() -> None:
    op.drop_index("ix_login_failures_address", "login_failures")
    op.drop_table("login_failures")
    op.drop_table("oauth_consents")
    op.drop_index("ix_oauth_tokens_family_id", "oauth_tokens")
    op.drop_table("oauth_tokens")
    op.drop_table("oauth_codes")
    op.drop_table("oauth_clients")
    op.drop_table("students")
