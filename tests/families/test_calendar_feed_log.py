"""The feed's secret never reaches the access log (issue 12, point 7).

With ``CAMPUS_MCP_ACCESS_LOG=true``, ``campus-mcp serve`` runs uvicorn with its access log on,
which logs each request's path. This runs the campus app under a real uvicorn server configured the same way,
reads the feed over loopback, and reads what uvicorn's access logger passed to its handlers.
"""

from __future__ import annotations

import asyncio
import logging

import httpx
import uvicorn
from campus_mcp.testing import CampusFactory, free_port
from campus_settings.feed import tokens
from sqlalchemy import text


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def test_the_access_log_of_serve_never_prints_the_feed_token(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=["catalog", "schedule", "settings"])
    async with campus.sessions() as session:
        await session.execute(
            text(
                "INSERT INTO students (username, display_name, email, is_demo, created_at, session_generation) "
                "VALUES ('student1', 'Student 1', 's1@example.edu', true, CURRENT_TIMESTAMP, 0)"
            )
        )
        student = int((await session.execute(text("SELECT id FROM students"))).scalar_one())
        token = await tokens.issue(session, student)
        await session.commit()
    port = free_port()
    # As campus-mcp serve configures it with the access log on: uvicorn's own logging config.
    config = uvicorn.Config(campus.app, host="127.0.0.1", port=port, log_level="info", lifespan="on")
    seen = Lines()
    access = logging.getLogger("uvicorn.access")
    access.addHandler(seen)
    server = uvicorn.Server(config)
    running = asyncio.create_task(server.serve())
    try:
        for _ in range(200):  # uvicorn has no start-up event to await; 10 s at most
            if server.started:
                break
            await asyncio.sleep(0.05)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            good = await client.get(f"/calendar/{token}.ics")
            old = await client.get(f"/calendar/{token[::-1]}.ics?x=1")
        assert good.status_code == 200 and old.status_code == 404
    finally:
        server.should_exit = True
        await running
        access.removeHandler(seen)
    feed_lines = [line for line in seen.lines if "/calendar/" in line]
    # The capture works: both requests were logged, with the path's secret part replaced.
    assert len(feed_lines) == 2, seen.lines
    assert all("/calendar/[secret].ics" in line for line in feed_lines)
    assert not any(token in line or token[::-1] in line for line in seen.lines)
