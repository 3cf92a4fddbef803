"""The instructor roster held in process (``queries.instructor_names``) is read again only when a
write can change it (``data_version``'s roster version), not at every catalog write.

A seat update, as the seat refresh writes it (ORM attributes) and as an importer does (Core, and
an ORM bulk update by primary key), moves the data version and not the roster's: the next
instructor search uses the roster held. A rename, a new instructor, a deleted one (ORM and Core)
move it, and the next search names whom the database names. Another process's rename (here:
another engine, with this process not told) is seen through the version alone.

The roster's reads are counted by wrapping the function that reads it, not timed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from campus_catalog import data_version
from campus_catalog.models import Instructor, Section, SectionInstructor, Term
from campus_catalog.queries import instructor_names, lookups
from campus_mcp import read_versions
from campus_mcp.testing import CampusFactory, CampusHarness
from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine

Versions = dict[str, int]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The databases the roster was read from, one entry per read, from here on."""
    seen: list[str] = []
    held = instructor_names._rosters
    read = held._read

    async def counted(session: AsyncSession) -> instructor_names.Roster:
        seen.append(data_version.database_key(session))
        return await read(session)

    monkeypatch.setattr(held, "_read", counted)
    lookups.forget()
    yield seen
    lookups.forget()


@pytest.fixture
async def campus(campus_factory: CampusFactory) -> CampusHarness:
    return await campus_factory(demo=True)


async def _versions(campus: CampusHarness) -> Versions:
    """The data version (``data``) and each held kind's version, as committed."""
    async with campus.sessions() as session:
        rows = await read_versions(session, [data_version.KEY, *map(data_version.version_key, data_version.HELD_KINDS)])
    found = {"data": rows.get(data_version.KEY, 0)}
    found.update({kind: rows.get(data_version.version_key(kind), 0) for kind in data_version.HELD_KINDS})
    return found


async def _moved_by(campus: CampusHarness, write: Callable[[], Any]) -> set[str]:
    before = await _versions(campus)
    await write()
    after = await _versions(campus)
    return {name for name in after if after[name] != before[name]}


async def _write(campus: CampusHarness, *statements: Any) -> None:
    """Core statements (or ORM bulk ones: a statement with its parameter sets) in one commit."""
    async with campus.sessions() as session:
        for statement in statements:
            if isinstance(statement, tuple):
                await session.execute(*statement)
            else:
                await session.execute(statement)
        await session.commit()


async def _search(campus: CampusHarness, name: str) -> list[dict[str, Any]]:
    """An instructor search of sections, through MCP (the versions read first, as every tool
    call reads them): the sections listed."""
    result = await campus.call("search_sections", {"instructor": name, "limit": 25}, scopes=["catalog"])
    assert not result.is_error and result.structured_content is not None, result.content
    return list(result.structured_content["sections"])


async def _teachers(campus: CampusHarness, name: str) -> list[str]:
    """The instructors of the sections an instructor search lists that ``name`` names."""
    listed = await _search(campus, name)
    return sorted({t for section in listed for t in section["instructors"] if name.lower() in t.lower()})


async def _a_teacher(campus: CampusHarness) -> tuple[int, str, int]:
    """An instructor of a section of the current term: their id and name, the section's id."""
    result = await campus.call("search_sections", {"limit": 1}, scopes=["catalog"])
    assert result.structured_content is not None, result.content
    (section,) = result.structured_content["sections"]
    async with campus.sessions() as session:
        row = (
            await session.execute(
                select(Instructor.id, Instructor.name, Section.id)
                .join(SectionInstructor, SectionInstructor.instructor_id == Instructor.id)
                .join(Section, Section.id == SectionInstructor.section_id)
                .join(Term, Term.id == Section.term_id)
                .where(
                    Term.uid == result.structured_content["term"]["uid"],
                    Section.crn == section["crn"],
                    Instructor.name == section["instructors"][0],
                )
            )
        ).one()
    return row[0], row[1], row[2]


async def test_a_seat_update_reads_the_roster_not_again(campus: CampusHarness, reads: list[str]) -> None:
    _id, name, section_id = await _a_teacher(campus)
    assert name in await _teachers(campus, name)
    assert len(reads) == 1, "the first search read the roster"

    # The seat refresh's own way (ORM attributes of loaded sections, banner_sync.refresh_seats).
    async def orm_seats() -> None:
        async with campus.sessions() as session:
            section = await session.get(Section, section_id)
            assert section is not None
            section.seats_available, section.enrolled = -2, 41
            await session.commit()

    # An importer's ways: a Core update, and an ORM bulk update by primary key.
    core_seats = update(Section).where(Section.id == section_id).values(seats_available=3, enrolled=36)
    bulk_seats = (update(Section), [{"id": section_id, "seats_available": 4, "waitlist_available": 0}])
    # An instructor's other columns: no name of the roster changes.
    not_named = update(Instructor).where(Instructor.id == _id).values(department="Finance", email="x@example.edu")
    for write in (
        orm_seats,
        lambda: _write(campus, core_seats),
        lambda: _write(campus, bulk_seats),
        lambda: _write(campus, not_named),
    ):
        assert await _moved_by(campus, write) == {"data"}
        assert name in await _teachers(campus, name)
    assert len(reads) == 1, "no seat update read the roster again"

    # The search did run at the new data version (not a cached answer): it shows the new seats.
    async with campus.sessions() as session:
        crn = await session.scalar(select(Section.crn).where(Section.id == section_id))
    (shown,) = [section for section in await _search(campus, name) if section["crn"] == crn]
    assert shown["open_seats"] == 4, shown


async def test_a_rename_an_instructor_added_or_deleted_moves_the_roster(
    campus: CampusHarness, reads: list[str]
) -> None:
    teacher_id, name, _section = await _a_teacher(campus)
    assert name in await _teachers(campus, name)
    reads.clear()

    async def orm_rename(new: str) -> None:
        async with campus.sessions() as session:
            instructor = await session.get(Instructor, teacher_id)
            assert instructor is not None
            instructor.name = new
            await session.commit()

    # A rename through the ORM: the roster's version moves, and the next search names them anew.
    assert await _moved_by(campus, lambda: orm_rename("Quillon Aberforth")) == {"data", data_version.ROSTER}
    assert await _teachers(campus, "Quillon Aberforth") == ["Quillon Aberforth"]
    assert await _teachers(campus, name) == []
    assert len(reads) == 1

    # Through Core, and as an ORM bulk update by primary key.
    core_rename = update(Instructor).where(Instructor.id == teacher_id).values(name="Zephyrine Okonkwo")
    assert await _moved_by(campus, lambda: _write(campus, core_rename)) == {"data", data_version.ROSTER}
    assert await _teachers(campus, "Zephyrine") == ["Zephyrine Okonkwo"]
    bulk_rename = (update(Instructor), [{"id": teacher_id, "name": "Bartholomew Quince"}])
    assert await _moved_by(campus, lambda: _write(campus, bulk_rename)) == {"data", data_version.ROSTER}
    assert await _teachers(campus, "Quince") == ["Bartholomew Quince"]
    # A new public id: the roster names the instructor by it.
    new_pub = update(Instructor).where(Instructor.id == teacher_id).values(pub_id="ins-quince")
    assert await _moved_by(campus, lambda: _write(campus, new_pub)) == {"data", data_version.ROSTER}
    async with campus.sessions() as session:
        await data_version.current(session)  # as a tool call reads it
        roster = await instructor_names.roster(session)
        assert roster is not None and roster.named("ins-quince", 5) == [teacher_id]
    assert len(reads) == 4

    # A new instructor (ORM, and a Core insert as an importer's bulk write) and a deleted one
    # (Core, and the ORM): the roster's version (and the instructors' vectors version) moves.
    async def orm_add() -> None:
        async with campus.sessions() as session:
            session.add(Instructor(pub_id="ins-orm-new", name="Ormond Newcombe"))
            await session.commit()

    core_add = insert(Instructor).values(pub_id="ins-core-new", name="Corinna Newcombe")
    added = {"data", "instructors", data_version.ROSTER}
    assert await _moved_by(campus, orm_add) == added
    assert await _moved_by(campus, lambda: _write(campus, core_add)) == added

    async def named(part: str) -> list[str]:
        async with campus.sessions() as session:
            await data_version.current(session)  # as a tool call reads it
            roster = await instructor_names.roster(session)
            assert roster is not None
            ids = roster.named(part, 50)
            return sorted(await session.scalars(select(Instructor.pub_id).where(Instructor.id.in_(ids))))

    assert await named("newcombe") == ["ins-core-new", "ins-orm-new"]

    async def orm_delete() -> None:
        async with campus.sessions() as session:
            gone = await session.scalar(select(Instructor).where(Instructor.pub_id == "ins-orm-new"))
            await session.delete(gone)
            await session.commit()

    removed = {"data", "instructors", "reviews", data_version.ROSTER}  # their reviews go with them
    core_delete = delete(Instructor).where(Instructor.pub_id == "ins-core-new")
    assert await _moved_by(campus, lambda: _write(campus, core_delete)) == removed
    assert await named("newcombe") == ["ins-orm-new"]
    moved = await _moved_by(campus, orm_delete)
    assert {"data", "instructors", data_version.ROSTER} <= moved, moved
    assert await named("newcombe") == []
    assert len(reads) == 7, "each change to the roster read it once, at the next search"


@pytest.fixture
async def other_process(campus: CampusHarness) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    """Sessions of another engine on the same database, as another worker's."""
    engine = create_async_engine(campus.settings.database_url)
    yield async_sessionmaker(engine, expire_on_commit=False)
    await engine.dispose()


async def test_another_processes_rename_is_seen_through_the_version(
    campus: CampusHarness,
    reads: list[str],
    other_process: async_sessionmaker[AsyncSession],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    teacher_id, name, section_id = await _a_teacher(campus)
    assert name in await _teachers(campus, name)
    # This process is not told of the other's commits (its listeners would, in the same
    # process): only the versions in the database can tell.
    monkeypatch.setattr(data_version, "on_change", [])

    async with other_process() as session:
        await session.execute(update(Section).where(Section.id == section_id).values(seats_available=7))
        await session.commit()
    assert name in await _teachers(campus, name)
    assert len(reads) == 1, "another process's seat update read no name again"

    async with other_process() as session:
        instructor = await session.get(Instructor, teacher_id)
        assert instructor is not None
        instructor.name = "Thaddeus Elsewhere"
        await session.commit()
    # A call that read no version reads it for the roster (one rule, no time for which a held
    # roster is trusted; issue 25, point 2): the new roster version tells it, at once.
    async with campus.sessions() as session:
        roster = await instructor_names.roster(session)
        assert roster is not None and roster.named("elsewhere", 5) != []
    assert await _teachers(campus, "Elsewhere") == ["Thaddeus Elsewhere"]
    assert len(reads) == 2


async def test_a_read_overtaken_by_a_commit_keeps_nothing_only_if_it_moved_the_roster(
    campus: CampusHarness, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit in this process between a roster's read and its keeping: a seat update (the
    roster read is still the roster) leaves it kept; a rename (it may not be) keeps nothing."""
    teacher_id, _name, section_id = await _a_teacher(campus)
    held = instructor_names._rosters
    read = held._read
    between: list[Callable[[], Any]] = []

    async def overtaken(session: AsyncSession) -> instructor_names.Roster:
        rows = await read(session)
        while between:
            await between.pop()()
        return rows

    monkeypatch.setattr(held, "_read", overtaken)

    async def roster_named(part: str) -> list[int]:
        async with campus.sessions() as session:  # no version read: only the commits can tell
            roster = await instructor_names.roster(session)
            assert roster is not None
            return roster.named(part, 5)

    seats = update(Section).where(Section.id == section_id).values(seats_available=9)
    between.append(lambda: _write(campus, seats))
    assert await roster_named("overtaken") == []
    assert await roster_named("overtaken") == [] and len(reads) == 1, "kept: a seat commit changes no name"

    rename = update(Instructor).where(Instructor.id == teacher_id).values(name="Overtaken Quill")
    lookups.forget()
    between.append(lambda: _write(campus, rename))
    assert await roster_named("overtaken") == [], "read before the rename"
    assert await roster_named("overtaken") == [teacher_id], "not kept: the rename overtook the read"
    assert len(reads) == 3


async def test_a_commit_forgets_only_what_it_moved(reads: list[str]) -> None:
    """The callbacks' rules, without a database: the roster survives a commit that moved only
    the data version and the vectors; the terms and subjects do not."""
    roster = instructor_names._rosters
    terms = lookups._terms
    assert roster.kind == data_version.ROSTER and terms.kind is None

    before = roster._generation, terms._generation
    lookups.forget(frozenset({"instructors", "reviews"}))
    assert (roster._generation, terms._generation) == (before[0], before[1] + 1)
    lookups.forget(frozenset({data_version.ROSTER}))
    assert (roster._generation, terms._generation) == (before[0] + 1, before[1] + 2)
    with pytest.raises(ValueError, match="not a kind with a version of its own"):
        lookups.HeldTable(roster._read, "seats")
