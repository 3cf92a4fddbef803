"""Subjects with their section counts (``Catalog::SubjectQuery`` of seed 000), and resolving
the ``subject`` argument the searches take (a code or a name, any case)."""

from __future__ import annotations

import difflib

from campus_mcp import InvalidInput, Settings
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Course, Section, Subject
from campus_catalog.queries import lookups
from campus_catalog.queries.clock import campus_today
from campus_catalog.queries.terms import current_and_future, known_term, term_ref
from campus_catalog.schemas import SubjectList, SubjectOut, SubjectsQuery


async def _term_ids(session: AsyncSession, term: str | None, settings: Settings) -> tuple[list[int], SubjectList]:
    if term is not None:
        chosen = await known_term(session, term, settings)
        return [chosen.id], SubjectList(term=term_ref(chosen), subjects=[])
    terms = current_and_future(await lookups.terms(session), campus_today(settings.timezone))
    return [t.id for t in terms], SubjectList(term=None, subjects=[])


async def list_subjects(
    session: AsyncSession, query: SubjectsQuery, settings: Settings, catalog: CatalogSettings
) -> SubjectList:
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


MAX_SUGGESTIONS = 5


async def resolve_subject(session: AsyncSession, value: str) -> str:
    """The code of the subject a student means: its code in any case ('comp') or its name in any
    case ('Computer Science'). Students and models say the name as often as the code; before, a
    name matched no code and a search quietly answered nothing. Anything else is an error that
    lists up to five close codes and names, so the caller can correct it in one more try."""
    wanted = " ".join(value.split()).casefold()
    subjects = await lookups.subjects(session)  # held in process, by code
    for code, name in subjects:
        if code.casefold() == wanted or " ".join(name.split()).casefold() == wanted:
            return code
    label = {code: f"{code} ({name})" for code, name in subjects}
    by_key = {code.casefold(): code for code, _ in subjects} | {
        " ".join(name.split()).casefold(): code for code, name in subjects
    }
    close = difflib.get_close_matches(wanted, list(by_key), n=MAX_SUGGESTIONS * 2, cutoff=0.6)
    codes = list(dict.fromkeys(by_key[key] for key in close))[:MAX_SUGGESTIONS]
    hint = ("Did you mean " + ", ".join(label[code] for code in codes) + "?") if codes else "No subject is close to it."
    example = f", for example {subjects[0][0]!r} or {subjects[0][1]!r}" if subjects else ""
    raise InvalidInput(
        f"Unknown subject {value!r}. {hint} Pass a subject code or name as list_subjects gives them{example}.",
        field="subject",
    )
