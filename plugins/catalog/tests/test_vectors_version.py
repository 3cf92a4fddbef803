"""The vectors held in process reload only when a write can change them (``data_version``'s
vectors versions), not at every catalog write: a seat refresh moves the data version (answers
change) and reloads no vector; a new review, a new section, a section's new title, a course's new
vector, a deleted instructor each move their kind's version and the next search sees the change;
a rolled-back write moves nothing."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from campus_catalog import data_version, semantic, vector_index
from campus_catalog.models import Course, Instructor, Review, Section, Term
from campus_catalog.queries import instructor_names
from campus_catalog.sources.fake_banner import FakeBanner, serve_fake_banner
from campus_mcp import read_versions
from campus_mcp.testing import CampusFactory, CampusHarness
from sqlalchemy import delete, select, update

from .test_refresh_jobs import fixture_sections, make_current

Versions = dict[str, int]


async def _versions(campus: CampusHarness) -> Versions:
    """The data version (``data``) and each held kind's version (the vectors', the roster's), as
    committed."""
    async with campus.sessions() as session:
        rows = await read_versions(session, [data_version.KEY, *map(data_version.version_key, data_version.HELD_KINDS)])
    found = {"data": rows.get(data_version.KEY, 0)}
    found.update({kind: rows.get(data_version.version_key(kind), 0) for kind in data_version.HELD_KINDS})
    return found


def _moved(before: Versions, after: Versions) -> set[str]:
    return {name for name in after if after[name] != before[name]}


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The snapshots loaded from the database, by kind, from here on (the real loads, counted)."""
    seen: list[str] = []
    load_compact = vector_index._load_compact
    load_table = vector_index.VectorTable.of.__func__  # type: ignore[attr-defined]

    async def counted_compact(session: Any, kind: str, dimensions: int) -> vector_index.CompactVectors:
        seen.append(kind)
        return await load_compact(session, kind, dimensions)

    def counted_table(cls: type[vector_index.VectorTable], rows: Any, dimensions: int) -> vector_index.VectorTable:
        seen.append("catalog")
        return load_table(cls, rows, dimensions)  # type: ignore[no-any-return]

    monkeypatch.setattr(vector_index, "_load_compact", counted_compact)
    monkeypatch.setattr(vector_index.VectorTable, "of", classmethod(counted_table))
    vector_index.forget()
    yield seen
    vector_index.forget()


async def _search_everything(campus: CampusHarness, question: str) -> dict[str, list[Any]]:
    """One search by meaning of each kind, through MCP; what each lists."""
    listed: dict[str, list[Any]] = {}
    for tool, key, field in (
        ("search_sections", "sections", "crn"),
        ("search_reviews", "reviews", "id"),
        ("search_instructors", "instructors", "pub_id"),
    ):
        result = await campus.call(tool, {"q": question, "semantic": True, "limit": 5}, scopes=["catalog"])
        assert not result.is_error and result.structured_content is not None, result.content
        listed[key] = [row[field] for row in result.structured_content[key]]
    return listed


async def test_a_seat_refresh_reloads_no_vector(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch, loads: list[str]
) -> None:
    # The seat refresh job's own code path, against a fake Banner on loopback (as in
    # test_refresh_jobs): a synced term, its vectors filled, then new seat counts read.
    for name in ("BANNER_URL", "BANNER_FILE", "CALENDAR_URL", "CALENDAR_FILE"):
        monkeypatch.delenv(f"CAMPUS_MCP_CATALOG_{name}", raising=False)
    monkeypatch.setenv("CAMPUS_MCP_CATALOG_ALLOW_LOOPBACK_HTTP", "true")
    monkeypatch.setenv("CAMPUS_MCP_CATALOG_BANNER_REQUESTS_PER_MINUTE", "6000")
    monkeypatch.setenv("CAMPUS_MCP_CATALOG_BANNER_PAGE_SIZE", "200")
    sections = copy.deepcopy(fixture_sections())
    async with serve_fake_banner(FakeBanner(sections=sections)) as url:
        monkeypatch.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", url)
        campus = await campus_factory(plugins=["catalog"])
        assert (await campus.run_job("catalog.sections_sync")).outcome == "ok"
        await make_current(campus, started_days_ago=2)
        question = "computer programming and algorithms"
        teacher = await _first_teacher(campus)
        first = await _search_everything(campus, question)
        assert first["sections"] and first["instructors"], first
        assert sorted(loads) == ["catalog", "catalog", "instructors", "reviews"], loads
        before = await _versions(campus)

        sections[0]["seatsAvailable"] = -3
        sections[0]["enrollment"] = 40
        run = await campus.run_job("catalog.seat_refresh")
        assert (run.outcome, run.items) == ("ok", len(sections)), run
        async with campus.sessions() as session:
            seats = await session.scalar(
                select(Section.seats_available).where(Section.crn == sections[0]["courseReferenceNumber"])
            )
        assert seats == -3
        # Answers moved on (the data version), the vectors and the instructor roster did not.
        assert _moved(before, await _versions(campus)) == {"data"}
        loads.clear()
        assert await _search_everything(campus, question) == first
        assert loads == []
        with monkeypatch.context() as patched:
            roster_reads = _count_roster_reads(patched)
            assert teacher in await _teachers_of(campus, teacher)
        assert roster_reads == [], "the seat refresh read no name again"


async def _first_teacher(campus: CampusHarness) -> str:
    """The first instructor of the current term's first section; the roster held from here on."""
    result = await campus.call("search_sections", {"limit": 1}, scopes=["catalog"])
    assert result.structured_content is not None, result.content
    teacher = str(result.structured_content["sections"][0]["instructors"][0])
    assert teacher in await _teachers_of(campus, teacher)
    return teacher


async def _teachers_of(campus: CampusHarness, name: str) -> list[str]:
    """The instructors of the sections an instructor search for ``name`` lists."""
    result = await campus.call("search_sections", {"instructor": name}, scopes=["catalog"])
    assert result.structured_content is not None, result.content
    return [teacher for section in result.structured_content["sections"] for teacher in section["instructors"]]


def _count_roster_reads(patched: pytest.MonkeyPatch) -> list[int]:
    """One entry per read of the instructor roster from here on (instructor_names' read, wrapped)."""
    seen: list[int] = []
    held = instructor_names._rosters
    read = held._read

    async def counted(session: Any) -> instructor_names.Roster:
        seen.append(1)
        return await read(session)

    patched.setattr(held, "_read", counted)
    return seen


@pytest.fixture
async def campus(campus_factory: CampusFactory) -> CampusHarness:
    return await campus_factory(demo=True)


async def _write(campus: CampusHarness, *statements: Any, rollback: bool = False) -> None:
    async with campus.sessions() as session:
        for statement in statements:
            await session.execute(statement)
        await (session.rollback() if rollback else session.commit())


async def test_only_writes_of_what_the_vectors_hold_reload_them(campus: CampusHarness, loads: list[str]) -> None:
    question = "a class about the stock market"
    await _search_everything(campus, question)
    async with campus.sessions() as session:
        term = await session.scalar(select(Term.id).order_by(Term.start_date.desc()).limit(1))
        section = await session.scalar(select(Section).where(Section.title.is_(None)).order_by(Section.id).limit(1))
        course = await session.scalar(select(Course).order_by(Course.id).limit(1))
        instructor = await session.scalar(select(Instructor).order_by(Instructor.id).limit(1))
        assert term is not None and section is not None and course is not None and instructor is not None
    loads.clear()

    async def moved_by(write: Any) -> set[str]:
        before = await _versions(campus)
        await write()
        return _moved(before, await _versions(campus))

    # Seats and the like, through Core (as an importer's bulk write) and through the ORM: no kind.
    seats = update(Section).where(Section.id == section.id).values(seats_available=0, enrolled=30)
    assert await moved_by(lambda: _write(campus, seats)) == {"data"}
    async with campus.sessions() as session:
        stored = await session.get(Section, section.id)
        assert stored is not None
        stored.seats_available, stored.title = 1, None  # the title set to what it was
        await session.commit()
    unchanged = update(Instructor).where(Instructor.id == instructor.id).values(department="Finance")
    assert await moved_by(lambda: _write(campus, unchanged)) == {"data"}
    await _search_everything(campus, question)
    assert loads == []

    # A rolled-back write of vectors moves nothing.
    gone = update(Course).where(Course.id == course.id).values(embedding=None)
    assert await moved_by(lambda: _write(campus, gone, rollback=True)) == set()

    # A new review with a vector: the reviews' version, and the next search lists it first.
    words = "the professor brought a live parrot to every single lecture"
    review = Review(
        instructor_id=instructor.id,
        posted_on=date(2026, 1, 5),
        text=words,
        sentiment=0.9,
        embedding=semantic.to_bytes(semantic.embed_query(words)),
    )

    async def add_review() -> None:
        async with campus.sessions() as session:
            session.add(review)
            await session.commit()

    assert await moved_by(add_review) == {"data", "reviews"}
    found = await campus.call("search_reviews", {"q": words, "semantic": True, "limit": 1}, scopes=["catalog"])
    assert found.structured_content is not None
    assert [r["id"] for r in found.structured_content["reviews"]] == [review.id]
    # Its sentiment is held with the vectors (the sentiment filter): a change moves them too.
    sentiment = update(Review).where(Review.id == review.id).values(sentiment=-0.9)
    assert await moved_by(lambda: _write(campus, sentiment)) == {"data", "reviews"}
    negative = {"q": words, "semantic": True, "limit": 1, "sentiment": "negative"}
    found = await campus.call("search_reviews", negative, scopes=["catalog"])
    assert found.structured_content is not None
    assert [r["id"] for r in found.structured_content["reviews"]] == [review.id]

    # A section's own title decides whether it has its own vector; a new section, a course's new
    # vector (set on the ORM object): the courses' and sections' version, seen at the next search.
    titled = update(Section).where(Section.id == section.id).values(title="Investing in the Stock Market")
    assert await moved_by(lambda: _write(campus, titled)) == {"data", "catalog"}
    async with campus.sessions() as session:
        held = await vector_index.catalog_vectors(session, semantic.DIMENSIONS)
    assert section.id in held.titled_sections.ids.tolist()

    blob = semantic.to_bytes(semantic.embed_query("a new section of its own"))
    added = Section(
        term_id=term, course_id=course.id, crn="99901", section_number="X1", title="Its own", embedding=blob
    )

    async def add_section() -> None:
        async with campus.sessions() as session:
            session.add(added)
            await session.commit()

    assert await moved_by(add_section) == {"data", "catalog"}
    async with campus.sessions() as session:
        held = await vector_index.catalog_vectors(session, semantic.DIMENSIONS)
    assert added.id in held.titled_sections.ids.tolist()

    async def new_course_vector() -> None:
        async with campus.sessions() as session:
            stored = await session.get(Course, course.id)
            assert stored is not None
            stored.embedding = blob
            await session.commit()

    assert await moved_by(new_course_vector) == {"data", "catalog"}
    async with campus.sessions() as session:
        held = await vector_index.catalog_vectors(session, semantic.DIMENSIONS)
    row = held.courses.ids.tolist().index(course.id)
    assert held.courses.matrix[row].tobytes() == blob

    # An instructor deleted takes their reviews with them (ON DELETE CASCADE): both kinds move.
    farewell = delete(Instructor).where(Instructor.id == instructor.id)
    assert await moved_by(lambda: _write(campus, farewell)) == {"data", "instructors", "reviews", "roster"}
    found = await campus.call("search_reviews", {"q": words, "semantic": True, "limit": 1}, scopes=["catalog"])
    assert found.structured_content is not None
    assert review.id not in [r["id"] for r in found.structured_content["reviews"]]
