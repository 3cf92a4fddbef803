"""The OAuth 2.1 authorization server in the host (DESIGN section 6, docs/sign-in.md).

``server`` glues authlib to Litestar and the store; ``routes`` and ``login`` are the HTTP side;
``cimd`` fetches client ID metadata documents behind the SSRF guard; ``cleanup`` is the job that
deletes unused self-registered clients. The MCP endpoint resolves bearer tokens through
``OAuthService.resolve_token``.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.assembly.registry import Registry
from campus_mcp.oauth.server import OAuthService
from campus_mcp.oauth.store import OAuthStore


def build_oauth(registry: Registry, sessions: async_sessionmaker[AsyncSession]) -> OAuthService:
    return OAuthService(registry, OAuthStore(sessions))


__all__ = ["OAuthService", "OAuthStore", "build_oauth"]
