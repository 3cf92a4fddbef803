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
