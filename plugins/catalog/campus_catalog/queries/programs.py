"""Degree programs per catalog year, their plans of study and elective lists
(``Catalog::ProgramQuery``), and the elective lists each school publishes for a term
(``Catalog::TermElectiveQuery``)."""

from __future__ import annotations

from campus_mcp import InvalidInput, NotFound, Settings
from pydantic import ValidationError
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import CatalogYear, Program, TermElectiveList
from campus_catalog.queries.clock import campus_moment
from campus_catalog.queries.terms import resolve_term, term_ref
from campus_catalog.schemas import (
    ElectiveHeading,
    ElectiveList,
    PlanOfStudy,
    ProgramBrief,
    ProgramDetail,
    ProgramList,
    ProgramLookup,
    ProgramsQuery,
    TermElectiveListOut,
    TermElectives,
    TermElectivesQuery,
)


async def _years(session: AsyncSession) -> list[CatalogYear]:
    return list((await session.scalars(select(CatalogYear).order_by(CatalogYear.start_year.desc()))).all())


async def resolve_catalog_year(session: AsyncSession, value: str | None) -> CatalogYear | None:
    years = await _years(session)
    if value is None:
        return years[0] if years else None
    wanted = value.strip().replace("/", "-").replace("–", "-")
    for year in years:
        if year.label == wanted or str(year.start_year) == wanted:
            return year
    listed = ", ".join(y.label for y in years) or "none yet"
    raise InvalidInput(
        f"Unknown catalog year {value!r}. The catalog years here are: {listed}. For an older year, ask the "
        "student for the required courses from their degree audit or program page.",
        field="catalog_year",
    )


async def list_programs(
    session: AsyncSession, query: ProgramsQuery, settings: Settings, catalog: CatalogSettings
) -> ProgramList:
    year = await resolve_catalog_year(session, query.catalog_year)
    years = [y.label for y in await _years(session)]
    programs = (
        []
        if year is None
        else (
            await session.scalars(select(Program).where(Program.catalog_year_id == year.id).order_by(Program.name))
        ).all()
    )
    return ProgramList(
        catalog_year=year.label if year else None,
        catalog_years=years,
        programs=[ProgramBrief(slug=p.slug, name=p.name, school=p.school, degree=p.degree) for p in programs],
        note=None
        if programs
        else (
            "No degree programs are loaded on this campus: not known here, not absent. Ask the student's "
            "department or academic advisor, or see the campus's academic catalog."
        ),
    )


def _plans(raw: list[dict[str, object]]) -> list[PlanOfStudy]:
    plans: list[PlanOfStudy] = []
    for item in raw:
        try:
            plans.append(PlanOfStudy.model_validate(item))
        except ValidationError:
            continue  # a malformed plan from an import is left out, the rest still answers
    return plans


def _electives(raw: list[dict[str, object]]) -> list[ElectiveList]:
    lists: list[ElectiveList] = []
    for item in raw:
        try:
            lists.append(ElectiveList.model_validate({"notes": None, **item}))
        except ValidationError:
            continue
    return lists


async def degree_requirements(
    session: AsyncSession, query: ProgramLookup, settings: Settings, catalog: CatalogSettings
) -> ProgramDetail:
    year = await resolve_catalog_year(session, query.catalog_year)
    if year is None:
        raise NotFound("No degree programs have been imported yet. Ask the student for their list of required courses.")
    slug = query.slug.strip().lower()
    program = await session.scalar(
        select(Program).where(Program.catalog_year_id == year.id, func.lower(Program.slug) == slug)
    )
    if program is None:
        raise NotFound(
            f"No program {query.slug!r} in the {year.label} catalog. Call list_programs for the slugs of that year.",
            field="slug",
        )
    return ProgramDetail(
        slug=program.slug,
        name=program.name,
        school=program.school,
        degree=program.degree,
        catalog_year=year.label,
        url=program.url,
        total_credits=program.total_credits,
        plans_of_study=_plans(program.plans_of_study or []),
        elective_lists=_electives(program.elective_lists or []),
    )


async def list_term_electives(
    session: AsyncSession, query: TermElectivesQuery, settings: Settings, catalog: CatalogSettings
) -> TermElectives:
    term = await resolve_term(session, query.term, settings)
    statement = select(TermElectiveList).where(TermElectiveList.term_id == term.id)
    if query.school:
        statement = statement.where(func.lower(TermElectiveList.school).contains(query.school.lower(), autoescape=True))
    lists = (await session.scalars(statement.order_by(TermElectiveList.school, TermElectiveList.title))).all()
    return TermElectives(
        term=term_ref(term),
        lists=[
            TermElectiveListOut(
                school=item.school,
                title=item.title,
                url=item.url,
                fetched_at=campus_moment(item.fetched_at, settings.timezone)[0],
                fetched_at_text=campus_moment(item.fetched_at, settings.timezone)[1],
                course_headings=[
                    ElectiveHeading.model_validate(
                        {"code": None, **heading, "crns": heading.get("crns", []) if query.include_crns else None}
                    )
                    for heading in item.course_headings or []
                    if isinstance(heading, dict) and "title" in heading
                ],
                full_text=item.full_text if query.include_full_text else None,
            )
            for item in lists
        ],
        note=None
        if lists
        else (
            f"No elective lists are loaded for {term.name}"
            + (f" from a school matching {query.school!r}" if query.school else "")
            + ": not known here, not absent. Ask the student's school (its dean's office) or academic advisor."
        ),
    )
