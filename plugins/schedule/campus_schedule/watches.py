"""Seat watches: "tell me when a seat opens in CRN 40213", for clients without subscriptions.

``watch_section`` records the wish (after the student confirms, as every write). A watched
section's seats now are on the next answer of ``list_watches`` and ``my_courses`` and on the
schedule page, and a client listening to the section or to the schedule (``subscriptions/listen``)
hears the seat refresh at once. Where the campus sends e-mail, each opening is also e-mailed to the
student once (campus_schedule.seat_mail); every watch answer says how the student will be told
(campus_schedule.watch_notice).
"""

from __future__ import annotations

from campus_catalog.api import Course, Section, Term, campus_moment, resolve_term, seats_as_of, section_key
from campus_mcp import InvalidInput, PlannedChange, ToolContext, not_changed
from sqlalchemy import bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_schedule.models import SeatWatch
from campus_schedule.schemas import MyWatches, SectionWatch, WatchChange, WatchedSection, WatchesQuery
from campus_schedule.watch_notice import address_of, how_told

# A student watches a handful of full sections while registering; more is a mistake or a script.
MAX_WATCHES = 20
UNCHANGED = ("declined", "cancelled")


def seat_open(cancelled: bool, seats_available: int | None) -> bool:
    return not cancelled and (seats_available or 0) > 0


# The columns a watch's answer shows, built once (by student, and by student and term): the
# whole section was loaded as an ORM object, its vector too, and the statement built per call.
_WATCHES = (
    select(
        SeatWatch.term_uid,
        SeatWatch.crn,
        SeatWatch.created_at,
        Section.title,
        Section.seats_available,
        Section.waitlist_available,
        Section.cancelled,
        Course.subject_code,
        Course.course_number,
        Course.title,
        # A file import leaves the section's seat time alone (the file may be old): its term's import time.
        func.coalesce(Section.seats_synced_at, Term.catalog_imported_at),
        Term.sections_synced_at,
    )
    .join(Section, Section.id == SeatWatch.section_id)
    .join(Course, Course.id == Section.course_id)
    .join(Term, Term.id == Section.term_id)
    .where(SeatWatch.student_id == bindparam("student_id"))
    .order_by(SeatWatch.term_uid, SeatWatch.crn)
)
_TERM_WATCHES = _WATCHES.where(SeatWatch.term_uid == bindparam("term_uid"))


async def watched_sections(
    session: AsyncSession, student_id: int, term_uid: str | None = None, *, timezone: str
) -> list[WatchedSection]:
    """The student's watches (of one term, or all), each with its section's seats now and when
    they were read: a term Banner's live sync never read has its seats of the last import, which
    nothing refreshes, and the answer says so (issue 37, point 6)."""
    if term_uid is None:
        rows = await session.execute(_WATCHES, {"student_id": student_id})
    else:
        rows = await session.execute(_TERM_WATCHES, {"student_id": student_id, "term_uid": term_uid})
    return [
        WatchedSection(
            term=term,
            crn=crn,
            course_code=f"{subject} {number}",
            title=title or course_title,
            seats_available=seats,
            waitlist_available=waitlist,
            cancelled=cancelled,
            seat_open=seat_open(cancelled, seats),
            watching_since=campus_moment(since, timezone)[0],
            watching_since_text=campus_moment(since, timezone)[1],
            seats_as_of=seats_as_of(seats_read, timezone, refreshed=term_synced is not None),
        )
        for term, crn, since, title, seats, waitlist, cancelled, subject, number, course_title, seats_read, term_synced in rows
    ]


async def _section(session: AsyncSession, context: ToolContext, args: SectionWatch) -> tuple[Section, Term]:
    section_id, term_id = await section_key(session, args.crn, args.term, context.settings)
    section = await session.get(Section, section_id)
    term = await session.get(Term, term_id)
    assert section is not None and term is not None
    return section, term


async def _watch(session: AsyncSession, student_id: int, section_id: int) -> SeatWatch | None:
    found: SeatWatch | None = await session.scalar(
        select(SeatWatch).where(SeatWatch.student_id == student_id, SeatWatch.section_id == section_id)
    )
    return found


def _described(section: Section, term: Term, course_code: str) -> str:
    seats = section.seats_available
    now = "cancelled" if section.cancelled else "seats unknown" if seats is None else f"{max(seats, 0)} open now"
    return f"{course_code} (CRN {section.crn}, {term.name}; {now})"


async def _course_code(session: AsyncSession, section: Section) -> str:
    row = (
        await session.execute(select(Course.subject_code, Course.course_number).where(Course.id == section.course_id))
    ).one()
    return f"{row[0]} {row[1]}"


async def plan_watch(context: ToolContext, args: SectionWatch) -> PlannedChange | None:
    async with context.session() as session:
        section, term = await _section(session, context, args)
        if await _watch(session, context.user_id, section.id) is not None:
            return None  # already watched: nobody is asked
        count = await session.scalar(select(func.count()).where(SeatWatch.student_id == context.user_id)) or 0
        if count >= MAX_WATCHES:
            raise InvalidInput(
                f"You watch {count} sections, the most this campus keeps. Stop watching one with unwatch_section "
                "(list_watches lists them), then watch this one."
            )
        what = _described(section, term, await _course_code(session, section))
        told = await _how_told(context, session)
    return PlannedChange(
        message=(
            f"Watch {what} for an open seat.\nYou will see it on your schedule page and in my_courses; an app that "
            f"listens is told at once. {told}\nThis does not register you for the section."
        ),
        version="watching:no",
    )


async def plan_unwatch(context: ToolContext, args: SectionWatch) -> PlannedChange | None:
    async with context.session() as session:
        section, term = await _section(session, context, args)
        if await _watch(session, context.user_id, section.id) is None:
            return None  # not watched: nothing to stop
        what = _described(section, term, await _course_code(session, section))
    return PlannedChange(message=f"Stop watching {what} for an open seat.", version="watching:yes")


async def run_watch(context: ToolContext, args: SectionWatch) -> WatchChange:
    return await _change(context, args, watching=True)


async def run_unwatch(context: ToolContext, args: SectionWatch) -> WatchChange:
    return await _change(context, args, watching=False)


async def _how_told(context: ToolContext, session: AsyncSession) -> str:
    """How the signed-in student will hear of an opening (by e-mail, or why not) and how often seats are read."""
    return how_told(context.settings, context.jobs, await address_of(session, context.user_id))


async def _change(context: ToolContext, args: SectionWatch, *, watching: bool) -> WatchChange:
    student = context.user_id
    async with context.session() as session:
        section, term = await _section(session, context, args)
        told = await _how_told(context, session)
        if context.confirmation in UNCHANGED:
            return WatchChange(
                watches=await watched_sections(session, student, timezone=context.settings.timezone),
                result="unchanged",
                not_changed=not_changed(context.confirmation),
                how_told=told,
            )
        existing = await _watch(session, student, section.id)
        changed = (existing is None) == watching
        if changed and watching:
            # A section with a seat now is no opening: the student is e-mailed when a full one opens.
            open_now = seat_open(section.cancelled, section.seats_available)
            session.add(
                SeatWatch(
                    student_id=student,
                    term_uid=term.uid,
                    section_id=section.id,
                    crn=section.crn,
                    seat_open_seen=open_now,
                )
            )
        elif changed and existing is not None:
            await session.delete(existing)
        await session.commit()
        watches = await watched_sections(session, student, timezone=context.settings.timezone)
    return WatchChange(watches=watches, result="changed" if changed else "unchanged", how_told=told)


async def run_list_watches(context: ToolContext, args: WatchesQuery) -> MyWatches:
    async with context.session(read_only=True) as session:
        term_uid = None
        if args.term is not None:
            term_uid = (await resolve_term(session, args.term, context.settings)).uid
        told = await _how_told(context, session)
        watches = await watched_sections(session, context.user_id, term_uid, timezone=context.settings.timezone)
        return MyWatches(watches=watches, how_told=told)
