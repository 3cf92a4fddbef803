"""Subjects with their section counts (``Catalog::SubjectQuery`` of seed 000)."""

from __future__ import annotations

from campus_mcp import Settings
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.models import Course, Section, Subject
from campus_catalog.queries.clock import campus_today
from campus_catalog.queries.terms import all_terms, current_and_future, resolve_term, term_ref
from campus_catalog.schemas import SubjectList, SubjectOut, SubjectsQuery


async def _term_ids(session: AsyncSession, term: str | None, settings: Settings) -> tuple[list[int], SubjectList]:
    if term is not None:
        chosen = await resolve_term(session, term, settings)
        return [chosen.id], SubjectList(term=term_ref(chosen), subjects=[])
    terms = current_and_future(await all_terms(session), campus_today(settings.timezone))
    return [t.id for t in terms], SubjectList(term=None, subjects=[])


async def list_subjects(session: AsyncSession, query: SubjectsQuery, settings: Settings) -> SubjectList:
    term_ids, answer = await _term_ids(session, query.term, settings)
    counts_query = (
        select(Course.subject_code, func.count(Section.id))
        .join(Section, Section.course_id == Course.id)
        .where(Section.term_id.in_(term_ids), Section.cancelled.is_(False))
        .group_by(Course.subject_code)
    )
    counts = {code: n for code, n in (await session.execute(counts_query))}
    subjects = (await session.scalars(select(Subject).order_by(Subject.code))).all()
    answer.subjects = [
        SubjectOut(code=s.code, name=s.name, school=s.school, section_count=counts.get(s.code, 0)) for s in subjects
    ]
    return answer


async def subject_codes(session: AsyncSession, prefix: str, term: str | None, settings: Settings) -> list[str]:
    """Codes of subjects with sections in ``term`` (or the current and future terms) that start
    with ``prefix``, ignoring case: the ``subject`` completion of the prompts."""
    term_ids, _ = await _term_ids(session, term, settings)
    rows = await session.scalars(
        select(Course.subject_code)
        .join(Section, Section.course_id == Course.id)
        .where(Section.term_id.in_(term_ids), Section.cancelled.is_(False))
        .where(func.upper(Course.subject_code).startswith(prefix.strip().upper()))
        .distinct()
        .order_by(Course.subject_code)
        .limit(101)
    )
    return list(rows.all())
