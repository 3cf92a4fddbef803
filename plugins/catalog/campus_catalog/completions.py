"""Completers for the catalog values a prompt argument takes (seed 000, "Completions").

They belong to the catalog because they read its tables; a prompt names the one it uses
(``PromptArgument(completer="term")``), so a deployment without a prompt that names them leaves
them registered and unused. Every match is on the start of the value and ignores case; the host
cuts the answer at 100 values and sets ``hasMore`` (each query reads at most 101 rows).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from campus_mcp import CampusError, Completion, Settings
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.queries.clock import campus_today
from campus_catalog.queries.courses import course_codes_starting_with
from campus_catalog.queries.sections import crns_starting_with
from campus_catalog.queries.subjects import subject_codes
from campus_catalog.queries.terms import all_terms

# The separators of a list of course codes, the same the prompts accept: "COMP 2350, MATH 1750".
COURSE_SEPARATORS = re.compile(r"[,;\n]")
LIMIT = 101


def term_values(terms: Sequence[tuple[str, str]], typed: str) -> list[str]:
    """``terms`` as (uid, name), in order: current and future first (soonest first),
    then past (newest first). A value that starts a uid gives the uid; one that starts a name
    gives the name ("spr" gives "Spring 2027"): the prompts take either."""
    wanted = " ".join(typed.split()).casefold()
    values: list[str] = []
    for uid, name in terms:
        if uid.casefold().startswith(wanted):
            values.append(uid)
        elif name.casefold().startswith(wanted):
            values.append(name)
    return values[:LIMIT]


def split_courses(typed: str) -> tuple[str, str]:
    """``"COMP 2350, MA"`` -> (``"COMP 2350, "``, ``"MA"``): the codes before the last separator
    stay as typed; only the one after it completes."""
    cut = max((m.end() for m in COURSE_SEPARATORS.finditer(typed)), default=0)
    head, tail = typed[:cut], typed[cut:]
    spaces = tail[: len(tail) - len(tail.lstrip())]
    if head and head[-1] in ",;" and not spaces:
        spaces = " "
    return head + spaces, tail.strip()


def catalog_completions(settings: Settings) -> list[Completion]:
    async def terms(session: AsyncSession, typed: str, _context: Mapping[str, str]) -> Sequence[str]:
        rows = await all_terms(session)  # newest first
        today = campus_today(settings.timezone)
        coming = sorted((t for t in rows if t.end_date >= today), key=lambda t: t.start_date)
        past = [t for t in rows if t.end_date < today]
        return term_values([(t.uid, t.name) for t in (*coming, *past)], typed)

    async def subjects(session: AsyncSession, typed: str, context: Mapping[str, str]) -> Sequence[str]:
        term = context.get("term", "").strip() or None
        try:
            return await subject_codes(session, typed, term, settings)
        except CampusError:
            # A term the catalog does not know narrows nothing: complete over the coming terms.
            return await subject_codes(session, typed, None, settings)

    async def courses(session: AsyncSession, typed: str, _context: Mapping[str, str]) -> Sequence[str]:
        head, tail = split_courses(typed)
        return [head + code for code in await course_codes_starting_with(session, tail)]

    async def crns(session: AsyncSession, typed: str, context: Mapping[str, str]) -> Sequence[str]:
        term = context.get("term", "").strip() or None
        try:
            return await crns_starting_with(session, typed.strip(), term, settings)
        except CampusError:
            return await crns_starting_with(session, typed.strip(), None, settings)

    return [
        Completion(argument="term", complete=terms),
        Completion(argument="crn", complete=crns),
        Completion(argument="subject", complete=subjects),
        Completion(argument="courses", complete=courses),
    ]
