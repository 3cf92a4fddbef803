"""The job that deletes self-registered clients that never got a token (seed 000).

Anybody may register a client (RFC 7591 without an initial access token), so registrations
that lead nowhere would pile up. One that has held no token a day after registering is
deleted. A client that did get tokens is kept even after they are revoked, so an app the
student disconnected can connect again with the client id it still holds. Metadata-document
clients are not deleted: they are only a one-hour copy of a document that lives elsewhere.
"""

from __future__ import annotations

from campus_mcp.oauth.store import OAuthStore
from campus_mcp.plugin.job_context import Cron, Job, JobContext, JobOutcome

JOB_ID = "core.unused_oauth_clients"


async def delete_unused_clients(context: JobContext) -> JobOutcome:
    deleted = await OAuthStore(context.sessions).delete_unused_clients()
    return JobOutcome(items=deleted, summary=f"deleted {deleted} unused self-registered client(s)")


def cleanup_job() -> Job:
    return Job(
        id=JOB_ID,
        description="Delete self-registered OAuth clients that hold no token one day after registering.",
        trigger=Cron(minute="17", hour="*"),
        run=delete_unused_clients,
    )
