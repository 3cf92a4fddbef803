"""Readiness: ``/readyz`` says whether this process can answer, which ``/healthz`` (liveness) does not.

A load balancer sends traffic only to a worker whose ``/readyz`` is 200 and restarts one whose
``/healthz`` fails. They differ on purpose: while the database is unreachable every worker is
alive (restarting it would not bring the database back, and it recovers by itself when the
database answers again) but none is ready.
"""

from __future__ import annotations

import asyncio
from typing import Any

from litestar import MediaType, Response, get
from litestar.di import NamedDependency
from sqlalchemy import text

from campus_mcp.assembly.deployment import Deployment
from campus_mcp.base.db import DATABASE_UNREACHABLE_TEXT


@get("/readyz", media_type=MediaType.JSON, opt={"exclude_from_parity": True})
async def readyz(deployment: NamedDependency[Deployment]) -> Response[dict[str, Any]]:
    """200 when the database answers a query within ``database_timeout_seconds``, else 503."""

    async def ping() -> None:
        async with deployment.engine.connect() as connection:
            await connection.execute(text("SELECT 1"))

    try:
        # The whole check, connecting included, within the timeout: a black-holed database must
        # not hang the probe.
        await asyncio.wait_for(ping(), deployment.registry.settings.database_timeout_seconds)
    except Exception as exc:
        # No driver text: it can name the database host and user.
        return Response(
            {
                "status": "unavailable",
                "database": "unreachable",
                "message": DATABASE_UNREACHABLE_TEXT,
                "reason": type(exc).__name__,
            },
            status_code=503,
            media_type=MediaType.JSON,
            headers={"Retry-After": "30"},
        )
    return Response({"status": "ready", "database": "ok"}, media_type=MediaType.JSON)
