"""The access log of student data (issue 28, points 2-4), through every door a real app uses.

On a demo campus served on loopback: an OAuth app (the token ``campus-mcp token`` prints) calls a
student tool with the real SDK client on ``/api/mcp`` and through the toolbox proxy, a personal
access token reads the REST twin, and a calendar app fetches the feed. Each appears in student1's
Recent activity page and in ``campus-mcp audit`` (a real subprocess), with the app's name, and
never in student2's; a public catalog call is not a student's data and is not recorded; nothing of
the arguments is stored. A call over ``campus-mcp stdio`` is recorded with the token's name. The export (dashboard download and ``campus-mcp export``, the same
document) holds the student's data and activity without any secret. Old entries are deleted by the prune job.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import httpx2
from campus_mcp.accounts import Student, create_local_student, student_by_username
from campus_mcp.db import utcnow
from campus_mcp.oauth.personal_tokens import PersonalTokens
from campus_mcp.oauth.testkit import free_port, parse_forms, serve_on_loopback
from campus_mcp.student_access import PRUNE_JOB_ID, AccessLog, StudentAccess, entries
from campus_mcp.testing import CampusFactory
from campus_mcp.testing_browser import StudentBrowser
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy import delete, select, text

CLI = Path(sys.executable).parent / "campus-mcp"
PERSONAL_TOKEN = re.compile(r"cmcp_pat_[0-9a-f]{12}_[A-Za-z0-9_-]{43}")
FEED_PATH = re.compile(r"/calendar/[A-Za-z0-9_-]{43}\.ics")
TOKEN_NAME = "Grade script"


async def campus_mcp(tmp_path: Path, *args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    """The real command, as an operator runs it, on the test campus's database."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAMPUS_MCP_")}
    env.update(
        {
            "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
            "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
            **{f"CAMPUS_MCP_{key.upper()}": value for key, value in settings.items()},
        }
    )
    return await asyncio.to_thread(
        subprocess.run, [str(CLI), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def hidden_fields(html: str, action: str) -> dict[str, str]:
    form = next(form for form in parse_forms(html) if form.action == action)
    return {field.name: field.value for field in form.fields if field.kind == "hidden"}


async def make_personal_token(browser: StudentBrowser) -> str:
    page = await browser.get("/dashboard/tokens")
    data = hidden_fields(page.text, "/dashboard/tokens")
    made = await browser.post(
        "/dashboard/tokens", data=data | {"name": TOKEN_NAME, "expiry_days": "30", "scope_choice": ["schedule:read"]}
    )
    assert made.status_code == 303, made.text
    (token,) = set(PERSONAL_TOKEN.findall((await browser.get("/dashboard/tokens")).text))
    return token


async def turn_on_feed(browser: StudentBrowser) -> str:
    action = "/dashboard/calendar-feed/regenerate"
    page = await browser.get("/dashboard/calendar-feed")
    made = await browser.post(action, data=hidden_fields(page.text, action), follow_redirects=True)
    (path,) = set(FEED_PATH.findall(made.text))
    return path


async def call_tools(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as client,  # type: ignore[arg-type]
    ):
        return [await client.call_tool(name, arguments) for name, arguments in calls]


def activity_rows(html: str) -> list[list[str]]:
    """The Recent activity table as the student reads it: When, What, App, Result."""
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
    cells = [[re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)] for row in rows]
    return [row for row in cells if row]  # not the header row


async def test_a_tool_call_a_rest_call_and_a_feed_fetch_reach_the_student_and_the_audit_only(
    campus_factory: CampusFactory, tmp_path: Path
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    campus = await campus_factory(demo=True, anonymous_access=False, public_url=base)
    database_url = campus.settings.database_url
    made = await campus_mcp(
        tmp_path,
        "token",
        "--student",
        "student1",
        "--scopes",
        "schedule:read",
        database_url=database_url,
        public_url=base,
    )
    assert made.returncode == 0, made.stderr
    app_token = made.stdout.strip()

    async with serve_on_loopback(campus.app, port), httpx.AsyncClient(base_url=base, timeout=60) as http:
        student1 = await StudentBrowser(http).sign_in("student1")
        personal = await make_personal_token(student1)
        feed_path = await turn_on_feed(student1)

        # The doors: a tool on /api/mcp (and a public catalog tool, not a student's data), the
        # toolbox proxy, the REST twin with the personal token, the feed as a calendar app reads it.
        courses, terms = await call_tools(f"{base}/api/mcp", app_token, [("my_courses", {}), ("list_terms", {})])
        assert not courses.is_error and not terms.is_error
        (proxied,) = await call_tools(
            f"{base}/api/mcp/toolboxes", app_token, [("call_read_only", {"name": "my_finals", "arguments": {}})]
        )
        assert not proxied.is_error, proxied.content
        rest = await http.get("/api/v1/me/courses", headers={"Authorization": f"Bearer {personal}"})
        assert rest.status_code == 200, rest.text
        feed = await httpx.AsyncClient(base_url=base).get(feed_path)
        assert feed.status_code == 200

        page = await student1.get("/dashboard/activity")
        assert page.status_code == 200
        rows = activity_rows(page.text)
        seen = {(what, app, result) for _when, what, app, result in rows}
        assert seen == {
            ("Read: My courses", "campus-mcp cli", "Done"),
            ("Read: My finals", "campus-mcp cli", "Done"),
            ("Read: My courses", TOKEN_NAME, "Done"),
            ("Read: your calendar (the feed)", "calendar feed", "Done"),
        }, rows
        assert len(rows) == 4  # list_terms (the public catalog) is not recorded
        assert "Recent activity" in page.text and 'href="/dashboard/activity/export"' in page.text

        settings = (await student1.get("/dashboard/settings")).text
        # Each app, token and the feed says when it last read; Disconnect is still one button.
        assert settings.count("Last read your data") == 3, settings
        assert 'aria-label="Disconnect campus-mcp cli"' in settings

        download = await student1.get("/dashboard/activity/export")
        assert download.status_code == 200 and "attachment" in download.headers["content-disposition"]
        downloaded = document = download.json()
        assert document["student"]["username"] == "student1" and len(document["activity"]) == 4
        assert document["data"]["sections"] and document["data"]["calendar_feed"]["on"] is True
        assert [t["name"] for t in document["personal_access_tokens"]] == [TOKEN_NAME]
        assert personal not in download.text and app_token not in download.text and feed_path not in download.text

        student2 = await StudentBrowser(http).sign_in("student2")
        other = await student2.get("/dashboard/activity")
        assert activity_rows(other.text) == [] and "No app has read or changed your data" in other.text
        assert (await student2.get("/dashboard/activity/export")).json()["activity"] == []

    async with campus.sessions() as session:
        stored = list(await session.scalars(select(StudentAccess)))
    assert {(row.door, row.action) for row in stored} == {
        ("/api/mcp", "my_courses"),
        ("/api/mcp/toolboxes", "my_finals"),
        ("GET /api/v1/me/courses", "my_courses"),
        ("GET /calendar/<feed>.ics", "calendar_feed"),
    }
    assert {row.student_id for row in stored} == {1}

    audit = await campus_mcp(tmp_path, "audit", "--student", "student1", "--format", "csv", database_url=database_url)
    assert audit.returncode == 0, audit.stderr
    lines = list(csv.DictReader(io.StringIO(audit.stdout)))
    assert {(line["app_name"], line["action"], line["student"]) for line in lines} == {
        ("campus-mcp cli", "my_courses", "student1"),
        ("campus-mcp cli", "my_finals", "student1"),
        (TOKEN_NAME, "my_courses", "student1"),
        ("calendar feed", "calendar_feed", "student1"),
    }
    nobody = await campus_mcp(tmp_path, "audit", "--student", "student2", "--format", "csv", database_url=database_url)
    assert nobody.returncode == 0 and nobody.stdout.strip().splitlines() == [
        "at,student,app_name,app_kind,app_id,door,action,outcome"
    ]
    by_app = await campus_mcp(tmp_path, "audit", "--app", TOKEN_NAME, database_url=database_url)
    assert (
        by_app.returncode == 0
        and len(by_app.stdout.strip().splitlines()) == 1
        and "GET /api/v1/me/courses" in by_app.stdout
    )
    future = await campus_mcp(
        tmp_path, "audit", "--student", "student1", "--since", "2999-01-01", database_url=database_url
    )
    assert future.returncode == 0 and future.stdout == ""

    exported = await campus_mcp(tmp_path, "export", "--student", "student1", database_url=database_url)
    assert exported.returncode == 0, exported.stderr
    document = json.loads(exported.stdout)
    assert len(document["activity"]) == 4 and document["data"]["friends"]
    # The student's download is the same document as the privacy office's export.
    assert {**document, "exported_at": ""} == {**downloaded, "exported_at": ""}
    assert personal not in exported.stdout and app_token not in exported.stdout


async def test_audit_names_what_was_wrong(campus_factory: CampusFactory, tmp_path: Path) -> None:
    campus = await campus_factory(demo=True)
    url = campus.settings.database_url
    unknown = await campus_mcp(tmp_path, "audit", "--student", "nobody", database_url=url)
    assert unknown.returncode == 1 and "campus-mcp students list" in unknown.stderr
    neither = await campus_mcp(tmp_path, "audit", database_url=url)
    assert neither.returncode == 2 and "--student ID or --app CLIENT" in neither.stderr
    bad_day = await campus_mcp(tmp_path, "audit", "--student", "student1", "--since", "yesterday", database_url=url)
    assert bad_day.returncode == 2 and "YYYY-MM-DD" in bad_day.stderr


async def test_the_prune_job_deletes_entries_older_than_the_kept_days(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=True, student_access_days=30)
    now = utcnow()
    async with campus.sessions() as session:
        for age in (31, 29):
            session.add(
                StudentAccess(
                    at=now - timedelta(days=age),
                    student_id=1,
                    app_kind="oauth",
                    app_id="app",
                    app_name="App",
                    door="/api/mcp",
                    action="my_courses",
                    outcome="ok",
                )
            )
        await session.commit()
    run = await campus.run_job(PRUNE_JOB_ID)
    assert run.outcome == "ok" and run.items == 1
    async with campus.sessions() as session:
        kept = list(await session.scalars(select(StudentAccess.at)))
    assert len(kept) == 1 and kept[0] > now - timedelta(days=30)


async def test_a_call_over_stdio_is_recorded_with_the_token_name(campus_factory: CampusFactory, tmp_path: Path) -> None:
    campus = await campus_factory(demo=True, anonymous_access=False)
    tokens = PersonalTokens(campus.sessions, campus.settings)
    token = await tokens.create(1, name="Claude Desktop", scope="settings:read", days=7)
    env = {
        "CAMPUS_MCP_DATABASE_URL": campus.settings.database_url,
        "CAMPUS_MCP_SCHEDULER": "false",
        "CAMPUS_MCP_SECRET_KEY": campus.settings.secret_key.get_secret_value(),
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        "CAMPUS_MCP_TOKEN": token,
    }
    async with Client(StdioServerParameters(command=str(CLI), args=["stdio", "--no-prepare"], env=env)) as client:
        assert not (await client.call_tool("my_calendar_settings", {})).is_error
        assert not (await client.call_tool("list_terms", {})).is_error  # the public catalog: not recorded
    # The process wrote its queue as it stopped (AccessLog.close).
    async with campus.sessions() as session:
        stored = list(await session.scalars(select(StudentAccess)))
    assert [(r.student_id, r.app_kind, r.app_name, r.door, r.action, r.outcome) for r in stored] == [
        (1, "token", "Claude Desktop", "stdio", "my_calendar_settings", "ok")
    ]


async def test_entries_of_a_removed_student_are_dropped_and_the_rest_written(
    campus_factory: CampusFactory, tmp_path: Path
) -> None:
    """A student deleted while their entries waited: the batch's insert would fail on the foreign
    key every second for ever, and every other student's entries with it."""
    campus = await campus_factory(demo=True)
    log = AccessLog(campus.sessions, tmp_path / "journal")
    async with campus.sessions() as session:
        leaving = (await create_local_student(session, "leaving", "a long enough password")).id
        staying = (await student_by_username(session, "student1")).id  # type: ignore[union-attr]
        await session.commit()
    for student in (leaving, staying, leaving):
        log.record(student, app_kind="feed", app_id="feed", door="feed", action="calendar feed", outcome="ok")
    async with campus.sessions() as session:
        await session.execute(delete(Student).where(Student.id == leaving))
        await session.commit()
    assert await log.write_pending() == 1
    assert await log.write_pending() == 0  # nothing left waiting to be tried again
    async with campus.sessions() as session:
        written = (await session.execute(select(StudentAccess.student_id, StudentAccess.action))).all()
    assert written == [(staying, "calendar feed")]
    await log.close()


async def test_a_reader_sees_the_entries_the_writer_is_writing(campus_factory: CampusFactory, tmp_path: Path) -> None:
    # The writer task takes the queue, then waits on the database; a page read meanwhile must wait
    # for that batch, not find an empty queue and show the student a log without their last call.
    campus = await campus_factory(demo=True)
    access_log = AccessLog(campus.sessions, tmp_path / "journal")
    access_log.record(1, app_kind="feed", app_id="calendar-feed", door="feed", action="calendar_feed", outcome="ok")
    async with campus.sessions() as blocker:
        # Another transaction holds the table, so the writer's insert waits (as on a busy database).
        if campus.settings.database_url.startswith("postgresql"):
            await blocker.execute(text("LOCK TABLE student_access IN EXCLUSIVE MODE"))
        else:
            await blocker.execute(text("DELETE FROM student_access WHERE id < 0"))  # SQLite's write lock
        under_way = asyncio.create_task(access_log.write_pending())
        await asyncio.sleep(0.2)  # the task has taken the queue and waits on the database
        reader = asyncio.create_task(access_log.write_pending())  # what Recent activity and the export do first
        await asyncio.sleep(0.2)
        assert not reader.done(), "the reader did not wait for the batch under way"
        await blocker.rollback()
    assert await under_way == 1 and await reader == 0
    async with campus.sessions() as session:
        seen = await entries(session, student_id=1)
    assert [(entry.app_name, entry.action) for entry in seen] == [("calendar feed", "calendar_feed")]
    await access_log.close()
