"""The Calendar settings and Notifications pages (issue 12, point 8) over real HTTP.

A visitor is sent to sign in; every form refuses a post without the session's CSRF token and
changes nothing; a level change and a class meeting's change land and show; the Preview button
renders a template and refuses a hostile one with the names allowed; the Notifications page
pauses and resumes and says the pause in the campus's time zone; every page link the settings
tools return opens for the student and shows another student none of the first's settings.
"""

from __future__ import annotations

from datetime import datetime
from html import unescape
from html.parser import HTMLParser
from typing import Any, Literal
from zoneinfo import ZoneInfo

import mcp_types as types
import pytest
from campus_mcp.testing import CampusFactory, CampusHarness, StudentBrowser
from campus_settings.demo import first_meeting_id
from campus_settings.models import ClassSetting, LevelSetting, NotificationSetting
from sqlalchemy import func, select

SETTINGS = "/dashboard/calendar-settings"
CLASSES = f"{SETTINGS}/classes"
NOTIFICATIONS = "/dashboard/notifications"
MODERN = "2026-07-28"
DEMO_TITLE = "{{course_code}} {{type}} in {{room}}"  # student1's all_classes title template (demo)


class _Forms(HTMLParser):
    """Each form of a page: its action and its fields (inputs, with the value a browser sends)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.forms.append((found.get("action", ""), {}))
        elif tag == "input" and self.forms and "name" in found:
            self.forms[-1][1][found["name"]] = found.get("value", "")


def forms(html: str, action: str) -> list[dict[str, str]]:
    parser = _Forms()
    parser.feed(html)
    return [fields for target, fields in parser.forms if target == action]


class Browser(StudentBrowser):
    """A student's browser (the kit's) that also finds a form of a page."""

    async def form(self, page: str, action: str, match: dict[str, str] | None = None) -> dict[str, str]:
        """The fields of the form posting to ``action`` on ``page`` (the one whose fields include ``match``)."""
        found = [f for f in forms((await self.get(page)).text, action) if (match or {}).items() <= f.items()]
        assert found, (page, action, match)
        return found[0]


def answering(action: Literal["accept", "decline"]) -> Any:
    async def callback(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action=action, content={"confirm": True} if action == "accept" else None)

    return callback


@pytest.fixture
async def campus(campus_factory: CampusFactory) -> CampusHarness:
    return await campus_factory(demo=True)


async def _tool(campus: CampusHarness, username: str, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    principal = await campus.student_principal(username)
    async with campus.mcp(principal=principal, mode=MODERN, elicitation_callback=answering("accept")) as client:
        return await client.call_tool(tool, arguments or {})


async def _settings_rows(campus: CampusHarness) -> tuple[Any, ...]:
    """Every stored settings row, to show a refused post changed nothing."""
    async with campus.sessions() as session:
        out: list[Any] = []
        for model in (LevelSetting, ClassSetting, NotificationSetting):
            rows = await session.scalars(select(model))
            out.append(sorted(repr({c.key: getattr(r, c.key) for c in model.__table__.columns}) for r in rows))
        return tuple(out)


async def _student1_meeting(campus: CampusHarness) -> int:
    principal = await campus.student_principal("student1")
    async with campus.sessions() as session:
        meeting = await first_meeting_id(session, principal.user_id or 0)
    assert meeting is not None
    return meeting


async def test_a_visitor_is_sent_to_sign_in_and_can_change_nothing(campus: CampusHarness) -> None:
    before = await _settings_rows(campus)
    async with campus.rest() as client:
        for page in (SETTINGS, NOTIFICATIONS):
            got = await client.get(page, follow_redirects=False)
            assert (
                got.status_code in (302, 303) and got.headers["location"] == f"/login?next={page.replace('/', '%2F')}"
            )
        for action, data in (
            (SETTINGS, {"level": "all_classes", "color": "grape", "action": "save"}),
            (CLASSES, {"meeting_time_id": "1", "color": "grape", "action": "save"}),
            (NOTIFICATIONS, {"paused": "true"}),
        ):
            posted = await client.post(action, data=data, follow_redirects=False)
            assert posted.status_code in (302, 303) and posted.headers["location"].startswith("/login?next="), action
    assert await _settings_rows(campus) == before


async def test_every_form_refuses_a_post_without_the_csrf_token(campus: CampusHarness) -> None:
    meeting = await _student1_meeting(campus)
    async with campus.rest() as client:
        student = await Browser(client).sign_in("student1")
        posts = [
            (SETTINGS, await student.form(SETTINGS, SETTINGS, {"level": "all_classes"}), {"color": "grape"}),
            (SETTINGS, await student.form(SETTINGS, SETTINGS, {"level": "all_classes"}), {"action": "preview"}),
            (CLASSES, await student.form(SETTINGS, CLASSES, {"meeting_time_id": str(meeting)}), {"color": "grape"}),
            (CLASSES, await student.form(SETTINGS, CLASSES, {"meeting_time_id": str(meeting)}), {"action": "reset"}),
            (NOTIFICATIONS, await student.form(NOTIFICATIONS, NOTIFICATIONS), {"paused": "true"}),
        ]
        before = await _settings_rows(campus)
        for action, fields, change in posts:
            assert fields.get("csrf_token"), action  # the page's own form carries it
            for token in ({}, {"csrf_token": "forged"}):
                data = {k: v for k, v in fields.items() if k != "csrf_token"} | change | token
                refused = await student.post(action, data=data)
                assert refused.status_code == 403, (action, token, refused.status_code)
                assert "The form expired. Reload the page and try again." in refused.text
    assert await _settings_rows(campus) == before


async def test_a_level_change_on_the_page_lands_and_shows(campus: CampusHarness) -> None:
    async with campus.rest() as client:
        student = await Browser(client).sign_in("student1")
        fields = await student.form(SETTINGS, SETTINGS, {"level": "final_exam"})
        saved = await student.post(
            SETTINGS,
            data=fields | {"color": "grape", "reminders": "30, 1440", "title_template": "Final: {{course_code}}"},
            follow_redirects=False,
        )
        assert saved.status_code == 303 and saved.headers["location"] == f"{SETTINGS}?notice=saved"
        page = await student.get(saved.headers["location"])
        assert "Saved. Your calendar sync picks the change up." in page.text
        shown = await student.form(SETTINGS, SETTINGS, {"level": "final_exam"})
        assert (shown["color"], shown["reminders"], shown["title_template"]) == (
            "grape",
            "30, 1440",
            "Final: {{course_code}}",
        )
        bad = await student.post(SETTINGS, data=fields | {"color": "chartreuse-ish"})
        assert bad.status_code == 400 and "chartreuse-ish" in unescape(bad.text) and "Traceback" not in bad.text
    answer = (await _tool(campus, "student1", "my_calendar_settings")).structured_content
    (final,) = [lv for lv in answer["levels"] if lv["level"] == "final_exam"]
    assert (final["settings"]["color"], final["settings"]["reminders"]) == ("grape", [30, 1440])
    assert final["settings"]["title_template"] == "Final: {{course_code}}"


async def test_preview_shows_the_rendered_template_and_refuses_a_hostile_one(campus: CampusHarness) -> None:
    before = await _settings_rows(campus)
    expected = await _tool(campus, "student1", "preview_template", {"title_template": "{{crn}} at {{start_time}}"})
    title = expected.structured_content["preview"]["title"]
    async with campus.rest() as client:
        student = await Browser(client).sign_in("student1")
        fields = await student.form(SETTINGS, SETTINGS, {"level": "all_classes"})
        shown = await student.post(
            SETTINGS, data=fields | {"title_template": "{{crn}} at {{start_time}}", "action": "preview"}
        )
        assert shown.status_code == 200
        assert f"Title: <strong>{title}</strong>" in unescape(shown.text)
        assert "Nothing is saved until you select Save." in shown.text
        hostile = await student.post(
            SETTINGS, data=fields | {"title_template": "{{title.__class__.__mro__}}", "action": "preview"}
        )
        assert hostile.status_code == 400 and "{{course_code}}" in unescape(hostile.text)
        assert "Preview:" not in hostile.text and "Traceback" not in hostile.text
    assert await _settings_rows(campus) == before


async def test_the_notifications_page_pauses_and_resumes_in_the_campus_time_zone(campus: CampusHarness) -> None:
    zone = ZoneInfo(campus.settings.timezone)
    async with campus.rest() as client:
        student = await Browser(client).sign_in("student1")
        assert "Your reminders are on." in (await student.get(NOTIFICATIONS)).text
        fields = await student.form(NOTIFICATIONS, NOTIFICATIONS)
        paused = await student.post(NOTIFICATIONS, data=fields | {"paused": "true", "minutes": "90"})
        assert paused.status_code == 200 and "Saved." in paused.text
        async with campus.sessions() as session:
            row = await session.scalar(select(NotificationSetting))
        assert row is not None and row.paused and row.paused_until is not None
        local: datetime = row.paused_until.astimezone(zone)
        hour = local.strftime("%I").lstrip("0")
        said = f"Your reminders are paused until {local:%A, %B} {local.day}, {hour}:{local:%M %p} ({campus.settings.timezone} time)."
        assert said in unescape(paused.text), paused.text
        assert "UTC" not in paused.text
        resumed = await student.post(NOTIFICATIONS, data=fields | {"paused": "false"})
        assert resumed.status_code == 200 and "Your reminders are on." in resumed.text
        bad = await student.post(NOTIFICATIONS, data=fields | {"paused": "true", "minutes": "0"})
        assert bad.status_code == 400 and "whole minutes, 1 or more" in bad.text
    async with campus.sessions() as session:
        row = await session.scalar(select(NotificationSetting))
    assert row is not None and not row.paused


async def test_your_classes_lists_each_weekly_meeting_and_changes_or_resets_one(campus: CampusHarness) -> None:
    courses = (await _tool(campus, "student1", "my_courses")).structured_content
    meetings = [m["meeting_time_id"] for c in courses["courses"] for m in c["meetings"]]
    assert meetings
    chosen = meetings[-1]
    async with campus.rest() as client:
        student = await Browser(client).sign_in("student1")
        page = await student.get(SETTINGS)
        listed = [int(f["meeting_time_id"]) for f in forms(page.text, CLASSES)]
        assert set(meetings) <= set(listed), (meetings, listed)
        fields = await student.form(SETTINGS, CLASSES, {"meeting_time_id": str(chosen)})
        saved = await student.post(CLASSES, data=fields | {"color": "peacock", "reminders": "none"})
        assert saved.status_code == 200 and "Saved." in saved.text
        shown = await student.form(SETTINGS, CLASSES, {"meeting_time_id": str(chosen)})
        assert (shown["color"], shown["reminders"]) == ("peacock", "none")
        answer = (await _tool(campus, "student1", "my_calendar_settings")).structured_content
        (mine,) = [c for c in answer["classes"] if c["meeting"]["meeting_time_id"] == chosen]
        assert (mine["resolved"]["color"], mine["sources"]["color"]) == ("peacock", "individual")
        assert mine["resolved"]["reminders"] == []
        reset = await student.post(CLASSES, data=shown | {"action": "reset"})
        assert reset.status_code == 200
        answer = (await _tool(campus, "student1", "my_calendar_settings")).structured_content
        assert chosen not in [c["meeting"]["meeting_time_id"] for c in answer["classes"]]
        # Someone else's meeting is refused exactly like an id nobody has, and nothing changes.
        other = await campus.student_principal("student4")
        async with campus.sessions() as session:
            theirs = await first_meeting_id(session, other.user_id or 0)
        assert theirs is not None and theirs not in meetings
        before = await _settings_rows(campus)
        refusals = []
        for meeting in (theirs, 987654):
            refused = await student.post(CLASSES, data=fields | {"meeting_time_id": str(meeting), "color": "sage"})
            assert refused.status_code == 404, refused.status_code
            refusals.append(unescape(refused.text).replace(str(meeting), "N"))
        assert refusals[0] == refusals[1] and "is not one of your class meetings" in refusals[0]
    assert await _settings_rows(campus) == before


async def test_every_page_link_opens_for_the_student_and_shows_another_nothing(campus: CampusHarness) -> None:
    calls = [
        ("my_calendar_settings", {}),
        ("update_calendar_settings", {"level": "final_exam", "color": "flamingo"}),
        ("set_notifications", {"paused": True}),
    ]
    links: list[str] = []
    for tool, arguments in calls:
        result = await _tool(campus, "student1", tool, arguments)
        assert not result.is_error, (tool, result.content)
        found = [item for item in result.content if isinstance(item, types.ResourceLink)]
        assert len(found) == 1, tool
        links.append(str(found[0].uri).removeprefix(campus.settings.base_url))
    assert links == [SETTINGS, SETTINGS, NOTIFICATIONS]
    meeting = await _student1_meeting(campus)
    async with campus.rest() as client:
        mine = await Browser(client).sign_in("student1")
        theirs = await Browser(client).sign_in("student4")
        for path in links:
            own = await mine.get(path)
            assert own.status_code == 200, path
            other = await theirs.get(path)
            assert other.status_code == 200, path
            if path == SETTINGS:
                assert DEMO_TITLE in unescape(own.text) and 'value="flamingo"' in own.text
                for theirs_not in (DEMO_TITLE, 'value="flamingo"', 'value="tomato"', f'value="{meeting}"'):
                    assert theirs_not not in unescape(other.text), theirs_not
            else:
                assert "Your reminders are paused" in own.text
                assert "Your reminders are on." in other.text and "Your reminders are paused" not in other.text


async def test_the_pages_carry_the_hosts_security_headers(campus: CampusHarness) -> None:
    async with campus.rest() as client:
        student = await Browser(client).sign_in("student1")
        dashboard = await student.get("/dashboard")
        for path in (SETTINGS, NOTIFICATIONS):
            page = await student.get(path)
            assert page.status_code == 200
            for header in ("content-security-policy", "x-frame-options", "x-content-type-options", "referrer-policy"):
                assert page.headers.get(header) == dashboard.headers.get(header) is not None, (path, header)
            assert (
                "script-src" not in page.headers["content-security-policy"]
                or "'unsafe-inline'" not in (page.headers["content-security-policy"])
            )
            assert 'aria-current="page"' in page.text


async def test_no_row_is_left_half_written_by_a_refused_class_post(campus: CampusHarness) -> None:
    meeting = await _student1_meeting(campus)
    async with campus.rest() as client:
        student = await Browser(client).sign_in("student1")
        fields = await student.form(SETTINGS, CLASSES, {"meeting_time_id": str(meeting)})
        before = await _settings_rows(campus)
        bad = await student.post(CLASSES, data=fields | {"color": "sage", "title_template": "{{nope}}"})
        assert bad.status_code == 400 and "{{course_code}}" in unescape(bad.text)
    assert await _settings_rows(campus) == before
    async with campus.sessions() as session:
        assert await session.scalar(select(func.count()).select_from(ClassSetting)) == 1
