"""The demo campus's dining halls: the packaged demo feed, stored the way the refresh job stores it."""

from __future__ import annotations

import asyncio
import json

from sqlalchemy.ext.asyncio import AsyncSession

from campus_dining.feed import parse_feed, store_halls
from campus_dining.settings import DEMO_FEED


async def load_demo_halls(session: AsyncSession, scale: int) -> None:
    # ``scale`` multiplies students and sections for benchmarks; a campus has the same few halls.
    raw = json.loads(await asyncio.to_thread(DEMO_FEED.read_text, encoding="utf-8"))
    halls, lost = parse_feed(raw)
    if lost:
        raise RuntimeError(f"the packaged demo dining feed is broken: {lost}")
    await store_halls(session, halls)
