"""What ``check_schedule`` knows of a signed-in student: their sections in the term and the
courses on their record (issue 37, point 7).

The catalog does not own a student's schedule: the schedule family does, and it depends on the
catalog, never the other way. So the catalog names what it needs (:class:`StudentRecord`) and a
family that keeps students' sections registers a reader of it under its plugin name; the
catalog asks only the readers of plugins loaded in the calling deployment (a process that loaded
the schedule family once for another campus must not read its tables on a campus without them).
Anonymous, or with no such family, the check knows no student and says so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date

from campus_mcp import ToolContext
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.queries.clock import campus_today


@dataclass(frozen=True)
class StudentRecord:
    """One student's sections in one term, and the courses of their other terms on record."""

    held_crns: frozenset[str]
    # Courses of terms that ended (taken) and of terms under way other than the planned one.
    completed: frozenset[str]
    in_progress: frozenset[str]
    # How many terms the campus has on record for the student: 0 means their history is unknown
    # here (a transfer student, or a campus that imports no past enrollments), not "took nothing".
    terms_on_record: int


# (session, student id, term uid, the campus's today) -> the student's record.
RecordReader = Callable[[AsyncSession, int, str, date], Awaitable[StudentRecord]]
_readers: dict[str, RecordReader] = {}


def register_student_record(plugin: str, reader: RecordReader) -> None:
    """Called by the family that keeps students' sections (the schedule family) when it loads."""
    _readers[plugin] = reader


async def student_record(context: ToolContext, session: AsyncSession, term_uid: str) -> StudentRecord | None:
    """The signed-in student's record, or None (anonymous, or no family keeps students' sections)."""
    student = context.principal.user_id
    if student is None:
        return None
    for plugin, reader in _readers.items():
        if plugin in context.plugin_names:
            return await reader(session, student, term_uid, campus_today(context.settings.timezone))
    return None
