"""What the demo generator's steps share: the loader state and chunked Core inserts."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy import Table, insert
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.demo.courses import CourseKind

CHUNK = 5000


@dataclasses.dataclass
class DemoCourse:
    id: int
    code: str
    subject: str
    number: str
    title: str
    kind: CourseKind
    credits: float
    weight: int
    embedding: bytes


@dataclasses.dataclass
class DemoLoader:
    session: AsyncSession
    rng: random.Random
    scale: int
    today: date
    now: datetime
    courses: list[DemoCourse] = dataclasses.field(default_factory=list)
    instructors_by_subject: dict[str, list[int]] = dataclasses.field(default_factory=dict)
    taught: dict[int, set[int]] = dataclasses.field(default_factory=dict)
    section_id: int = 0
    meeting_id: int = 0

    async def insert(self, table: Table, rows: Sequence[dict[str, Any]]) -> None:
        for start in range(0, len(rows), CHUNK):
            await self.session.execute(insert(table), list(rows[start : start + CHUNK]))


def table(model: type[Any]) -> Table:
    table: Table = model.__table__
    return table
