"""The catalog data version a session read is its own transaction's: closing the session ends it,
even when the close skips the rollback (a SQLite session that only read, ``db.make_sessions``)."""

from __future__ import annotations

from campus_catalog import data_version
from campus_mcp.testing import CampusFactory


async def test_a_closed_session_forgets_the_version_it_read(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=["catalog"])
    session = campus.deployment.sessions()
    await data_version.current(session)
    assert data_version.known(session) is not None
    await session.close()
    # Reused after the close, the session starts a new transaction: another process may have
    # committed since, so the old reading must not pass for this transaction's.
    assert data_version.known(session) is None
    await data_version.current(session)
    assert data_version.known(session) is not None
    await session.close()
