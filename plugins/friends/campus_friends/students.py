"""The few columns of the host's students table that the friends family reads.

The host's ``Student`` model is not part of the Plugin API, so this is a read-only view of the
three columns a friend is shown by (id, username, display name): never the email, the password
hash or the sign-in fields.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from campus_mcp import STUDENT_NAME_LENGTH, UTCDateTime, clean_student_text, utcnow
from sqlalchemy import Boolean, bindparam, column, func, insert, select, table
from sqlalchemy.ext.asyncio import AsyncSession

students = table(
    "students",
    column("id"),
    column("username"),
    column("display_name"),
    # Written only by add_student (sparse examples and tests); never read.
    column("is_demo", Boolean()),
    column("created_at", UTCDateTime()),
)


@dataclass(frozen=True)
class StudentName:
    id: int
    username: str
    display_name: str


def _name(row: Any) -> StudentName:
    # Cleaned on read as well as at sign-in: a name saved before the rule (issue 30) must not
    # reach another student as several lines either.
    username = clean_student_text(row[1], limit=150)
    return StudentName(
        id=row[0], username=username, display_name=clean_student_text(row[2], limit=STUDENT_NAME_LENGTH) or username
    )


async def student_named(session: AsyncSession, username: str) -> StudentName | None:
    """The student with this username, compared without regard to case."""
    wanted = username.strip().lower()
    row = (
        await session.execute(
            select(students.c.id, students.c.username, students.c.display_name).where(
                func.lower(students.c.username) == wanted
            )
        )
    ).first()
    return _name(row) if row else None


# Built once, the ids an expanding parameter.
_NAMES = select(students.c.id, students.c.username, students.c.display_name).where(
    students.c.id.in_(bindparam("ids", expanding=True))
)


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
