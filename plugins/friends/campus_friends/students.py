"""The few columns of the host's students table that the friends family reads.

The host's ``Student`` model is not part of the Plugin API, so this is a read-only view of the
columns a friend is shown by (id, username, display name), and of the campus id, read only to
know that the username is one: never the email, the password hash or the sign-in fields. A
student of the campus sign-in is shown by name alone (``shown_name``): their username is their
campus id, which no other student sees, and nobody finds them by it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from campus_mcp import UTCDateTime, clean_student_text, shown_name, utcnow
from sqlalchemy import Boolean, bindparam, column, func, insert, select, table
from sqlalchemy.ext.asyncio import AsyncSession

students = table(
    "students",
    column("id"),
    column("username"),
    column("display_name"),
    column("campus_id"),
    # Written only by add_student (sparse examples and tests); never read.
    column("is_demo", Boolean()),
    column("created_at", UTCDateTime()),
)


@dataclass(frozen=True)
class StudentName:
    id: int
    # None for a student of the campus sign-in: their username is their campus id.
    username: str | None
    display_name: str


_SHOWN = (students.c.id, students.c.username, students.c.display_name, students.c.campus_id)


def _name(row: Any) -> StudentName:
    # Cleaned on read as well as at sign-in: a name saved before the rule (issue 30) must not
    # reach another student as several lines either.
    student_id, username, display_name, campus_id = row
    return StudentName(
        id=student_id,
        username=None if campus_id is not None else clean_student_text(username, limit=150),
        display_name=shown_name(display_name, campus_id=campus_id, username=username),
    )


async def student_named(session: AsyncSession, username: str) -> StudentName | None:
    """The local student with this username, compared without regard to case. A student of the
    campus sign-in is never found by username: it is their campus id (they give a friend code)."""
    wanted = username.strip().lower()
    row = (
        await session.execute(
            select(*_SHOWN).where(func.lower(students.c.username) == wanted, students.c.campus_id.is_(None))
        )
    ).first()
    return _name(row) if row else None


# Built once, the ids an expanding parameter.
_NAMES = select(*_SHOWN).where(students.c.id.in_(bindparam("ids", expanding=True)))


async def student_names(session: AsyncSession, ids: Iterable[int]) -> dict[int, StudentName]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    rows = await session.execute(_NAMES, {"ids": wanted})
    return {row[0]: _name(row) for row in rows}


async def add_student(session: AsyncSession, username: str, display_name: str) -> int:
    """A plain local student with no password, for the sparse examples' second student; its id."""
    result = await session.execute(
        insert(students)
        .values(username=username, display_name=display_name, is_demo=False, created_at=utcnow())
        .returning(students.c.id)
    )
    return int(result.scalar_one())
