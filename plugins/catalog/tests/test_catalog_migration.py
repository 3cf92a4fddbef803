"""The catalog branch goes down and up alone, and the words index follows the rows it indexes
(SQLite FTS5 triggers, PostgreSQL expression indexes) on whichever backend the tests run on."""

from __future__ import annotations

import asyncio

from alembic import command
from campus_catalog.models import Course, Subject
from campus_catalog.queries import fulltext
from campus_mcp.testing import CampusFactory
from sqlalchemy import delete, inspect, update


async def test_catalog_branch_goes_down_and_up(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=["catalog"])

    async def tables() -> set[str]:
        async with campus.deployment.engine.connect() as connection:
            return set(await connection.run_sync(lambda sync: inspect(sync).get_table_names()))

    before = await tables()
    assert {"catalog_sections", "catalog_meeting_times", "catalog_reviews"} <= before
    config = campus.alembic_config()
    await asyncio.to_thread(command.downgrade, config, "catalog@base")
    assert not {t for t in await tables() if t.startswith("catalog_")}
    # The host's upgrade, not "heads": the config knows every installed plugin's branch, and
    # only the enabled ones (here the catalog alone) are upgraded.
    await campus.migrate()
    assert await tables() == before


async def test_words_index_follows_inserts_updates_and_deletes(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=["catalog"])
    async with campus.sessions() as session:
        session.add(Subject(code="FINC", name="Finance"))
        await session.flush()
        course = Course(subject_code="FINC", course_number="3300", title="Investments", description="Stocks and bonds.")
        session.add(course)
        await session.commit()
        assert await fulltext.matching_ids(session, "courses", "investing in stocks") == [course.id]
        await session.execute(update(Course).where(Course.id == course.id).values(title="Portfolio Theory"))
        await session.commit()
        assert await fulltext.matching_ids(session, "courses", "investments") == []
        assert await fulltext.matching_ids(session, "courses", "portfolio") == [course.id]
        await session.execute(delete(Course).where(Course.id == course.id))
        await session.commit()
        assert await fulltext.matching_ids(session, "courses", "portfolio") == []


async def test_student_words_cannot_break_the_search(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=["catalog"])
    async with campus.sessions() as session:
        for words in ['"unbalanced', "NEAR(a b)", "a* OR -b", "::*&|!", "the to of"]:
            assert await fulltext.matching_ids(session, "courses", words) == []
