"""How and when a student hears of a watched section's seat, in a sentence the watch answers give.

Said from what this deployment really does: whether it sends e-mail (``CAMPUS_MCP_SMTP_*``) and to
which address (masked: a model reads and may repeat it), and how often the seats are read again
(the catalog's seat refresh job, the daily sync, or nothing), so a student on a campus that never
refreshes seats is not left waiting for news that cannot come.
"""

from __future__ import annotations

from collections.abc import Mapping

from campus_mcp import Cron, Interval, Job, Settings, mask_address
from sqlalchemy import column, select, table
from sqlalchemy.ext.asyncio import AsyncSession

from campus_schedule.seat_mail import student_address

_STUDENTS = table("students", column("id"), column("email"), column("campus_id"))
SEAT_REFRESH_JOB = "catalog.seat_refresh"
SECTIONS_SYNC_JOB = "catalog.sections_sync"


def seat_refresh_words(jobs: Mapping[str, Job]) -> str:
    """How often this campus reads the seats again, from the jobs it runs."""
    refresh = jobs.get(SEAT_REFRESH_JOB)
    if refresh is not None and isinstance(refresh.trigger, Interval):
        minutes = refresh.trigger.minutes
        every = "every minute" if minutes == 1 else f"every {minutes} minutes"
        return f"Seats are refreshed {every} here while the term is in registration, so an opening is seen within that."
    if jobs.get(SECTIONS_SYNC_JOB) is not None and isinstance(jobs[SECTIONS_SYNC_JOB].trigger, Cron):
        return "Seats are read once a day here (the catalog's daily run), so an opening may be seen up to a day late."
    return (
        "Seats are not refreshed on this campus (the sections are loaded by an administrator), so an opening "
        "is seen only when they are loaded again."
    )


async def address_of(session: AsyncSession, student_id: int) -> str | None:
    row = (
        await session.execute(select(_STUDENTS.c.email, _STUDENTS.c.campus_id).where(_STUDENTS.c.id == student_id))
    ).first()
    return None if row is None else student_address(row[0], row[1])


def how_told(settings: Settings, jobs: Mapping[str, Job], address: str | None) -> str:
    """The sentence: by e-mail to the masked address, or why not, then how often seats are read."""
    where = "Check list_watches, my_courses or your schedule page; an app that listens is told at once."
    if not settings.mail_configured:
        told = f"You won't be e-mailed: {settings.campus_short_name} has not set up e-mail from this service. {where}"
    elif address is None:
        told = (
            f"You won't be e-mailed: {settings.campus_short_name} has no e-mail address for you (your sign-in "
            f"gave none). {where}"
        )
    else:
        told = (
            f"When a seat opens you get one e-mail at {mask_address(address)}, with a link to stop watching; "
            "again each time it fills and opens again."
        )
    return f"{told} {seat_refresh_words(jobs)}"
