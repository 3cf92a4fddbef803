"""Reading and saving settings rows with no lost update (issue 12, point 6).

A save reads the row, merges the change into it and writes it only if the row's ``version`` is
still the one it read (``UPDATE ... WHERE version = :read``, the same on SQLite and PostgreSQL);
a row created by someone else in between fails the unique constraint. Either way the save reads
again and merges again, so two clients changing the same row at once both land, in some order,
and the row is never a mix of one client's read and another's write.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

from campus_catalog.api import MeetingTime, Section, json_list_text
from campus_mcp import CampusError, utcnow
from campus_schedule.models import Enrollment
from sqlalchemy import BindParameter, Select, bindparam, delete, func, literal, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_settings.changes import SettingChange
from campus_settings.models import FIELDS, ClassSetting, LevelSetting, NotificationSetting
from campus_settings.resolver import UNIVERSITY, kind_of, row_fields

Row = TypeVar("Row", ClassSetting, LevelSetting)
SaveResult = Literal["created", "updated", "deleted", "unchanged"]
ATTEMPTS = 8
BUSY = "Your settings changed several times at once; nothing was saved this time. Try again in a moment."


def empty(fields: dict[str, Any]) -> bool:
    return all(fields[field] is None for field in FIELDS)


async def class_row(session: AsyncSession, student_id: int, meeting_time_id: int) -> ClassSetting | None:
    return await session.scalar(
        select(ClassSetting).where(
            ClassSetting.student_id == student_id, ClassSetting.meeting_time_id == meeting_time_id
        )
    )


async def level_row(session: AsyncSession, student_id: int, level: str) -> LevelSetting | None:
    return await session.scalar(
        select(LevelSetting).where(LevelSetting.student_id == student_id, LevelSetting.level == level)
    )


_STUDENT: BindParameter[int] = bindparam("student_id")


def _level_rows_select(dialect: str, with_meetings: bool) -> Select[Any]:
    """One row per level row of the student (one row of NULLs when there is none), each with the
    number of the student's class settings and, ``with_meetings``, the student's class meetings
    per schedule type as a JSON array of [type, count]."""
    columns: list[Any] = [
        LevelSetting,
        select(func.count(ClassSetting.id)).where(ClassSetting.student_id == _STUDENT).scalar_subquery(),
    ]
    if with_meetings:
        per_type = (
            select(Section.schedule_type.label("type"), func.count(MeetingTime.id).label("meetings"))
            .join(Enrollment, Enrollment.section_id == Section.id)
            .join(MeetingTime, MeetingTime.section_id == Section.id)
            .where(Enrollment.student_id == _STUDENT)
            .group_by(Section.schedule_type)
            .subquery()
        )
        columns.append(
            select(json_list_text(dialect, per_type.c.type, per_type.c.meetings))
            .select_from(per_type)
            .scalar_subquery()
        )
    return (
        select(*columns)
        .select_from(select(literal(1).label("one")).subquery())
        .outerjoin(LevelSetting, LevelSetting.student_id == _STUDENT)
    )


# _level_rows_select per (dialect, with meetings), built once.
_level_rows_selects: dict[tuple[str, bool], Select[Any]] = {}


async def level_rows(
    session: AsyncSession, student_id: int, *, with_meetings: bool = False
) -> tuple[dict[str, LevelSetting], int, Counter[str]]:
    """The student's level rows by level, how many class meetings have settings of their own, and
    (``with_meetings``; else empty) how many class meetings of each kind the student's schedule
    has: what a change of a level shows, in one statement."""
    key = (session.get_bind().dialect.name, with_meetings)
    statement = _level_rows_selects.get(key)
    if statement is None:
        statement = _level_rows_selects[key] = _level_rows_select(*key)
    levels: dict[str, LevelSetting] = {}
    own, meetings = 0, Counter[str]()
    for found in await session.execute(statement, {"student_id": student_id}):
        row, own = found[0], int(found[1] or 0)
        if row is not None:
            levels[row.level] = row
        if with_meetings:
            meetings = Counter[str]()
            for schedule_type, count in json.loads(found[2] or "[]"):
                meetings[kind_of(schedule_type)] += int(count)
    return levels, own, meetings


async def category_colors(session: AsyncSession, student_id: int) -> list[LevelSetting]:
    """The university event categories with a color of their own."""
    rows = await session.scalars(
        select(LevelSetting).where(
            LevelSetting.student_id == student_id,
            LevelSetting.level.like(f"{UNIVERSITY}:%"),
            LevelSetting.color.is_not(None),
        )
    )
    return list(rows.all())


class _Unread:
    """No row handed in: the save reads it."""


UNREAD = _Unread()


async def _save(
    sessions: async_sessionmaker[AsyncSession],
    model: type[Row],
    read: Callable[[AsyncSession], Awaitable[Row | None]],
    make: Callable[[], Row],
    change: SettingChange,
    also: Callable[[AsyncSession], Awaitable[None]] | None = None,
    known: Row | _Unread | None = UNREAD,
) -> tuple[SaveResult, Row | None]:
    """The save (see the module's words). ``known``: the row as the caller just read it (a plan:
    None for no row), the first attempt's reading; the write checks its version as it checks its
    own read's, and a row that moved meanwhile is read again. The saved row is answered as written
    (no read after the commit)."""
    for _attempt in range(ATTEMPTS):
        async with sessions() as session:
            if isinstance(known, _Unread):
                row = await read(session)
            else:
                row, known = known, UNREAD
            old = row_fields(row)
            new = change.apply(old)
            if new == old:
                if also is not None:
                    await also(session)
                    await session.commit()
                return "unchanged", row
            result: SaveResult
            saved: Row | None = None
            try:
                if row is None:
                    saved = make()
                    for field, value in new.items():
                        setattr(saved, field, value)
                    saved.version, saved.updated_at = 1, utcnow()
                    session.add(saved)
                    await session.flush()
                    result = "created"
                elif empty(new):
                    done = await session.execute(delete(model).where(model.id == row.id, model.version == row.version))
                    if done.rowcount != 1:  # type: ignore[attr-defined]
                        await session.rollback()
                        continue
                    result = "deleted"
                else:
                    now = utcnow()
                    done = await session.execute(
                        update(model)
                        .where(model.id == row.id, model.version == row.version)
                        .values(**new, version=row.version + 1, updated_at=now)
                    )
                    if done.rowcount != 1:  # type: ignore[attr-defined]
                        await session.rollback()
                        continue
                    # The row as written: a new object of no session (the read row may be another's).
                    saved = make()
                    for field, value in new.items():
                        setattr(saved, field, value)
                    saved.id, saved.version, saved.updated_at = row.id, row.version + 1, now
                    result = "updated"
                if also is not None:
                    await also(session)
                await session.commit()
            except IntegrityError:
                # Another client created the row between our read and our insert: merge into theirs.
                await session.rollback()
                continue
        return result, saved
    raise CampusError(BUSY)


async def save_class_setting(
    sessions: async_sessionmaker[AsyncSession], student_id: int, meeting_time_id: int, change: SettingChange
) -> tuple[SaveResult, ClassSetting | None]:
    return await _save(
        sessions,
        ClassSetting,
        lambda session: class_row(session, student_id, meeting_time_id),
        lambda: ClassSetting(student_id=student_id, meeting_time_id=meeting_time_id),
        change,
    )


async def clear_category_colors(session: AsyncSession, student_id: int) -> None:
    """Seed 000 ``clear_category_colors``: a university color save removes the categories' colors
    (a category row left with nothing set goes)."""
    for row in await category_colors(session, student_id):
        fields = row_fields(row) | {"color": None}
        if empty(fields):
            await session.delete(row)
        else:
            row.color, row.version, row.updated_at = None, row.version + 1, utcnow()
    await session.flush()


async def save_level_setting(
    sessions: async_sessionmaker[AsyncSession],
    student_id: int,
    level: str,
    change: SettingChange,
    *,
    read: LevelSetting | _Unread | None = UNREAD,
) -> tuple[SaveResult, LevelSetting | None]:
    """``read``: the level's row as the caller just read it (None: it had none)."""
    clears = level == UNIVERSITY and "color" in change.values

    async def also(session: AsyncSession) -> None:
        await clear_category_colors(session, student_id)

    return await _save(
        sessions,
        LevelSetting,
        lambda session: level_row(session, student_id, level),
        lambda: LevelSetting(student_id=student_id, level=level),
        change,
        also if clears else None,
        read,
    )


_NOTIFICATIONS = select(NotificationSetting).where(NotificationSetting.student_id == _STUDENT)


async def notification_row(session: AsyncSession, student_id: int) -> NotificationSetting | None:
    # A statement built once, not session.get's: the same one read, without building it per call.
    found: NotificationSetting | None = await session.scalar(_NOTIFICATIONS, {"student_id": student_id})
    return found


async def save_notifications(
    sessions: async_sessionmaker[AsyncSession], student_id: int, paused: bool, paused_until: Any
) -> Literal["updated", "unchanged"]:
    for _attempt in range(ATTEMPTS):
        async with sessions() as session:
            row = await notification_row(session, student_id)
            current = (row.paused, row.paused_until) if row is not None else (False, None)
            if current == (paused, paused_until):
                return "unchanged"
            try:
                if row is None:
                    session.add(
                        NotificationSetting(
                            student_id=student_id,
                            paused=paused,
                            paused_until=paused_until,
                            version=1,
                            updated_at=utcnow(),
                        )
                    )
                else:
                    done = await session.execute(
                        update(NotificationSetting)
                        .where(NotificationSetting.student_id == student_id, NotificationSetting.version == row.version)
                        .values(paused=paused, paused_until=paused_until, version=row.version + 1, updated_at=utcnow())
                    )
                    if done.rowcount != 1:  # type: ignore[attr-defined]
                        await session.rollback()
                        continue
                await session.commit()
            except IntegrityError:
                await session.rollback()
                continue
            return "updated"
    raise CampusError(BUSY)
