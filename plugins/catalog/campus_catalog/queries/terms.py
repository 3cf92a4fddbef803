"""Terms: which one is current and next (derived from the dates, so never stale), and resolving
the ``term`` argument every catalog tool takes (a uid such as ``202710`` or a name)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Protocol, TypeVar

from campus_mcp import InvalidInput, NotFound, Settings
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Section, Term
from campus_catalog.queries import lookups
from campus_catalog.queries.clock import campus_today
from campus_catalog.queries.lookups import KnownTerm
from campus_catalog.schemas import PartOfTermOut, TermList, TermOut, TermRef, TermsQuery


class DatedTerm(Protocol):
    """What choosing a term reads of one: a ``Term`` row or a held ``lookups.KnownTerm``."""

    @property
    def uid(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def start_date(self) -> date: ...
    @property
    def end_date(self) -> date: ...


AnyTerm = TypeVar("AnyTerm", bound=DatedTerm)


def term_ref(term: DatedTerm) -> TermRef:
    return TermRef(uid=term.uid, name=term.name)


def current_term(terms: Sequence[AnyTerm], today: date) -> AnyTerm | None:
    running = [t for t in terms if t.start_date <= today <= t.end_date]
    return max(running, key=lambda t: t.start_date) if running else None


def next_term(terms: Sequence[AnyTerm], today: date) -> AnyTerm | None:
    upcoming = [t for t in terms if t.start_date > today]
    return min(upcoming, key=lambda t: t.start_date) if upcoming else None


async def all_terms(session: AsyncSession) -> list[Term]:
    return list((await session.scalars(select(Term).order_by(Term.start_date.desc()))).all())


async def resolve_term(session: AsyncSession, value: str | None, settings: Settings) -> Term:
    """The term a student means (see :func:`choose_term`), as a ``Term`` row of this session."""
    return choose_term(await all_terms(session), value, settings)


async def known_term(session: AsyncSession, value: str | None, settings: Settings) -> KnownTerm:
    """:func:`resolve_term` from the terms held in process (``lookups``): no query on most calls.
    For the read paths, which need the term's id, uid, name and dates only."""
    return choose_term(await lookups.terms(session), value, settings)


def choose_term(terms: Sequence[AnyTerm], value: str | None, settings: Settings) -> AnyTerm:
    """The term a student means: a uid, a name (any case), or, when None, the current term, else
    the next one, else the newest (``terms`` newest first). Unknown values get an error listing
    terms to choose from."""
    if not terms:
        raise NotFound("The catalog has no terms yet: nothing has been imported. Try again after the next import.")
    if value is None or not value.strip():
        today = campus_today(settings.timezone)
        return current_term(terms, today) or next_term(terms, today) or terms[0]
    wanted = " ".join(value.split()).lower()
    for term in terms:
        if term.uid.lower() == wanted or term.name.lower() == wanted:
            return term
    # "Spring 2027" also finds "Spring 2027 - Boston" style names Banner gives.
    starting = [t for t in terms if t.name.lower().startswith(wanted)]
    if len(starting) == 1:
        return starting[0]
    examples = ", ".join(f"{t.uid} ({t.name})" for t in terms[:6])
    raise InvalidInput(
        f"Unknown term {value!r}. Pass a term uid or name from list_terms, for example: {examples}.",
        field="term",
    )


async def section_counts(session: AsyncSession) -> dict[int, int]:
    rows = await session.execute(
        select(Section.term_id, func.count()).where(Section.cancelled.is_(False)).group_by(Section.term_id)
    )
    return {term_id: count for term_id, count in rows}


async def list_terms(
    session: AsyncSession, query: TermsQuery, settings: Settings, catalog: CatalogSettings
) -> TermList:
    terms = list(
        (await session.scalars(select(Term).options(selectinload(Term.parts)).order_by(Term.start_date.desc()))).all()
    )
    today = campus_today(settings.timezone)
    current, upcoming = current_term(terms, today), next_term(terms, today)
    counts = await section_counts(session)
    return TermList(
        current=term_ref(current) if current else None,
        next=term_ref(upcoming) if upcoming else None,
        terms=[
            TermOut(
                uid=t.uid,
                name=t.name,
                start_date=t.start_date,
                end_date=t.end_date,
                registration_opens_on=t.registration_opens_on,
                registration_closes_on=t.registration_closes_on,
                is_current=t is current,
                is_next=t is upcoming,
                section_count=counts.get(t.id, 0),
                parts_of_term=[
                    PartOfTermOut(code=p.code, name=p.name, start_date=p.start_date, end_date=p.end_date)
                    for p in sorted(t.parts, key=lambda p: p.code)
                ],
            )
            for t in terms
        ],
    )


def current_and_future(terms: Sequence[AnyTerm], today: date) -> list[AnyTerm]:
    return [t for t in terms if t.end_date >= today]
