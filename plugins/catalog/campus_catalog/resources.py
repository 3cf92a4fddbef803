"""The catalog's ``campus://`` resources: what a student @-mentions and a client subscribes to.

Each is the answer of one catalog tool (the host reads it through that tool): a section is
``get_section``, a course ``get_course``, the terms ``list_terms``. A section's change (its seats,
waitlist, times, or its cancellation) is published under its canonical URI, with the term's uid
(:func:`section_uri`), by the seat refresh and the importers; a client that wrote the term's name
(``campus://sections/Fall%202026/40213``) hears it too (:func:`canonical_section`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from campus_mcp import InvalidInput, ResourceTemplate, ToolContext
from sqlalchemy import select

from campus_catalog.models import Term
from campus_catalog.queries.sections import section_key
from campus_catalog.schemas import normalize_crn

SECTION_TEMPLATE = "campus://sections/{term}/{crn}"


def section_uri(term_uid: str, crn: str) -> str:
    """The URI a section's change is published under."""
    return f"campus://sections/{term_uid}/{crn}"


async def canonical_section(context: ToolContext, variables: Mapping[str, str]) -> Sequence[str]:
    """The published URI of the section a URI names, whichever way it names the term."""
    try:
        crn = normalize_crn(variables["crn"])
    except ValueError as exc:
        raise InvalidInput(str(exc), field="crn") from None
    async with context.session(read_only=True) as session:
        _section_id, term_id = await section_key(session, crn, variables["term"], context.settings)
        uid = await session.scalar(select(Term.uid).where(Term.id == term_id))
    return [section_uri(str(uid), crn)]


def catalog_resources() -> list[ResourceTemplate]:
    return [
        ResourceTemplate(
            uri_template=SECTION_TEMPLATE,
            name="section",
            title="A section",
            description=(
                "One section of a term by CRN (term: a uid such as 202710, or a name): meetings, instructor, "
                "seats and waitlist, final exam. Subscribe to hear when its seats, waitlist or times change "
                "or it is cancelled."
            ),
            tool="get_section",
            completers={"term": "term", "crn": "crn"},
            follows=canonical_section,
        ),
        ResourceTemplate(
            uri_template="campus://courses/{code}",
            name="course",
            title="A course",
            description="One course by code (such as COMP 2350): description, credits, prerequisites, recent terms.",
            tool="get_course",
            completers={"code": "courses"},
        ),
        ResourceTemplate(
            uri_template="campus://terms",
            name="terms",
            title="The terms",
            description="Every term the catalog has, with the current and the next term.",
            tool="list_terms",
        ),
    ]
