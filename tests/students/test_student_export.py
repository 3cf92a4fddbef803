"""The student's export holds everything the product holds about them, and nobody else's (issue 28).

Complete by construction: the test walks the SQLAlchemy metadata of a campus with every installed
plugin for each table with a foreign key to ``students``. Each needs a part of the export that
names it (``StudentData.tables``, the host's in campus_mcp.students.records) and a row maker here;
for each, a fresh student with one row in that table only gets an export whose part shows it,
while a bystander's export stays as it was (no other student's rows). A future plugin's table
without an export part fails here.

No secrets: the export never holds a token, a personal access token, the feed's address, nor any
column that keeps one (a token's, code's or feed secret's hash, a PKCE challenge); the test checks
each such column's value of the student's rows against the whole document.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from campus_canvas.connections import seal
from campus_canvas.models import CanvasConnection
from campus_catalog.models import MeetingTime, Section
from campus_friends.models import FriendCode, Friendship
from campus_mcp import StudentData
from campus_mcp.base.db import Base, utcnow
from campus_mcp.mcp.idempotency import IdempotencyKey, student_owner
from campus_mcp.oauth.accounts import Student
from campus_mcp.oauth.models import AuthorizationCode, Consent, OAuthClient, OAuthToken
from campus_mcp.oauth.personal_tokens import PersonalTokens
from campus_mcp.students.access_log import StudentAccess
from campus_mcp.students.export import student_export, uncovered_student_tables
from campus_mcp.students.records import HOST_STUDENT_DATA
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_schedule.models import Enrollment, SeatMail, SeatWatch, StudentEvent, StudentEventAttendee
from campus_settings.feed.tokens import issue
from campus_settings.models import ClassSetting, LevelSetting, NotificationSetting
from sqlalchemy import Column, ForeignKey, Integer, MetaData, Table, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

APP = "https://app.example/client.json"
# Columns that keep a secret or what stands for one: never in an export.
SECRET_COLUMN = re.compile(r"hash|sha256|secret|challenge")

# Adds one row about ``student`` (``other``: a second student for rows of two) and returns the
# secrets the row stands for, which the export must not hold.
RowMaker = Callable[[CampusHarness, int, int], Awaitable[list[str]]]


async def _added(campus: CampusHarness, *rows: Any) -> list[str]:
    async with campus.sessions() as session:
        session.add_all(rows)
        await session.commit()
    return []


async def _section(campus: CampusHarness) -> tuple[int, str]:
    async with campus.sessions() as session:
        section_id, crn = (await session.execute(select(Section.id, Section.crn).order_by(Section.id).limit(1))).one()
    return section_id, crn


def _token(student: int) -> OAuthToken:
    now = utcnow()
    return OAuthToken(
        family_id=secrets.token_hex(8),
        client_id=APP,
        user_id=student,
        scope="schedule:read",
        resource="http://127.0.0.1/api/mcp",
        access_token_hash=secrets.token_hex(32),
        refresh_token_hash=secrets.token_hex(32),
        access_expires_at=now + timedelta(hours=1),
        refresh_expires_at=now + timedelta(days=90),
    )


def _code(student: int) -> AuthorizationCode:
    return AuthorizationCode(
        code_hash=secrets.token_hex(32),
        client_id=APP,
        user_id=student,
        redirect_uri="https://app.example/callback",
        scope="schedule:read",
        resource="http://127.0.0.1/api/mcp",
        code_challenge=secrets.token_urlsafe(32),
        family_id=secrets.token_hex(8),
        expires_at=utcnow() + timedelta(minutes=10),
    )


async def _personal_token(campus: CampusHarness, student: int, _other: int) -> list[str]:
    made = await PersonalTokens(campus.sessions, campus.settings).create(
        student, name="Grade script", scope="schedule:read", days=30
    )
    return [made]


async def _feed(campus: CampusHarness, student: int, _other: int) -> list[str]:
    async with campus.sessions() as session:
        token = await issue(session, student)
        await session.commit()
    return [token]


async def _access(campus: CampusHarness, student: int, _other: int) -> list[str]:
    entry = StudentAccess(
        at=utcnow(),
        student_id=student,
        app_kind="oauth",
        app_id=APP,
        app_name="Study app",
        door="/api/mcp",
        action="my_courses",
        outcome="ok",
    )
    return await _added(campus, entry)


async def _enrollment(campus: CampusHarness, student: int, _other: int) -> list[str]:
    section_id, crn = await _section(campus)
    return await _added(campus, Enrollment(student_id=student, term_uid="T", section_id=section_id, crn=crn))


async def _seat_watch(campus: CampusHarness, student: int, _other: int) -> list[str]:
    section_id, crn = await _section(campus)
    return await _added(campus, SeatWatch(student_id=student, term_uid="T", section_id=section_id, crn=crn))


async def _seat_mail(campus: CampusHarness, student: int, _other: int) -> list[str]:
    section_id, crn = await _section(campus)
    async with campus.sessions() as session:
        watch = SeatWatch(student_id=student, term_uid="T", section_id=section_id, crn=crn)
        session.add(watch)
        await session.flush()
        session.add(SeatMail(watch_id=watch.id, opening=1, student_id=student, status="sent", sent_to="jane@wit.edu"))
        await session.commit()
    return []


def _meeting(owner: int) -> StudentEvent:
    start = utcnow() + timedelta(days=1)
    return StudentEvent(owner_id=owner, title="Study group", starts_at=start, ends_at=start + timedelta(hours=1))


async def _invited(campus: CampusHarness, student: int, other: int) -> list[str]:
    async with campus.sessions() as session:
        event = _meeting(other)
        session.add(event)
        await session.flush()
        session.add(StudentEventAttendee(event_id=event.id, student_id=student))
        await session.commit()
    return []


async def _canvas(campus: CampusHarness, student: int, _other: int) -> list[str]:
    # A Canvas connection: its tokens sealed in the row; neither they nor the sealed values are exported.
    tokens = [f"canvas-access-{secrets.token_hex(8)}", f"canvas-refresh-{secrets.token_hex(8)}"]
    row = CanvasConnection(
        student_id=student,
        canvas_user_id="42",
        canvas_user_name="Jimi Hendrix",
        access_token=seal(campus.settings, student, tokens[0]),
        refresh_token=seal(campus.settings, student, tokens[1]),
        connected_at=utcnow(),
    )
    return [*tokens, *await _added(campus, row)]


async def _class_setting(campus: CampusHarness, student: int, _other: int) -> list[str]:
    async with campus.sessions() as session:
        meeting = await session.scalar(select(MeetingTime.id).order_by(MeetingTime.id).limit(1))
    assert meeting is not None
    return await _added(campus, ClassSetting(student_id=student, meeting_time_id=meeting, color="#aa0000"))


ROW_MAKERS: dict[str, RowMaker] = {
    "oauth_tokens": lambda campus, student, _other: _added(campus, _token(student)),
    "oauth_codes": lambda campus, student, _other: _added(campus, _code(student)),
    "oauth_consents": lambda campus, student, _other: _added(
        campus, Consent(user_id=student, client_id=APP, scopes=["schedule:read"])
    ),
    "personal_tokens": _personal_token,
    "student_access": _access,
    "schedule_enrollments": _enrollment,
    "schedule_seat_watches": _seat_watch,
    "schedule_seat_mail": _seat_mail,
    "schedule_events": lambda campus, student, _other: _added(campus, _meeting(student)),
    "schedule_event_attendees": _invited,
    "friendships": lambda campus, student, other: _added(
        campus, Friendship(low_student_id=min(student, other), high_student_id=max(student, other), requester_id=other)
    ),
    "friend_codes": lambda campus, student, _other: _added(campus, FriendCode(student_id=student, code="ABCD2345")),
    "settings_level_settings": lambda campus, student, _other: _added(
        campus, LevelSetting(student_id=student, level="all_classes", color="#00aa00")
    ),
    "settings_class_settings": _class_setting,
    "settings_notifications": lambda campus, student, _other: _added(
        campus, NotificationSetting(student_id=student, paused=True)
    ),
    "settings_calendar_feeds": _feed,
    "canvas_connections": _canvas,
    # Held by the student's owner name, not a foreign key: the walk cannot find it, so it is named here.
    "idempotency_keys": lambda campus, student, _other: _added(
        campus,
        IdempotencyKey(
            owner=student_owner(student),
            tool="watch_section",
            key="retry-1",
            arguments_digest="0" * 64,
            result={},
            created_at=utcnow(),
        ),
    ),
}


def student_tables() -> dict[str, list[Column[Any]]]:
    """Every table with a foreign key to ``students``, with the columns that hold it."""
    found: dict[str, list[Column[Any]]] = {}
    for table in Base.metadata.tables.values():
        columns = [key.parent for key in table.foreign_keys if key.target_fullname.split(".")[0] == "students"]
        if columns:
            found[table.name] = columns
    return found


def part_of(table: str, plugin_parts: list[StudentData], document: dict[str, Any]) -> Any:
    """The export's part that reads ``table``: a host part at the top, a plugin's under ``data``."""
    for part in HOST_STUDENT_DATA:
        if table in part.tables:
            return document[part.key]
    (part,) = [part for part in plugin_parts if table in part.tables]
    return document["data"][part.key]


def without_time(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key != "exported_at"}


async def new_student(campus: CampusHarness, name: str, subject: str | None = None) -> int:
    async with campus.sessions() as session:
        issuer = "https://login.campus.example" if subject else None
        student = Student(username=name, display_name=name.title(), oidc_issuer=issuer, oidc_subject=subject)
        session.add(student)
        await session.commit()
        return student.id


async def secret_values(session: AsyncSession, table: str, columns: list[Column[Any]], student: int) -> list[str]:
    found = Base.metadata.tables[table]
    if not columns:
        return []
    rows = (await session.execute(select(found).where(or_(*[column == student for column in columns])))).mappings()
    return [
        str(value)
        for row in rows
        for name, value in row.items()
        if SECRET_COLUMN.search(name) and isinstance(value, str) and value
    ]


def test_a_table_of_student_data_without_a_part_is_named() -> None:
    metadata = MetaData()
    Table("students", metadata, Column("id", Integer, primary_key=True))
    Table(
        "rooms_bookings",
        metadata,
        Column("id", Integer, primary_key=True),
        Column("student_id", ForeignKey("students.id")),
    )
    Table("rooms_halls", metadata, Column("id", Integer, primary_key=True))
    assert uncovered_student_tables([], metadata) == ["rooms_bookings"]

    async def bookings_of(_session: AsyncSession, _student_id: int) -> list[str]:
        return []

    part = StudentData(key="room_bookings", description="Rooms.", read=bookings_of, tables=("rooms_bookings",))
    assert uncovered_student_tables([part], metadata) == []


async def test_every_table_of_student_data_is_in_the_export_and_no_other_students(
    campus_factory: CampusFactory,
) -> None:
    campus = await campus_factory(demo=True)
    parts = list(campus.registry.student_data)
    assert uncovered_student_tables(parts) == [], (
        "these tables hold a student's rows but no part of the export reads them: give the plugin a "
        "StudentData naming them in tables= (register_student_data, docs/hooks.md)"
    )
    tables = student_tables()
    assert "schedule_seat_watches" in tables  # the walk sees every plugin's tables
    assert sorted(set(tables) - set(ROW_MAKERS)) == [], "add a row maker for these tables to ROW_MAKERS"

    await _added(
        campus,
        OAuthClient(
            client_id=APP,
            kind="metadata_document",
            client_name="Study app",
            redirect_uris=["https://app.example/callback"],
            grant_types=["authorization_code"],
        ),
    )
    bystander = await new_student(campus, "bystander", subject="a1b2c3")
    other = await new_student(campus, "classmate")
    empty = without_time(await student_export(campus.deployment, bystander))
    # The students row itself: who the identity provider says the student is, never a password hash.
    assert empty["student"]["identity_provider"] == {"issuer": "https://login.campus.example", "subject": "a1b2c3"}

    for number, table in enumerate(sorted(ROW_MAKERS)):
        student = await new_student(campus, f"fresh{number}")
        before = await student_export(campus.deployment, student)
        kept_secrets = await ROW_MAKERS[table](campus, student, other)
        after = await student_export(campus.deployment, student)
        assert part_of(table, parts, after) != part_of(table, parts, before), f"{table}: the row is not in the export"

        text = json.dumps(after)
        async with campus.sessions() as session:
            kept_secrets += await secret_values(session, table, tables.get(table, []), student)
        for secret in kept_secrets:
            assert secret not in text, f"{table}: a secret is in the export"

        # The bystander's export is as it was: another student's row never shows.
        assert without_time(await student_export(campus.deployment, bystander)) == empty, table
