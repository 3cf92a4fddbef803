"""Resolving the ``attribute`` argument of a section search: a code ('HSS') or the attribute's
name in a student's words ('humanities', 'Humanities and Social Sciences', 'HUM'), as a subject
is resolved (queries/subjects.py). Before, only the exact code matched, and a name quietly
answered no section."""

from __future__ import annotations

import re

from campus_mcp import InvalidInput
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.models import SectionAttribute
from campus_catalog.queries.lookups import HeldTable

# Words of a name that do not tell one attribute from another.
FILLER = frozenset({"a", "an", "and", "the", "of", "for", "in", "course", "courses", "class", "classes"})
# A word this long or longer may stand for the start of a word of the name ('HUM' for 'Humanities').
SHORTEST_ABBREVIATION = 3
MOST_LISTED = 10


async def _read_attributes(session: AsyncSession) -> tuple[tuple[str, str], ...]:
    """(code, name) of every attribute sections carry, by code (the code index, grouped)."""
    rows = await session.execute(
        select(SectionAttribute.code, func.max(SectionAttribute.description))
        .group_by(SectionAttribute.code)
        .order_by(SectionAttribute.code)
    )
    return tuple((code, name or "") for code, name in rows)


_attributes: HeldTable[tuple[tuple[str, str], ...]] = HeldTable(_read_attributes)


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"\w+", text.casefold()) if w not in FILLER]


def _names_it(wanted: list[str], name: str) -> bool:
    """Every word of ``wanted`` is a word of the name, or (three letters or more) the start of one."""
    words = _words(name)
    return bool(wanted) and all(
        any(word == w or (len(w) >= SHORTEST_ABBREVIATION and word.startswith(w)) for word in words) for w in wanted
    )


def _label(code: str, name: str) -> str:
    return f"{code} ({name})" if name else code


async def resolve_attribute(session: AsyncSession, value: str) -> str:
    """The code of the attribute a student means: its code in any case, its name in any case, or
    words of its name; words that name several attributes, or none, are an error listing them."""
    attributes = await _attributes.rows(session)
    wanted = " ".join(value.split()).casefold()
    for code, name in attributes:
        if code.casefold() == wanted or " ".join(name.split()).casefold() == wanted:
            return code
    words = _words(value)
    named = [(code, name) for code, name in attributes if _names_it(words, name) or code.casefold() in words]
    if len(named) == 1:
        return named[0][0]
    if named:
        listed = ", ".join(_label(code, name) for code, name in named[:MOST_LISTED])
        raise InvalidInput(
            f"Attribute {value!r} names several attributes: {listed}. Pass the code of the one you mean.",
            field="attribute",
        )
    listed = ", ".join(_label(code, name) for code, name in attributes[:MOST_LISTED]) or "none"
    raise InvalidInput(
        f"Unknown attribute {value!r}. The sections' attributes are: {listed}. Pass a code or a name.",
        field="attribute",
    )
