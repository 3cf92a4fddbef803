"""One weekly meeting of one of the student's sections, as the settings read it.

A class setting is keyed on a meeting, and what the settings show of one (its templates' values,
the meeting's line in an answer) is a dozen values of the section, its course, its term, its
instructors and the meeting. They come from the catalog's ORM objects where a caller has those
loaded (the calendar feed), or from one row of :data:`campus_settings.meetings`' statement, where
the ORM load of one section was nine statements (``load_sections``).
"""

from __future__ import annotations

from dataclasses import dataclass

from campus_catalog.api import MeetingTime, Section


@dataclass(frozen=True, slots=True)
class ClassMeeting:
    meeting_time_id: int
    section_id: int
    crn: str
    course_code: str
    title: str  # the section's own title, else its course's
    schedule_type: str | None
    subject: str
    course_number: str
    section_number: str
    instructors: tuple[str, ...]  # the primary first, then by name
    term: str  # the term's name
    credits: float | None  # the section's own (its most), none when Banner gives none
    weekday: int | None
    start_minute: int | None
    end_minute: int | None
    building: str | None
    building_name: str | None
    room: str | None

    @classmethod
    def of(cls, section: Section, meeting: MeetingTime | None) -> ClassMeeting:
        """From a section loaded with its course, term and instructors (catalog ``load_sections``);
        without ``meeting``, the section's values only (a final exam's)."""
        links = sorted(section.instructor_links, key=lambda link: (not link.is_primary, link.instructor.name))
        return cls(
            meeting_time_id=meeting.id if meeting is not None else 0,
            section_id=section.id,
            crn=section.crn,
            course_code=section.course.code,
            title=section.title or section.course.title,
            schedule_type=section.schedule_type,
            subject=section.course.subject_code,
            course_number=section.course.course_number,
            section_number=section.section_number,
            instructors=tuple(link.instructor.name for link in links),
            term=section.term.name,
            credits=section.credits_max if section.credits_max is not None else section.credits_min,
            weekday=meeting.weekday if meeting is not None else None,
            start_minute=meeting.start_minute if meeting is not None else None,
            end_minute=meeting.end_minute if meeting is not None else None,
            building=meeting.building if meeting is not None else None,
            building_name=meeting.building_name if meeting is not None else None,
            room=meeting.room if meeting is not None else None,
        )
