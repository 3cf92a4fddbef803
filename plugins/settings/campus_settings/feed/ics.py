"""The student's calendar as iCalendar text (RFC 5545, with RFC 7986 ``COLOR``), written with
``icalendar``.

The feed holds every term the student has a section in. A class meeting is one weekly recurring
event (``RRULE``) from its first class to its last, in the campus zone (a ``VTIMEZONE`` is
included, written by ``feed.vtimezone`` so every parser reads it, and a 10:00 class stays 10:00
across a daylight-saving change), with an ``EXDATE`` on each holiday, break and finals-week day: the same days ``busy_blocks`` skips, so expanding the
feed gives exactly the student's busy times. Finals, university events and friend meetings are
single events. Each event has the title, description, location, color and reminders the
settings resolver gives it; while notifications are paused no event has a ``VALARM``.

UIDs are stable (the kind and the catalog or event id), so a calendar app updates an event
instead of adding a copy when a setting changes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from campus_catalog.models import FinalExam, MeetingTime, Section, Term, UniversityEvent
from campus_catalog.queries.sections import final_exam
from campus_mcp import CalendarEvent, Settings, clean_student_text, utcnow
from campus_schedule.busy import no_class_days
from campus_schedule.enrollment import enrolled_sections
from campus_schedule.events import events_between, meeting_title
from campus_schedule.models import Enrollment, StudentEvent
from icalendar import Alarm, Calendar, Event
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_settings.class_meeting import ClassMeeting
from campus_settings.feed.colors import css3_name
from campus_settings.feed.vtimezone import vtimezone
from campus_settings.models import ClassSetting, LevelSetting, NotificationSetting
from campus_settings.resolver import (
    ResolvedSettings,
    StudentSettings,
    class_meeting_event,
    final_exam_event,
    load_student_settings,
    university_event,
)

# Friend meetings are not tied to a term: the feed shows them from a while back to a year ahead.
MEETINGS_BACK = timedelta(days=90)
MEETINGS_AHEAD = timedelta(days=366)
PRODID = "-//Campus MCP//Calendar feed//EN"


@dataclasses.dataclass(frozen=True)
class Feed:
    body: bytes
    last_modified: datetime


def _at(day: date, minute: int, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(minute // 60, minute % 60), tzinfo=zone)


def _line(text: str) -> str:
    # A template saved before its separators were refused (issue 30) must not add a line here.
    return clean_student_text(text, limit=len(text))


def _describe(event: Event, uid: str, resolved: ResolvedSettings, paused: bool, stamp: datetime) -> None:
    event.add("uid", uid)
    event.add("dtstamp", stamp)
    event.add("summary", _line(resolved.title))
    if resolved.description:
        # Newlines are the description's own; U+2028/U+2029 are not (templates.clean_text).
        event.add("description", resolved.description.replace("\u2028", " ").replace("\u2029", " "))
    if resolved.location:
        event.add("location", _line(resolved.location))
    color = css3_name(resolved.color)
    if color:
        event.add("color", color)
    if resolved.visibility == "private":
        event.add("class", "PRIVATE")
    elif resolved.visibility == "public":
        event.add("class", "PUBLIC")
    if not paused:
        for minutes in sorted(set(resolved.reminders)):
            alarm = Alarm()
            alarm.add("action", "DISPLAY")
            alarm.add("description", _line(resolved.title))
            alarm.add("trigger", timedelta(minutes=-minutes))
            event.add_component(alarm)


def _class_event(
    section: Section,
    meeting: MeetingTime,
    skip: set[date],
    zone: ZoneInfo,
    resolved: ResolvedSettings,
    domain: str,
    paused: bool,
    stamp: datetime,
) -> Event | None:
    """One weekly meeting as a recurring event, or None when it has no class at all."""
    if meeting.weekday is None or meeting.start_minute is None or meeting.end_minute is None:
        return None  # no fixed day or time (online, TBA): nothing to put in a calendar
    first = meeting.start_date or section.term.start_date
    last = meeting.end_date or section.term.end_date
    days = []
    day = first + timedelta(days=(meeting.weekday - first.weekday()) % 7)
    while day <= last:
        days.append(day)
        day += timedelta(days=7)
    held = [d for d in days if d not in skip]
    if not held:
        return None
    event = Event()
    # DTSTART is the first class actually held, so a holiday on the first week is no instance at all.
    event.add("dtstart", _at(held[0], meeting.start_minute, zone))
    event.add("dtend", _at(held[0], meeting.end_minute, zone))
    until = _at(held[-1], meeting.start_minute, zone).astimezone(UTC)
    event.add("rrule", {"freq": "weekly", "until": until})
    skipped = [_at(d, meeting.start_minute, zone) for d in days if d in skip and held[0] < d < held[-1]]
    if skipped:
        event.add("exdate", skipped)
    _describe(event, f"class-meeting-{meeting.id}@{domain}", resolved, paused, stamp)
    return event


async def _final_event(
    session: AsyncSession,
    section: Section,
    settings: StudentSettings,
    zone: ZoneInfo,
    domain: str,
    paused: bool,
    stamp: datetime,
) -> Event | None:
    exam = await final_exam(session, section)
    if exam is None or exam.start is None or exam.end is None:
        return None
    start, end = _minutes(exam.start), _minutes(exam.end)
    # The resolver reads an exam row; this one is built from the catalog's answer, never saved.
    row = FinalExam(exam_date=exam.date, start_minute=start, end_minute=end, building=exam.building, room=exam.room)
    event = Event()
    event.add("dtstart", _at(exam.date, start, zone))
    event.add("dtend", _at(exam.date, end, zone))
    _describe(
        event, f"final-exam-{section.id}@{domain}", settings.resolve(final_exam_event(section, row)), paused, stamp
    )
    return event


def _minutes(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


def _university(
    row: UniversityEvent, settings: StudentSettings, zone: ZoneInfo, domain: str, paused: bool, stamp: datetime
) -> Event:
    event = Event()
    if row.all_day or row.starts_at is None or row.ends_at is None:
        event.add("dtstart", row.start_date)
        event.add("dtend", row.end_date + timedelta(days=1))  # DTEND of a date is exclusive
    else:
        event.add("dtstart", row.starts_at.astimezone(zone))
        event.add("dtend", row.ends_at.astimezone(zone))
    _describe(event, f"university-event-{row.id}@{domain}", settings.resolve(university_event(row)), paused, stamp)
    return event


def _meeting(row: StudentEvent, zone: ZoneInfo, domain: str, stamp: datetime) -> Event:
    # A friend meeting has no level of its own in seed 000's table: its own title, no reminder.
    event = Event()
    event.add("uid", f"student-event-{row.id}@{domain}")
    event.add("dtstamp", stamp)
    event.add("summary", meeting_title(row))
    event.add("dtstart", row.starts_at.astimezone(zone))
    event.add("dtend", row.ends_at.astimezone(zone))
    return event


async def _terms(session: AsyncSession, student_id: int) -> list[Term]:
    uids = select(Enrollment.term_uid).where(Enrollment.student_id == student_id)
    return list((await session.scalars(select(Term).where(Term.uid.in_(uids)).order_by(Term.start_date))).all())


async def _paused(session: AsyncSession, student_id: int, now: datetime) -> bool:
    row = await session.get(NotificationSetting, student_id)
    return bool(row and row.paused and (row.paused_until is None or row.paused_until > now))


async def last_change(session: AsyncSession, student_id: int, extra: Sequence[datetime]) -> datetime:
    """The newest change the feed shows: a setting, the pause, an enrollment, a friend meeting,
    the feed itself. For ``Last-Modified`` only: the ETag (a digest of the body) decides a 304."""
    stamps = list(extra)
    for column, owner in (
        (ClassSetting.updated_at, ClassSetting.student_id),
        (LevelSetting.updated_at, LevelSetting.student_id),
        (NotificationSetting.updated_at, NotificationSetting.student_id),
        (Enrollment.created_at, Enrollment.student_id),
        (StudentEvent.created_at, StudentEvent.owner_id),
    ):
        newest = await session.scalar(select(func.max(column)).where(owner == student_id))
        if isinstance(newest, datetime):
            stamps.append(newest if newest.tzinfo else newest.replace(tzinfo=UTC))
    return max(stamps) if stamps else utcnow()


def _added(row: CalendarEvent, zone: ZoneInfo, domain: str, stamp: datetime) -> Event:
    # Another family's event (register_calendar_events): its own title, no reminder, as a meeting.
    event = Event()
    event.add("uid", f"{row.uid}@{domain}")
    event.add("dtstamp", stamp)
    event.add("summary", _line(row.title) or "(untitled)")
    event.add("dtstart", row.starts_at.astimezone(zone))
    if row.ends_at is not None:
        event.add("dtend", row.ends_at.astimezone(zone))
    if row.description:
        event.add("description", row.description.replace("\u2028", " ").replace("\u2029", " "))
    if row.url:
        event.add("url", row.url)
    return event


async def build_feed(
    session: AsyncSession, student_id: int, settings: Settings, since: datetime, added: Sequence[CalendarEvent] = ()
) -> Feed:
    """The whole calendar of ``student_id``. ``since`` is when the feed was made (a floor for
    ``Last-Modified``); ``added``, other families' events (``calendar_events_for``)."""
    zone = ZoneInfo(settings.timezone)
    domain = urlsplit(settings.base_url).hostname or "campus-mcp"
    now = utcnow()
    # DTSTAMP is required; a fixed one (the feed's own last change) keeps the body, so the ETag,
    # the same until something the student sees changes.
    terms = await _terms(session, student_id)
    student = await load_student_settings(session, student_id)
    paused = await _paused(session, student_id, now)
    today = now.astimezone(zone).date()
    span_start = min([t.start_date for t in terms] + [today - MEETINGS_BACK])
    span_end = max([t.end_date for t in terms] + [today + MEETINGS_AHEAD])
    skip = await no_class_days(session, span_start, span_end)
    changed = await last_change(session, student_id, [since])
    stamp = changed.astimezone(UTC).replace(microsecond=0)

    calendar = Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    calendar.add("x-wr-calname", f"{settings.campus_short_name} classes")
    calendar.add("x-wr-timezone", settings.timezone)
    calendar.add("refresh-interval", timedelta(hours=1), parameters={"VALUE": "DURATION"})
    events: list[Event] = []
    for term in terms:
        for section in await enrolled_sections(session, student_id, term.uid):
            if section.cancelled:
                continue
            for meeting in sorted(section.meeting_times, key=lambda m: m.id):
                resolved = student.resolve(class_meeting_event(ClassMeeting.of(section, meeting)))
                made = _class_event(section, meeting, skip, zone, resolved, domain, paused, stamp)
                if made is not None:
                    events.append(made)
            final = await _final_event(session, section, student, zone, domain, paused, stamp)
            if final is not None:
                events.append(final)
    university = await session.scalars(
        select(UniversityEvent)
        .where(UniversityEvent.start_date <= span_end, UniversityEvent.end_date >= span_start)
        .order_by(UniversityEvent.start_date, UniversityEvent.id)
    )
    events += [_university(row, student, zone, domain, paused, stamp) for row in university]
    window = (_at(span_start, 0, zone), _at(span_end + timedelta(days=1), 0, zone))
    events += [_meeting(row, zone, domain, stamp) for row in await events_between(session, student_id, *window)]
    events += [_added(row, zone, domain, stamp) for row in added]
    for event in events:
        calendar.add_component(event)
    # Our own VTIMEZONE, not add_missing_timezones' (one comma-separated RDATE, which ical.js
    # reads only the first value of): RRULEs from the zone's rules, before the events.
    calendar.subcomponents.insert(0, vtimezone(zone, span_start - timedelta(days=366), span_end + timedelta(days=366)))
    return Feed(body=calendar.to_ical(), last_modified=stamp)
