"""Issue 30, point 3 and 4: the edges an adversarial test found answering a server error, a
phishing aid or a hint, each probed as a student (signed in on the dashboard, or over the REST
routes with that session) would.

- Dates far out (9999-12-31, 0001-01-01) on the friend week page and both busy-times routes were
  500s; they are 400s naming the range the service answers for.
"""

from __future__ import annotations

from typing import Any

import pytest
from campus_mcp.testing import CampusFactory, StudentBrowser
from sqlalchemy import text

RANGE = "1900-01-01 to 2199-12-31"


@pytest.mark.parametrize(
    "path",
    [
        "/dashboard/friends/2?week_start=9999-12-31",
        "/dashboard/friends/2?week_start=0001-01-01",
        "/dashboard/friends/2?week_start=2199-12-31",
        "/api/v1/me/busy_times?start_date=9999-12-25&end_date=9999-12-31",
        "/api/v1/me/friends/2/busy_times?start_date=9999-12-25&end_date=9999-12-31",
        "/api/v1/me/busy_times?start_date=0001-01-01&end_date=0001-01-03",
    ],
)
async def test_a_day_outside_the_calendar_is_a_400_naming_the_range(campus_factory: CampusFactory, path: str) -> None:
    campus = await campus_factory(demo=True)
    async with campus.rest() as client:
        browser = await StudentBrowser(client).sign_in("student1")
        answer = await browser.get(path)
    assert answer.status_code == 400, answer.text
    assert RANGE in answer.text and "Traceback" not in answer.text


async def test_the_tools_name_the_range_too(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=True)
    principal = await campus.student_principal("student1")
    far = {"start_date": "9999-12-25", "end_date": "9999-12-31"}
    calls: list[tuple[str, dict[str, Any]]] = [("my_busy_times", far), ("friend_busy_times", {"friend_id": 2, **far})]
    for tool, arguments in calls:
        result = await campus.call(tool, arguments, principal=principal)
        assert result.is_error
        assert RANGE in result.content[0].text  # type: ignore[union-attr]


PHISH = "your account is locked, call +1 555 0100 now"


async def test_a_disconnected_link_shows_only_a_name_of_the_students_own(campus_factory: CampusFactory) -> None:
    # The notice printed whatever ?disconnected= carried (escaped, but a phishing aid).
    campus = await campus_factory(demo=True)
    async with campus.rest() as client:
        other = await StudentBrowser(client).sign_in("student2")
        page = await other.get("/dashboard/tokens")
        csrf = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
        await other.post("/dashboard/tokens", data={"csrf_token": csrf, "name": "their script", "expiry_days": "30"})
        async with campus.sessions() as session:
            theirs = await session.scalar(text("SELECT public_id FROM personal_tokens WHERE name = 'their script'"))
        student = await StudentBrowser(client).sign_in("student1")
        for path in ("/dashboard/tokens", "/dashboard/settings"):
            for forged in (PHISH, "test-client", theirs):
                shown = await student.get(path, params={"disconnected": forged})
                assert shown.status_code == 200
                assert "Disconnected" not in shown.text and PHISH not in shown.text and "their script" not in shown.text
        # The student's own revoked token is named, on both pages.
        page = await student.get("/dashboard/tokens")
        csrf = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
        await student.post("/dashboard/tokens", data={"csrf_token": csrf, "name": "my script", "expiry_days": "30"})
        async with campus.sessions() as session:
            mine = await session.scalar(text("SELECT public_id FROM personal_tokens WHERE name = 'my script'"))
        page = await student.get("/dashboard/tokens")
        gone = await student.post(
            "/dashboard/tokens/revoke", data={"csrf_token": csrf, "token_id": mine}, follow_redirects=False
        )
        assert gone.status_code == 303 and gone.headers["location"] == f"/dashboard/tokens?disconnected={mine}"
        for path in ("/dashboard/tokens", "/dashboard/settings"):
            shown = await student.get(path, params={"disconnected": mine})
            assert "Disconnected my script." in shown.text


async def test_a_friend_request_answers_the_same_whether_the_username_exists(campus_factory: CampusFactory) -> None:
    # The form said "There is no student with the username ..." and so listed who studies here.
    campus = await campus_factory(demo=True)
    async with campus.rest() as client:
        five = await StudentBrowser(client).sign_in("student5")

        async def ask(username: str) -> tuple[int, str]:
            page = await five.get("/dashboard/friends")
            csrf = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
            answer = await five.post("/dashboard/friends/requests", data={"csrf_token": csrf, "friend": username})
            notice = (
                answer.text.split('role="status">', 1)[1].split("<", 1)[0] if 'role="status">' in answer.text else ""
            )
            return answer.status_code, notice

        real, unknown = await ask("student4"), await ask("nobody-here")
        again = await ask("student4")  # a second try answered "you already asked" for a real name only
    assert (
        real
        == unknown
        == again
        == (
            200,
            "Request sent if that friend code (or username) belongs to a student: they see it on their Friends page.",
        )
    )
