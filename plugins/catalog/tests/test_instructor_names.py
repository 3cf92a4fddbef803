"""The instructors an ``instructor`` filter names, found in the roster held in process
(``campus_catalog.queries.instructor_names``), are the ones the database's own test names
(``instructor_filter._teachers``: SQLite's ``LIKE``, PostgreSQL's ``lower(name) LIKE``), for
names the demo campus lacks too: letters outside ASCII in either case, ``%`` and ``_``, a part
twice in one name, a line break. And the roster is never older than a change committed in this
process, follows another process's change when the call read the versions (the roster's own:
``test_roster_version``), and is not kept from a session with uncommitted writes.
search_instructors by name gives the same pages from it.
"""

from __future__ import annotations

import pytest
from campus_catalog import data_version
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Instructor
from campus_catalog.queries import instructor_filter, instructor_names, instructors
from campus_catalog.schemas import InstructorSearch
from campus_mcp import version_bump
from campus_mcp.testing import CampusFactory, CampusHarness
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

NAMES = (
    "María García",
    "GARCÍA Ortiz",
    "Élodie DURAND",
    "Renée O'Neil",
    "100% Smith",
    "Under_Score Jones",
    "Anna Annan",
    "Line\nBreak",
    "Zoë Ångström",
    "ǅemal Ǆ",
    "straße Weiss",
)
PARTS = (
    "garcía",
    "GARCÍA",
    "García",
    "garcia",
    "í",
    "Í",
    "élodie",
    "ÉLODIE",
    "durand",
    "o'neil",
    "%",
    "100%",
    "_",
    "r_s",
    "an",
    "anna",
    "e\nb",
    "\n",
    "ångström",
    "ÅNGSTRÖM",
    "ǆ",
    "Ǆ",
    "STRASSE",
    "ß",
    "a",
    " ",
    "nobody",
)


async def _asked(session: AsyncSession, instructor: str) -> list[int]:
    """What the database's own test names."""
    dialect = session.get_bind().dialect.name
    return sorted(await session.scalars(instructor_filter._teachers(instructor, dialect)))


async def _campus_with_names(campus_factory: CampusFactory) -> CampusHarness:
    campus = await campus_factory(plugins=["catalog"])
    async with campus.sessions() as session:
        for number, name in enumerate(NAMES):
            session.add(Instructor(pub_id=f"ins-test{number:04d}", name=name))
        await session.commit()
    return campus


async def test_the_roster_names_whom_the_database_names(campus_factory: CampusFactory) -> None:
    campus = await _campus_with_names(campus_factory)
    pub_ids = [f"ins-test{number:04d}" for number in (0, 3)] + ["INS-TEST0000", "ins-nobody"]
    async with campus.sessions() as session:
        roster = await instructor_names.roster(session)
        assert roster is not None and len(roster) == len(NAMES)
        for part in (*PARTS, *pub_ids, *NAMES, *(name.upper() for name in NAMES)):
            assert roster.named(part, 500) == await _asked(session, part), repr(part)
    async with campus.sessions() as session:
        garcia = await _asked(session, "garcía")
    assert garcia, "a part with a letter outside ASCII names someone on either engine"


async def test_the_roster_stops_after_more_than_the_most(campus_factory: CampusFactory) -> None:
    campus = await _campus_with_names(campus_factory)
    async with campus.sessions() as session:
        roster = await instructor_names.roster(session)
        assert roster is not None
        everyone = await _asked(session, "a")
        assert len(everyone) > 3
        # Enough to tell there are more than the most: the caller then tests section by section.
        assert len(roster.named("a", 2)) == 3
        assert set(roster.named("a", 2)) <= set(everyone)


async def test_few_teachers_from_the_roster_as_from_the_database(demo_campus: CampusHarness) -> None:
    """Every surname and first name of the demo campus, a few broad parts and a public id: the
    ids, and whether they are few, as the database's count decided them."""
    async with demo_campus.sessions() as session:
        rows = (await session.execute(select(Instructor.name, Instructor.pub_id))).all()
        parts = {word.lower() for name, _pub in rows for word in name.split()}
        parts |= {"a", "e", "an", "zzqx", rows[0][1], rows[0][0].upper()}
        decided = {"few": 0, "many": 0}
        for part in sorted(parts):
            held = await instructor_filter.few_teachers(session, part)
            assert held == await instructor_filter._few_teachers_asked(session, part), part
            decided["many" if held is None else "few"] += 1
    assert decided["few"] and decided["many"], decided


async def _add_as_another_process_would(campus: CampusHarness, pub_id: str, name: str, *, bump: bool) -> None:
    async with campus.deployment.engine.begin() as connection:
        await connection.execute(insert(Instructor).values(pub_id=pub_id, name=name))
        if bump:  # another process's commit bumps the versions it moved in the same transaction
            moved = (data_version.KEY, data_version.version_key(data_version.ROSTER))
            await connection.execute(version_bump(connection.dialect.name, moved))


async def _named(campus: CampusHarness, part: str, *, read_version: bool) -> list[int] | None:
    async with campus.sessions() as session:
        if read_version:  # as a tool call does (the answer cache's key)
            await data_version.current(session)
        roster = await instructor_names.roster(session)
        return None if roster is None else roster.named(part, 500)


async def test_the_roster_follows_changes(campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    campus = await _campus_with_names(campus_factory)
    assert await _named(campus, "garcía", read_version=True)  # held now

    # Committed in this process: forgotten at the commit, read again by the next search.
    async with campus.sessions() as session:
        session.add(Instructor(pub_id="ins-here", name="Hereford Quill"))
        await session.commit()
    assert len(await _named(campus, "hereford", read_version=False) or []) == 1
    assert len(await _named(campus, "hereford", read_version=True) or []) == 1  # held at the roster's version

    # Another process, with the version read: a new roster version reads the roster again.
    await _add_as_another_process_would(campus, "ins-there", "Thereby Quill", bump=True)
    assert len(await _named(campus, "thereby", read_version=True) or []) == 1

    # Without a version read before it, the roster reads the versions itself and compares: one
    # rule, no time for which it is trusted (issue 25, point 2).
    await _add_as_another_process_would(campus, "ins-later", "Laterally Quill", bump=True)
    assert len(await _named(campus, "laterally", read_version=False) or []) == 1


async def test_uncommitted_instructors_are_the_sessions_own(campus_factory: CampusFactory) -> None:
    campus = await _campus_with_names(campus_factory)
    assert await _named(campus, "garcía", read_version=False)  # held now
    async with campus.sessions() as session:
        session.add(Instructor(pub_id="ins-maybe", name="Maybe Quill"))
        await session.flush()
        assert await instructor_names.roster(session) is None, "not kept from a session that may roll back"
        maybe = await _asked(session, "maybe quill")
        assert len(maybe) == 1
        assert await instructor_filter.few_teachers(session, "maybe quill") == maybe, "asked of the database"
        await session.rollback()
    assert await _named(campus, "maybe", read_version=False) == [], "the rolled-back instructor was not kept"


async def _instructor_pages(campus: CampusHarness, searches: list[InstructorSearch]) -> list[dict[str, object]]:
    pages = []
    async with campus.sessions() as session:
        for search in searches:
            page = await instructors.search_instructors(session, search, campus.settings, CatalogSettings())
            pages.append(page.model_dump())
    return pages


async def _asked_roster(_session: AsyncSession) -> None:
    return None


async def test_search_instructors_by_name_from_the_roster_as_from_the_database(
    campus_factory: CampusFactory, demo_campus: CampusHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same pages (instructors, order, total) whether the roster or the database tests the
    words: names with letters outside ASCII, ``%`` and ``_``, two words, pages past the first."""
    tricky = await _campus_with_names(campus_factory)
    async with demo_campus.sessions() as session:
        names = list(await session.scalars(select(Instructor.name).order_by(Instructor.id).limit(40)))
    questions = [
        (tricky, [*PARTS, *NAMES, "garcía ortiz", "a n", "100% smith", "r_s jones", "ÅNGSTRÖM zoë"]),
        (demo_campus, [*(word for name in names for word in name.split()), names[0], "a", "an", "e r", "zzqx"]),
    ]
    for campus, asked in questions:
        searches = [
            InstructorSearch(q=q, limit=limit, offset=offset) for q in asked for limit, offset in ((25, 0), (3, 2))
        ]
        held = await _instructor_pages(campus, searches)
        with monkeypatch.context() as patched:
            patched.setattr(instructor_names, "roster", _asked_roster)
            from_database = await _instructor_pages(campus, searches)
        for search, one, other in zip(searches, held, from_database, strict=True):
            assert one == other, search
        assert any(page["total"] for page in held), "the words name someone"
