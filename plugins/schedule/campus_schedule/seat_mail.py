"""A seat watch's opening, e-mailed to the student once (issue 39, point 5).

An *opening* is a watched section going from full to having a seat. It is claimed in the database,
so every worker may look and exactly one e-mail goes out per opening:

1. :func:`note_openings` compares each watch's ``seat_open_seen`` with its section's seats now. A
   watch whose section opened is moved with ``UPDATE ... WHERE seat_open_seen = false``: the one
   transaction that changes the row also adds the opening's ``SeatMail`` (unique per watch and
   opening number); a second worker's UPDATE matches no row and adds nothing. A section that fills
   again moves the flag back, so its next opening is a new one. Refreshes in between change nothing.
2. :func:`deliver_pending` claims each pending mail with ``UPDATE ... WHERE status = 'pending'``
   (again one winner), sends it, and records ``sent``, or puts it back with a later
   ``next_attempt_at`` (doubling from a minute) and the reason; after :data:`MAX_ATTEMPTS` it stays
   ``failed``, on the student's watches page. Each outcome is counted
   (``campus_mcp_seat_mail_total{outcome}``). A worker killed between claiming and recording leaves
   ``sending``; after :data:`CLAIM_EXPIRES` the mail is pending again (the one case where a student
   may get a second copy, rather than none).

Who runs it: the ``schedule.seat_mail`` job every minute (the elected scheduler, with the retries),
and every server process at once when it hears a section change on the change bus (Redis across
workers), so a seat refresh's opening is e-mailed within seconds, by whichever worker wins the claim.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from email.message import EmailMessage

from campus_catalog.api import Course, Section, Term
from campus_mcp import (
    Interval,
    Job,
    JobContext,
    JobOutcome,
    MailNotSent,
    Settings,
    count_metric,
    looks_like_address,
    send_mail,
    utcnow,
)
from sqlalchemy import and_, column, or_, select, table, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_schedule.models import SeatMail, SeatWatch
from campus_schedule.watch_links import WATCHES_PAGE, stop_link

log = logging.getLogger(__name__)

# The host's students table, by the two columns read here (the address a campus sign-in gave).
_STUDENTS = table("students", column("id"), column("email"), column("campus_id"))

SEAT_MAIL_JOB_ID = "schedule.seat_mail"
SEAT_MAIL_EVERY = Interval(minutes=1)
# 1, 2, 4, 8, 16 minutes apart: a server down for half an hour still delivers; then it is shown.
MAX_ATTEMPTS = 6
FIRST_RETRY = timedelta(minutes=1)
CLAIM_EXPIRES = timedelta(minutes=10)
# The most mails one pass sends: a pass stays short; the next one (a minute later) goes on.
BATCH = 200
METRIC = "seat_mail"


def _seat_open(cancelled: bool, seats: int | None) -> bool:
    return not cancelled and (seats or 0) > 0


async def note_openings(sessions: async_sessionmaker[AsyncSession]) -> int:
    """Claim each new opening (and each refill) of a watched section; how many openings were added."""
    async with sessions() as session:
        rows = (
            await session.execute(
                select(SeatWatch.id, SeatWatch.student_id, SeatWatch.seat_open_seen, Section.seats_available)
                .join(Section, Section.id == SeatWatch.section_id)
                .where(
                    or_(
                        and_(
                            SeatWatch.seat_open_seen.is_(False),
                            Section.cancelled.is_(False),
                            Section.seats_available > 0,
                        ),
                        and_(
                            SeatWatch.seat_open_seen.is_(True),
                            or_(
                                Section.cancelled.is_(True),
                                Section.seats_available.is_(None),
                                Section.seats_available <= 0,
                            ),
                        ),
                    )
                )
            )
        ).all()
    opened = 0
    for watch_id, student_id, seen, seats in rows:
        async with sessions() as session:
            now_open = not seen
            moved = await session.execute(
                update(SeatWatch)
                .where(SeatWatch.id == watch_id, SeatWatch.seat_open_seen.is_(seen))
                .values(seat_open_seen=now_open, openings=SeatWatch.openings + (1 if now_open else 0))
                .execution_options(synchronize_session=False)
            )
            if moved.rowcount != 1:  # type: ignore[attr-defined]
                continue  # another worker saw this change first
            if now_open:
                number = await session.scalar(select(SeatWatch.openings).where(SeatWatch.id == watch_id))
                session.add(
                    SeatMail(
                        watch_id=watch_id,
                        opening=number,
                        student_id=student_id,
                        status="pending",
                        seats=seats,
                        next_attempt_at=utcnow(),
                    )
                )
                opened += 1
            await session.commit()
    return opened


def retry_delay(attempts: int) -> timedelta:
    return FIRST_RETRY * (1 << max(attempts - 1, 0))


def student_address(email: str | None, campus_id: str | None) -> str | None:
    """Where a student's e-mail goes: the address their campus sign-in gave (OIDC ``email``, SAML
    ``mail``, CAS ``mail``), else their campus id when the campus's ids are addresses."""
    for candidate in (email, campus_id):
        if candidate and looks_like_address(candidate.strip()):
            return candidate.strip()
    return None


async def _claim(sessions: async_sessionmaker[AsyncSession], mail_id: int) -> bool:
    now = utcnow()
    async with sessions() as session:
        claimed = await session.execute(
            update(SeatMail)
            .where(SeatMail.id == mail_id, SeatMail.status == "pending", SeatMail.next_attempt_at <= now)
            .values(status="sending", claimed_at=now, attempts=SeatMail.attempts + 1)
            .execution_options(synchronize_session=False)
        )
        await session.commit()
    return bool(claimed.rowcount == 1)  # type: ignore[attr-defined]


async def _record(sessions: async_sessionmaker[AsyncSession], mail_id: int, **values: object) -> None:
    async with sessions() as session:
        await session.execute(
            update(SeatMail).where(SeatMail.id == mail_id).values(**values).execution_options(synchronize_session=False)
        )
        await session.commit()


async def _message(session: AsyncSession, settings: Settings, mail_id: int) -> tuple[EmailMessage | None, int]:
    """The e-mail of this opening (None when the student has no address), and its attempt number."""
    row = (
        await session.execute(
            select(SeatMail, SeatWatch, Section, Course, Term, _STUDENTS.c.email, _STUDENTS.c.campus_id)
            .join(SeatWatch, SeatWatch.id == SeatMail.watch_id)
            .join(Section, Section.id == SeatWatch.section_id)
            .join(Course, Course.id == Section.course_id)
            .join(Term, Term.uid == SeatWatch.term_uid)
            .join(_STUDENTS, _STUDENTS.c.id == SeatMail.student_id)
            .where(SeatMail.id == mail_id)
        )
    ).one()
    mail, watch, section, course, term, email, campus_id = row
    address = student_address(email, campus_id)
    if address is None:
        return None, mail.attempts
    code = f"{course.subject_code} {course.course_number}"
    title = section.title or course.title
    seats = mail.seats or 0
    stop = stop_link(settings, watch.id, watch.student_id, watch.created_at)
    message = EmailMessage()
    message["To"] = address
    message["Subject"] = f"A seat opened in {code} (CRN {section.crn})"
    # One-click stop from the mail client (RFC 8058): a POST to the same link.
    message["List-Unsubscribe"] = f"<{stop}>"
    message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    message.set_content(
        f"A seat opened in {code} {title} (CRN {section.crn}, {term.name}): {seats} seat"
        f"{'' if seats == 1 else 's'} open when {settings.campus_short_name} last looked.\n\n"
        "Register soon if you want it: seats go fast, and this message does not register you.\n\n"
        f"Stop watching this section: {stop}\n"
        f"Your seat watches: {settings.base_url}{WATCHES_PAGE}\n\n"
        f"You get one e-mail each time the section goes from full to having a seat. "
        f"Sent by {settings.product_name} at {settings.campus_name}.\n"
    )
    return message, mail.attempts


async def deliver_pending(sessions: async_sessionmaker[AsyncSession], settings: Settings) -> tuple[int, int]:
    """Send the pending mails that are due, each claimed first; (sent, not sent this time)."""
    now = utcnow()
    async with sessions() as session:
        # A claim whose worker died mid-send: pending again.
        await session.execute(
            update(SeatMail)
            .where(SeatMail.status == "sending", SeatMail.claimed_at < now - CLAIM_EXPIRES)
            .values(status="pending")
            .execution_options(synchronize_session=False)
        )
        await session.commit()
        due = list(
            await session.scalars(
                select(SeatMail.id)
                .where(SeatMail.status == "pending", SeatMail.next_attempt_at <= now)
                .order_by(SeatMail.id)
                .limit(BATCH)
            )
        )
    sent = missed = 0
    for mail_id in due:
        if not await _claim(sessions, mail_id):
            continue  # another worker sends this one
        async with sessions() as session:
            message, attempts = await _message(session, settings, mail_id)
        if message is None:
            why = "no e-mail address is known for you (your campus sign-in gave none)"
            await _record(sessions, mail_id, status="failed", last_error=why)
            count_metric(METRIC, outcome="no_address")
            missed += 1
            continue
        try:
            await send_mail(settings, message)
        except MailNotSent as exc:
            missed += 1
            given_up = attempts >= MAX_ATTEMPTS
            count_metric(METRIC, outcome="gave_up" if given_up else "failed")
            log.warning(
                "seat mail %d: not sent, attempt %d of %d (%s)%s",
                mail_id,
                attempts,
                MAX_ATTEMPTS,
                exc,
                "; given up, shown on the student's watches page" if given_up else "; tried again later",
            )
            await _record(
                sessions,
                mail_id,
                status="failed" if given_up else "pending",
                last_error=str(exc),
                next_attempt_at=utcnow() + retry_delay(attempts),
            )
            continue
        await _record(sessions, mail_id, status="sent", sent_at=utcnow(), sent_to=str(message["To"]), last_error=None)
        count_metric(METRIC, outcome="sent")
        sent += 1
    return sent, missed


# One pass at a time per process: a burst of section changes does not start passes side by side.
_passes: dict[int, asyncio.Lock] = {}


async def seat_mail_pass(sessions: async_sessionmaker[AsyncSession], settings: Settings) -> tuple[int, int, int]:
    """Note the openings, then send what is due: (openings, sent, not sent)."""
    lock = _passes.setdefault(id(sessions), asyncio.Lock())
    async with lock:
        opened = await note_openings(sessions)
        sent, missed = await deliver_pending(sessions, settings)
    log.info("seat mail pass: %d opening(s), %d sent, %d not sent", opened, sent, missed)
    return opened, sent, missed


async def run_seat_mail(context: JobContext) -> JobOutcome:
    opened, sent, missed = await seat_mail_pass(context.sessions, context.settings)
    return JobOutcome(items=sent, summary=f"{opened} opening(s), {sent} e-mail(s) sent, {missed} not sent")


def seat_mail_job() -> Job:
    return Job(
        id=SEAT_MAIL_JOB_ID,
        description="E-mail each student once per opening of a section they watch, and retry what was not sent",
        trigger=SEAT_MAIL_EVERY,
        run=run_seat_mail,
    )


def on_section_changes(settings: Settings) -> Callable[[async_sessionmaker[AsyncSession]], Awaitable[None]]:
    """The background work of a server process: a pass each time a section's change is heard (the
    seat refresh publishes one per changed section; with Redis, every worker hears it)."""

    async def listen(sessions: async_sessionmaker[AsyncSession]) -> None:
        if not settings.mail_configured:
            return
        from campus_mcp import change_bus

        heard = asyncio.Event()

        def _heard(event: object) -> None:
            if str(getattr(event, "uri", "")).startswith("campus://sections/"):
                heard.set()

        unsubscribe = change_bus(settings).subscribe(_heard)
        try:
            while True:
                await heard.wait()
                heard.clear()
                try:
                    await seat_mail_pass(sessions, settings)
                except Exception:  # the job's next run tries again; the listener goes on
                    log.exception("seat mail pass after a section change failed; the job tries again")
        finally:
            unsubscribe()

    return listen
