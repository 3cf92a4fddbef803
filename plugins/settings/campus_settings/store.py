"""Reading and saving settings rows with no lost update (issue 12, point 6).

A save reads the row, merges the change into it and writes it only if the row's ``version`` is
still the one it read (``UPDATE ... WHERE version = :read``, the same on SQLite and PostgreSQL);
a row created by someone else in between fails the unique constraint. Either way the save reads
again and merges again, so two clients changing the same row at once both land, in some order,
and the row is never a mix of one client's read and another's write.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

from campus_mcp import CampusError, utcnow
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_settings.changes import SettingChange
from campus_settings.models import FIELDS, ClassSetting, LevelSetting, NotificationSetting
from campus_settings.resolver import UNIVERSITY, row_fields

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


async def _save(
    sessions: async_sessionmaker[AsyncSession],
    model: type[Row],
    read: Callable[[AsyncSession], Awaitable[Row | None]],
    make: Callable[[], Row],
    change: SettingChange,
    also: Callable[[AsyncSession], Awaitable[None]] | None = None,
) -> tuple[SaveResult, Row | None]:
    for _attempt in range(ATTEMPTS):
        async with sessions() as session:
            row = await read(session)
            old = row_fields(row)
            new = change.apply(old)
            if new == old:
                if also is not None:
                    await also(session)
                    await session.commit()
                return "unchanged", row
            result: SaveResult
            try:
                if row is None:
                    fresh = make()
                    for field, value in new.items():
                        setattr(fresh, field, value)
                    fresh.version, fresh.updated_at = 1, utcnow()
                    session.add(fresh)
                    await session.flush()
                    result = "created"
                elif empty(new):
                    done = await session.execute(delete(model).where(model.id == row.id, model.version == row.version))
                    if done.rowcount != 1:  # type: ignore[attr-defined]
                        await session.rollback()
                        continue
                    result = "deleted"
                else:
                    done = await session.execute(
                        update(model)
                        .where(model.id == row.id, model.version == row.version)
                        .values(**new, version=row.version + 1, updated_at=utcnow())
                    )
                    if done.rowcount != 1:  # type: ignore[attr-defined]
                        await session.rollback()
                        continue
                    result = "updated"
                if also is not None:
                    await also(session)
                await session.commit()
            except IntegrityError:
                # Another client created the row between our read and our insert: merge into theirs.
                await session.rollback()
                continue
        if result == "deleted":
            return result, None
        async with sessions() as session:
            return result, await read(session)
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
    sessions: async_sessionmaker[AsyncSession], student_id: int, level: str, change: SettingChange
) -> tuple[SaveResult, LevelSetting | None]:
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
    )


async def notification_row(session: AsyncSession, student_id: int) -> NotificationSetting | None:
    return await session.get(NotificationSetting, student_id)


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
