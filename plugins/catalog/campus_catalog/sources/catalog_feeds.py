"""Degree programs and term elective lists from JSON feeds a campus publishes.

Academic catalogs (Acalog, CourseLeaf, a college's own pages) and the schools' elective PDFs
differ from campus to campus, so the platform reads them in one documented JSON shape (the
shapes of :class:`~campus_catalog.models.Program` and
:class:`~campus_catalog.models.TermElectiveList`); a campus exports its catalog to it.
``docs/data-sources.md`` has examples.

- Programs: ``{"catalog_year": "2026-2027", "programs": [{"slug", "name", "school", "degree",
  "url", "total_credits", "plans_of_study", "elective_lists"}]}``. A year's feed is the whole
  year: a program it no longer has is removed, and ``catalog_years.imported_at`` is set.
- Elective lists: ``{"lists": [{"term", "school", "title", "url", "course_headings",
  "full_text"}]}``, matched on term and URL; ``fetched_at`` is set on each list read.

An entry that does not validate is reported by its slug or URL with the reason; the others are stored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.models import CatalogYear, Program, Term, TermElectiveList
from campus_catalog.sources.banner_parse import MappingProblem
from campus_catalog.sources.errors import UnreadableResponse

CATALOG_YEAR = re.compile(r"^(\d{4})-(\d{4})$")


class _Entry(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ProgramEntry(_Entry):
    slug: str = Field(min_length=1, max_length=200)
    name: str = Field(min_length=1, max_length=300)
    school: str | None = None
    degree: str | None = None
    url: str | None = None
    total_credits: float | None = None
    plans_of_study: list[dict[str, Any]] = Field(default_factory=list)
    elective_lists: list[dict[str, Any]] = Field(default_factory=list)


class ElectiveListEntry(_Entry):
    term: str = Field(min_length=1, max_length=20)
    school: str = Field(min_length=1, max_length=200)
    title: str = Field(min_length=1, max_length=300)
    url: str = Field(min_length=1, max_length=500)
    course_headings: list[dict[str, Any]] = Field(default_factory=list)
    full_text: str = ""


@dataclass
class FeedReport:
    stored: int = 0
    removed: int = 0
    problems: list[MappingProblem] = field(default_factory=list)

    def lost(self) -> dict[str, str]:
        return {p.item: p.reason for p in self.problems}

    def summary(self, what: str) -> str:
        return f"{self.stored} {what} stored, {self.removed} removed; {len(self.problems)} could not be read"


def catalog_years_to_read(today: date) -> list[str]:
    """The current catalog year and the one before (seed 000). A catalog year starts in July."""
    start = today.year if today.month >= 7 else today.year - 1
    return [f"{start}-{start + 1}", f"{start - 1}-{start}"]


def _document(data: bytes, what: str) -> dict[str, Any]:
    try:
        document = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UnreadableResponse(f"{what} is not JSON: {exc}", kind="parse") from exc
    if not isinstance(document, dict):
        raise UnreadableResponse(f"{what} is not a JSON object", kind="parse")
    return document


def _reason(error: ValidationError) -> str:
    first = error.errors()[0]
    return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"


async def import_programs(session: AsyncSession, data: bytes, *, now: datetime, report: FeedReport) -> str:
    """One catalog year's programs; returns the year's label."""
    document = _document(data, "programs feed")
    label = str(document.get("catalog_year", ""))
    match = CATALOG_YEAR.match(label)
    if not match:
        raise UnreadableResponse(f"programs feed: catalog_year {label!r} is not like '2026-2027'", kind="parse")
    year = await session.scalar(select(CatalogYear).where(CatalogYear.label == label))
    if year is None:
        year = CatalogYear(label=label, start_year=int(match.group(1)))
        session.add(year)
        await session.flush()
    existing = {p.slug: p for p in await session.scalars(select(Program).where(Program.catalog_year_id == year.id))}
    seen: set[str] = set()
    for index, raw in enumerate(document.get("programs") or []):
        try:
            entry = ProgramEntry.model_validate(raw)
        except ValidationError as exc:
            slug = raw.get("slug") if isinstance(raw, dict) else None
            report.problems.append(MappingProblem(f"program {slug or f'#{index + 1}'}", _reason(exc)))
            continue
        seen.add(entry.slug)
        values = entry.model_dump(exclude={"slug"})
        program = existing.get(entry.slug)
        if program is None:
            session.add(Program(catalog_year_id=year.id, slug=entry.slug, **values))
        else:
            for name, value in values.items():
                if getattr(program, name) != value:
                    setattr(program, name, value)
        report.stored += 1
    gone = [slug for slug in existing if slug not in seen]
    if gone and not report.problems:
        # Only a feed read whole may remove programs: one that failed to validate is not "gone".
        await session.execute(delete(Program).where(Program.catalog_year_id == year.id, Program.slug.in_(gone)))
        report.removed += len(gone)
    year.imported_at = now
    return label


async def import_elective_lists(session: AsyncSession, data: bytes, *, now: datetime, report: FeedReport) -> None:
    document = _document(data, "elective lists feed")
    terms = {t.uid: t for t in await session.scalars(select(Term))}
    # Every stored list read once, like the programs above, rather than one query per entry.
    stored = {(row.term_id, row.url): row for row in await session.scalars(select(TermElectiveList))}
    for index, raw in enumerate(document.get("lists") or []):
        try:
            entry = ElectiveListEntry.model_validate(raw)
        except ValidationError as exc:
            url = raw.get("url") if isinstance(raw, dict) else None
            report.problems.append(MappingProblem(f"list {url or f'#{index + 1}'}", _reason(exc)))
            continue
        term = terms.get(entry.term)
        if term is None:
            report.problems.append(MappingProblem(f"list {entry.url}", f"no term {entry.term!r} in the catalog"))
            continue
        row = stored.get((term.id, entry.url))
        values = entry.model_dump(exclude={"term", "url"})
        if row is None:
            row = stored[(term.id, entry.url)] = TermElectiveList(term_id=term.id, url=entry.url, **values)
            session.add(row)
        else:
            for name, value in values.items():
                setattr(row, name, value)
        row.fetched_at = now
        report.stored += 1
